"""``mantra audit``: what a strict reviewer asks of a suite before trusting its scores, in one table.

Per suite: its cases; the refusal share (cases whose stored oracle plan writes nothing); the Pass@1 of the two
floor baselines, ``decline`` (the oracle's reads, then a refusal) and ``read-all`` (every read the scenario's
identifiers allow, no write), each one episode per case, seed 0; checks per case, all and not implied by the
case's other checks; the cases that grade an answer (ANSWER checks); and the mutation audit's scores without a
judge (:mod:`mantra_env.generators.mutation`): the share of plausible wrong traces the checks alone fail and the
combined verdict (checks and unrequested writes) fails, and the share of correct variants that pass. ``--kinds`` adds
the mutation table per kind; ``--json`` writes every figure.

A score on a suite reads against these figures: a policy that never writes scores the refusal share; a wrong
agent of a kind the verdict misses scores what the mutation score leaves.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from mantra_env.agents.base import play
from mantra_env.agents.scripted import DeclinePolicy, ReadAllPolicy, ScriptedPolicy
from mantra_env.case import Suite
from mantra_env.checks.ast import Answer
from mantra_env.cli import command_parser, run_command
from mantra_env.domains import Domain
from mantra_env.env import MantraEnv
from mantra_env.generators.mutation import MutationReport, suite_mutation_report
from mantra_env.graders.refusals import RefusalShare, refusal_share
from mantra_env.graders.suite_audit import AuditRow, audit_table
from mantra_env.graders.table import table_markdown
from mantra_env.mantra_cli.validate import suite_names, suites_named
from mantra_env.mutants import VARIANT_KINDS, WRONG_KINDS
from mantra_env.smt import implied_checks

BASELINES: dict[str, type[ScriptedPolicy]] = {"decline": DeclinePolicy, "read-all": ReadAllPolicy}


@dataclass(frozen=True)
class SuiteAudit:
    """The figures of one suite (see the module)."""

    suite: str
    cases: int
    refusals: RefusalShare
    baseline_passed: dict[str, int]
    checks_per_case: float
    independent_checks_per_case: float
    answer_checked: int
    mutation: MutationReport

    def wrong(self) -> tuple[int, int, int]:
        """(wrong traces, failed by the checks alone, failed by the verdict) over every wrong kind."""
        total = self.mutation.summed(WRONG_KINDS)
        return total.wrong, total.wrong_failed_by_checks, total.wrong_failed

    def variants(self) -> tuple[int, int]:
        """(correct variants, passed)."""
        total = self.mutation.summed(VARIANT_KINDS)
        return total.right, total.right_passed

    def as_json(self) -> dict[str, object]:
        wrong, by_checks, by_verdict = self.wrong()
        right, passed = self.variants()
        return {
            "suite": self.suite,
            "cases": self.cases,
            "refusals": self.refusals.refusals,
            "actions": self.refusals.actions,
            "unplanned": self.refusals.unplanned,
            "baseline_passed": self.baseline_passed,
            "checks_per_case": self.checks_per_case,
            "independent_checks_per_case": self.independent_checks_per_case,
            "answer_checked": self.answer_checked,
            "wrong_mutants": wrong,
            "wrong_failed_by_checks": by_checks,
            "wrong_failed": by_verdict,
            "variants": right,
            "variants_passed": passed,
            "mutation": self.mutation.as_json(),
        }


def audit_suite(label: str, suite: Suite, domain: Domain) -> SuiteAudit:
    """The figures of ``suite`` (named ``label``) on ``domain``."""
    tools = domain.episode_constants.specs
    kinds = {spec.name: spec.kind for spec in tools}
    env = MantraEnv(suite, domain)
    passed = {
        name: sum(bool(play(env, policy(), case.id)["verdict"].passed) for case in suite.cases)
        for name, policy in BASELINES.items()
    }
    counts = [len(case.checks) for case in suite.cases]
    independent = [len(case.checks) - len(implied_checks(case.checks, tools)) for case in suite.cases]
    return SuiteAudit(
        suite=label,
        cases=len(suite.cases),
        refusals=refusal_share(label, suite.cases, kinds),
        baseline_passed=passed,
        checks_per_case=fmean(counts) if counts else float("nan"),
        independent_checks_per_case=fmean(independent) if independent else float("nan"),
        answer_checked=sum(any(isinstance(entry.check, Answer) for entry in case.checks) for case in suite.cases),
        mutation=suite_mutation_report(suite, domain),
    )


def audit_rows(audits: Sequence[SuiteAudit]) -> list[AuditRow]:
    """The audits as the rows of the one audit table (:mod:`mantra_env.graders.suite_audit`), as the report shows
    them."""
    return [AuditRow.from_json(audit.as_json()) for audit in audits]


def _chosen(names: Sequence[str]) -> list[tuple[str, Suite, Domain]]:
    return [
        (f"{suite.manifest.domain}/{suite.manifest.name}-v{suite.manifest.version}", suite, domain)
        for domain, suite in suites_named(suite_names(names))
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.mantra_cli.audit",
        "What a strict reviewer asks of a suite: refusal share, the floor baselines' Pass@1, checks per case, "
        "answer checks, and the mutation scores (wrong traces the verdict fails, correct variants it passes).",
        "retail                          # one shipped suite",
        "retail airline --kinds          # with the mutation table per kind",
        "all --json audit.json           # every shipped suite, every figure as JSON",
        "path/to/suite                   # a suite folder of your own",
    )
    parser.add_argument("suites", nargs="+", help="suite names (DOMAIN or DOMAIN/SUITE), folders, or all")
    parser.add_argument("--kinds", action="store_true", help="also print the mutation table per kind of each suite")
    parser.add_argument("--json", type=Path, default=None, help="write every figure as JSON here")
    args = parser.parse_args(argv)

    def run() -> int:
        audits = []
        for label, suite, domain in _chosen(args.suites):
            print(f"auditing {label} ({len(suite.cases)} cases) ...", file=sys.stderr, flush=True)
            audits.append(audit_suite(label, suite, domain))
        print("\n".join(table_markdown(audit_table(audit_rows(audits)))).rstrip())
        if args.kinds:
            for audit in audits:
                print("\n" + audit.mutation.table())
        if args.json is not None:
            from mantra_env.files import write_atomic

            write_atomic(args.json, json.dumps([audit.as_json() for audit in audits], indent=2) + "\n")
        return 0

    return run_command(run, "interrupted")


if __name__ == "__main__":
    sys.exit(main())
