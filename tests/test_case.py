import re
from pathlib import Path

import pytest

from mantra_env.case import Case, CaseCheck, Scenario, Suite, SuiteManifest, UnknownCaseError, load_suite, write_suite
from mantra_env.checks import parse_check
from mantra_env.errors import CaseFileError, MantraError


def _suite() -> Suite:
    cases = [
        Case(
            id=f"ops-{i}",
            domain="operations",
            scenario=Scenario(prompt="Get 1 monitor.", external={"in_stock": True}, internal={"pending": True}),
            checks=[
                CaseCheck(id="c1", check=parse_check('CALL check_inventory(item_name="Dell UltraSharp U2723QE")')),
                CaseCheck(id="c2", check="NO-CALL create_purchase_order()", author="human"),  # type: ignore[arg-type]
            ],
            world_model="(model (var in_stock Bool))",
            relevant_tools=["check_inventory", "create_purchase_order"],
            database_patch=[{"op": "set", "path": "items.HWM2741.stock", "value": 4}],
        )
        for i in range(3)
    ]
    return Suite(manifest=SuiteManifest(name="ops", domain="operations", case_count=3), cases=cases)


def test_suite_round_trips_through_jsonl(tmp_path: Path) -> None:
    suite = _suite()
    written = write_suite(suite, tmp_path / "ops")
    assert load_suite(tmp_path / "ops") == written
    assert written.cases == suite.cases and written.manifest.cases_digest != suite.manifest.cases_digest == ""
    lines = (tmp_path / "ops" / "suite.jsonl").read_text().splitlines()
    assert len(lines) == 3 and '"op":"no_call"' in lines[0]


def test_hand_edited_cases_are_refused_until_the_suite_is_rewritten(tmp_path: Path) -> None:
    write_suite(_suite(), tmp_path / "ops")
    jsonl = tmp_path / "ops" / "suite.jsonl"
    jsonl.write_text(jsonl.read_text().replace("ops-1", "ops-9"))
    with pytest.raises(CaseFileError, match=r"suite.jsonl: the cases changed since .*manifest.json was written"):
        load_suite(tmp_path / "ops")


def test_case_lookup_by_id_and_index() -> None:
    suite = _suite()
    assert suite.case(1).id == "ops-1" and suite.case("ops-2").id == "ops-2" and suite.case(-1).id == "ops-2"
    with pytest.raises(KeyError, match=r"no case 'ops-9'; did you mean 'ops-2'[?] its cases include: ops-0, ops-1"):
        suite.case("ops-9")
    with pytest.raises(IndexError, match="has 3 cases; index 3 is out of range"):
        suite.case(3)


def test_check_text_property_is_canonical() -> None:
    entry = CaseCheck(id="c", check="check_inventory PRECEDES assign_warehouse_picker")  # type: ignore[arg-type]
    assert entry.text == "CALL check_inventory() PRECEDES CALL assign_warehouse_picker()"


def test_d9_case_lookups_raise_one_mantra_error() -> None:
    suite = _suite()
    for key, message in [("ops9", "no case 'ops9'; did you mean"), (3, "out of range"), (1.0, "not by a float"),
                         (None, "not by a NoneType"), (True, "not by a bool")]:  # fmt: skip
        with pytest.raises(UnknownCaseError, match=re.escape(message)) as info:
            suite.case(key)  # type: ignore[arg-type]
        assert isinstance(info.value, MantraError) and isinstance(info.value, LookupError)
        assert not str(info.value).startswith("'")  # not KeyError's quoted form


def test_a_suite_read_from_its_folder_pickles_by_reference_and_an_edited_one_by_value(tmp_path: Path) -> None:
    import pickle

    from mantra_env.case import load_suite, write_suite
    from mantra_env.domains import find_suite

    _, shipped = find_suite("operations/starter")
    folder = tmp_path / "suite"
    write_suite(shipped, folder)
    suite = load_suite(folder)
    data = pickle.dumps(suite)
    assert len(data) < 1_000 and pickle.loads(data) == suite  # the folder and digest travel, not the cases
    edited = suite.model_copy(update={"cases": suite.cases[:2]})
    assert pickle.loads(pickle.dumps(edited)).cases == suite.cases[:2]  # changed in memory: by value
    renamed = suite.model_copy(update={"manifest": suite.manifest.model_copy(update={"name": "other"})})
    assert pickle.loads(pickle.dumps(renamed)).manifest.name == "other"
    (folder / "suite.jsonl").write_text("\n".join((folder / "suite.jsonl").read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(CaseFileError, match="case_count is 14"):
        pickle.loads(data)  # the folder changed since: refused, never another suite
