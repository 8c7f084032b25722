from mantra_env.schemas import EXPORTED, SCHEMA_DIR, schema_of, stale_schemas
from mantra_env.schemas.__main__ import main


def test_exported_schemas_are_up_to_date() -> None:
    assert stale_schemas() == [], "run `python -m mantra_env.schemas` and commit the files"


def test_schemas_are_versioned_and_name_their_record() -> None:
    for name in EXPORTED:
        schema = schema_of(name)
        assert schema["$id"] == f"mantra-env/{name}.v{2 if name == 'verdict' else 1}.json"
    assert "scenario" in schema_of("case")["properties"]
    assert "unrequested_writes" in schema_of("verdict")["properties"]
    assert (SCHEMA_DIR / "verdict.v1.json").exists()  # kept: episodes stored before version 2 follow it


def test_check_command_reports_up_to_date(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out
