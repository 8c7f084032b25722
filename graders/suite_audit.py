"""The audit table of suites (``mantra audit``'s figures), one definition for the command and the report.

``mantra audit --json FILE`` computes the figures (it runs the floor baselines and the mutation audit, which the
report cannot: they live above the graders); the command prints this table and ``mantra report --audit FILE``
shows the same table from that file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mantra_env.errors import MantraError
from mantra_env.graders.table import Column, Table, make_table
from mantra_env.userfiles import read_text

AUDIT_TITLE = (
    "Suite audit: the floor a policy that never writes reaches (refusal share, decline and read-all Pass@1), "
    "checks per case, and the mutation scores (wrong traces the verdict fails, correct variants it passes)"
)


@dataclass(frozen=True)
class AuditRow:
    """One suite's figures (the fields ``mantra audit --json`` writes)."""

    suite: str
    cases: int
    refusals: int
    decline_passed: int
    read_all_passed: int
    checks_per_case: float
    independent_checks_per_case: float
    answer_checked: int
    wrong_mutants: int
    wrong_failed_by_checks: int
    wrong_failed: int
    variants: int
    variants_passed: int

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> AuditRow:
        """The row of one entry of ``mantra audit --json``.

        Raises:
            KeyError, TypeError, ValueError: the entry lacks a field or holds a value of another type.
        """
        passed = entry["baseline_passed"]
        return cls(
            suite=str(entry["suite"]),
            cases=int(entry["cases"]),
            refusals=int(entry["refusals"]),
            decline_passed=int(passed["decline"]),
            read_all_passed=int(passed["read-all"]),
            checks_per_case=float(entry["checks_per_case"]),
            independent_checks_per_case=float(entry["independent_checks_per_case"]),
            answer_checked=int(entry["answer_checked"]),
            wrong_mutants=int(entry["wrong_mutants"]),
            wrong_failed_by_checks=int(entry["wrong_failed_by_checks"]),
            wrong_failed=int(entry["wrong_failed"]),
            variants=int(entry["variants"]),
            variants_passed=int(entry["variants_passed"]),
        )


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} % ({part}/{whole})" if whole else "-"


AUDIT_COLUMNS: list[Column[AuditRow]] = [
    Column("suite", lambda r: r.suite),
    Column("cases", lambda r: r.cases),
    Column("refusal share", lambda r: share(r.refusals, r.cases)),
    Column("decline Pass@1", lambda r: share(r.decline_passed, r.cases)),
    Column("read-all Pass@1", lambda r: share(r.read_all_passed, r.cases)),
    Column("checks per case (not implied)", lambda r: f"{r.checks_per_case:.2f} ({r.independent_checks_per_case:.2f})"),
    Column("cases with answer checks", lambda r: r.answer_checked),
    Column("mutation score, checks", lambda r: share(r.wrong_failed_by_checks, r.wrong_mutants)),
    Column("mutation score, verdict", lambda r: share(r.wrong_failed, r.wrong_mutants)),
    Column("variants pass", lambda r: share(r.variants_passed, r.variants)),
]


def audit_table(rows: Sequence[AuditRow]) -> Table:
    return make_table(AUDIT_TITLE, AUDIT_COLUMNS, rows)


def load_audit(path: Path) -> list[AuditRow]:
    """The rows of a ``mantra audit --json`` file.

    Raises:
        MantraError: the file cannot be read or is not such a file (naming the entry and what is wrong).
    """
    text = read_text(path, "audit file", MantraError)
    try:
        entries = json.loads(text)
    except ValueError as error:
        raise MantraError(f"{path}: not JSON ({error}); write it with `mantra audit SUITE... --json {path}`") from None
    if not isinstance(entries, list):
        raise MantraError(f"{path}: expected the list `mantra audit --json` writes, found {type(entries).__name__}")
    rows = []
    for k, entry in enumerate(entries):
        try:
            rows.append(AuditRow.from_json(entry))
        except (KeyError, TypeError, ValueError) as error:
            raise MantraError(
                f"{path}: entry {k} is not an audit of a suite ({type(error).__name__}: {error}); write the file "
                "with `mantra audit SUITE... --json FILE`"
            ) from None
    return rows
