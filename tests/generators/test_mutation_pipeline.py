"""The mutation audit switched on in a whole run (ops-mini, recorded answers): every exported case is audited and
says so; the key off keeps the stage out of the provenance (the shipped suites' bytes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantra_env.case import load_suite
from mantra_env.generators.config import load_config
from mantra_env.generators.pipeline import run_pipeline

FIXTURE = Path(__file__).parent / "fixtures" / "ops-mini"


@pytest.mark.slow
def test_a_run_with_the_audit_on_records_it_in_every_case(tmp_path: Path) -> None:
    config = load_config(FIXTURE / "config.yaml")
    assert config.validation.mutation_audit is False  # the fixture predates the key
    on = config.model_copy(update={"validation": config.validation.model_copy(update={"mutation_audit": True})})
    result = run_pipeline(on, tmp_path / "run")
    assert result.pending == [] and result.suite_dir is not None
    suite = load_suite(result.suite_dir)
    assert suite.cases
    for case in suite.cases:
        entry = case.validation.history[-1]
        assert entry["stage"] == "mutation_audit" and isinstance(entry["mutants"], int) and entry["mutants"] > 0
        assert entry["survivors"] == 0  # ops-mini's repaired checks leave no survivor: no judge was asked
        assert "mutation_audit" in case.provenance.models


def test_the_key_off_keeps_the_stage_out_of_the_provenance() -> None:
    shipped = Path(__file__).parents[2] / "mantra_env" / "domains" / "telecom" / "suites" / "generated"
    case = load_suite(shipped).cases[0]
    assert "mutation_audit" not in case.provenance.models
    assert all(entry.get("stage") != "mutation_audit" for entry in case.validation.history)
