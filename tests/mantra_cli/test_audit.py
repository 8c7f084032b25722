"""``mantra audit``: a suite's floor and mutation figures. The decline baseline scores exactly the refusal share on
a generated suite (it is the oracle on refusals and writes nothing); a case whose read check is taken away lets its
drop-read mutant through, and the audit says so; bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mantra_env.case import Case, Suite, write_suite
from mantra_env.domains import find_suite
from mantra_env.graders.refusals import is_refusal
from mantra_env.graders.suite_audit import audit_table
from mantra_env.graders.table import table_markdown
from mantra_env.mantra_cli.audit import audit_rows, audit_suite
from mantra_env.mantra_cli.main import main as mantra

DOMAIN, GENERATED = find_suite("operations/generated")
assert DOMAIN is not None
KINDS = {spec.name: spec.kind for spec in DOMAIN.tool_specs()}


def _subset(cases: list[Case]) -> Suite:
    manifest = GENERATED.manifest.model_copy(update={"name": "subset", "case_count": len(cases)})
    return Suite(manifest=manifest, cases=cases)


def _with_refusals(count: int) -> list[Case]:
    refusals = [case for case in GENERATED.cases if is_refusal(case, KINDS)][:2]
    actions = [case for case in GENERATED.cases if is_refusal(case, KINDS) is False][: count - len(refusals)]
    assert len(refusals) == 2 and actions, "the fixture expects refusal and action cases in operations/generated"
    return refusals + actions


def test_decline_scores_the_refusal_share_and_the_checks_fail_every_wrong_mutant() -> None:
    cases = _with_refusals(8)
    audit = audit_suite("ops/subset", _subset(cases), DOMAIN)
    assert audit.cases == 8 and audit.refusals.refusals == 2
    assert audit.baseline_passed["decline"] == 2  # the floor of a policy that never writes
    assert audit.baseline_passed["read-all"] <= 2
    wrong, _, by_verdict = audit.wrong()
    assert wrong > 0 and by_verdict == wrong
    assert audit.checks_per_case == sum(len(c.checks) for c in cases) / 8
    assert "| ops/subset | 8 | 25.0 % (2/8) | 25.0 % (2/8) |" in "\n".join(
        table_markdown(audit_table(audit_rows([audit])))
    )


def _reads_checked(case: Case) -> bool:
    return any("get_" in entry.text or "check_" in entry.text for entry in case.checks)


def test_a_case_without_its_read_checks_shows_a_surviving_mutant() -> None:
    case = next(c for c in GENERATED.cases if is_refusal(c, KINDS) is False and _reads_checked(c))
    kept = [entry for entry in case.checks if "get_" not in entry.text and "check_" not in entry.text]
    weakened = case.model_copy(update={"checks": kept})
    before = audit_suite("before", _subset([case]), DOMAIN)
    after = audit_suite("after", _subset([weakened]), DOMAIN)
    assert not before.mutation.survivors
    assert case.id in after.mutation.survivors
    assert {r.mutant.kind for r in after.mutation.survivors[case.id]} >= {"drop_read"}
    assert after.wrong()[2] < after.wrong()[0]


def test_the_command_prints_the_table_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "suite"
    write_suite(_subset(_with_refusals(4)), folder)
    assert mantra(["audit", str(folder), "--kinds", "--json", str(tmp_path / "audit.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Suite audit:") and "\n| suite | cases | refusal share | decline Pass@1 |" in out
    assert "| operations/subset-v1 | 4 | 50.0 % (2/4) | 50.0 % (2/4) |" in out
    assert "| drop_read |" in out  # --kinds
    (entry,) = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))
    assert entry["cases"] == 4 and entry["baseline_passed"]["decline"] == 2 and entry["refusals"] == 2


def test_an_unknown_suite_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert mantra(["audit", "./no/such/suite"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "no such suite" in err
