"""The mutation audit's measurement: replay each case's mutants (:mod:`mantra_env.mutants`) in the env, classify
them, and score the verdict against the classification, without a judge.

Classification of one replayed mutant, in order:

1. ``refused``: the call the mutant adds got a tool error: the env refused it, so the mutant shows nothing (not
   counted).
2. ``wrong``: its accepted calls make an unrequested write (:mod:`mantra_env.unrequested`) or skip a write of the
   plan (no accepted call of the write's tool with the write's targets).
3. Otherwise the world model decides, over the tools it names (a call of a tool it does not name is left out:
   not a closed world, so an inserted write the model knows nothing about is not wrong by default): ``right`` if
   it admits the accepted calls (each accepted, the goal reached), ``wrong`` if not, ``unknown`` if the solver
   runs out of budget, the case has no world model, the model does not admit the unmutated plan itself (its
   judgement of the mutants would mean nothing), or the mutant swaps an argument no condition of the model's
   transition of that tool reads (a departure date of a model that tracks no dates: admitting it says nothing).

Scores, per mutant kind: the **mutation score** is the share of ``wrong`` mutants the verdict fails, on the checks
alone and on the combined verdict (:func:`mantra_env.grading.grade_case`: checks and no unrequested write); the
**pass rate** is the share of ``right`` mutants the verdict passes (for the variant kinds: the variant pass rate).
A ``wrong`` mutant the verdict passes, or a ``right`` one it fails, *survives*: what a ``mutation_audit`` judge
request lists.

CLI: ``python -m mantra_env.generators.mutation SUITE_FOLDER [--cases N] [--json OUT]`` prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import JsonValue

from mantra_env.answers import final_answer
from mantra_env.case import Case, Suite, load_suite
from mantra_env.domains import Domain, load_domain
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError
from mantra_env.grading import grade_case
from mantra_env.mutants import VARIANT_KINDS, WRONG_KINDS, Mutant, MutantKind, derive_mutants
from mantra_env.oracle import action_text
from mantra_env.smt import CaseSolver
from mantra_env.smt.queries import WitnessCall
from mantra_env.tools import ToolSpec
from mantra_env.trace import Trace
from mantra_env.unrequested import requested_writes
from mantra_env.worldmodel import WorldModel, parse_model
from mantra_env.worldmodel.ast import ParamRef, Transition, subexpressions

Classification = Literal["refused", "wrong", "right", "unknown"]
_NO_MODEL, _NO_ENCODING, _PLAN_REFUSED = (
    "the case has no world model",
    "the world model does not encode",
    "the world model does not admit the case's own plan",
)
_UNCLASSIFIABLE = (_NO_MODEL, _NO_ENCODING, _PLAN_REFUSED)
AUDIT_TIMEOUT_MS = 5_000
"""Work budget of one world-model question (a pinned trace is cheap: far below this on the shipped suites)."""


@dataclass(frozen=True)
class MutantResult:
    """One replayed mutant: how it classifies, why, and the verdict on its trace."""

    mutant: Mutant
    classification: Classification
    reason: str
    checks_passed: bool
    passed: bool

    @property
    def survives(self) -> bool:
        """The verdict disagrees with the classification (a wrong trace passes, a right one fails)."""
        return (self.classification == "wrong" and self.passed) or (self.classification == "right" and not self.passed)


def read_params(transition: Transition) -> set[str]:
    """The tool parameters a transition's pre- or postconditions read (through their local names)."""
    names = {bind.local: bind.tool_param for bind in transition.params}
    return {
        names[node.name]
        for expr in (*transition.pre, *transition.post)
        for node in subexpressions(expr)
        if isinstance(node, ParamRef) and node.name in names
    }


def replay(env: MantraEnv, case_id: str, mutant: Mutant) -> Trace:
    """One episode of ``case_id`` that makes the mutant's calls, then answers as a compliant agent would over the
    results those calls returned (:func:`mantra_env.answers.final_answer`: the facts the case's ANSWER checks ask
    for, where its reads returned them), so an ANSWER check fails a mutant that dropped the read its fact comes
    from and passes a variant that made it; a bare "done" would fail every mutant of an information request."""
    env.reset(seed=0, options={"case": case_id})
    done = False
    for call in mutant.calls:
        _, _, terminated, truncated, _ = env.step(action_text({"tool": call.tool, "arguments": call.arguments}))
        if terminated or truncated:
            done = True
            break
    if not done:
        assert env.case is not None
        checks = [entry.check for entry in env.case.checks]
        env.step(action_text({"final_answer": final_answer(checks, env.calls_so_far)}))
    assert env.last_trace is not None
    return env.last_trace


class CaseAuditor:
    """Classifies the replayed mutants of one case (see the module)."""

    def __init__(self, case: Case, tools: Sequence[ToolSpec], bound: int, timeout_ms: int = AUDIT_TIMEOUT_MS) -> None:
        self.case = case
        self.tools = tuple(tools)
        self.specs = {spec.name: spec for spec in tools}
        self.plan = tuple(case.oracle_plan or ())
        self.requested = requested_writes(case.checks, self.plan, self.tools)
        self.solver: CaseSolver | None = None
        self.model: WorldModel | None = None
        self.model_note = ""
        if not case.world_model.strip():
            self.model_note = _NO_MODEL
            return
        try:
            self.model = parse_model(case.world_model)
            self.solver = CaseSolver(
                self.model, case.checks, max(1, bound), case.scenario.valuation, self.tools, timeout_ms
            )
        except MantraError as error:
            self.model_note = f"{_NO_ENCODING}: {error}"
            return
        own = self._admits([(call.tool, call.arguments) for call in self.plan])
        if own is not True:
            self.solver, self.model_note = None, _PLAN_REFUSED

    def _admits(self, calls: Sequence[tuple[str, dict[str, JsonValue]]]) -> bool | None:
        """The world model's judgement of ``calls`` (tool, arguments) over the tools it names."""
        assert self.solver is not None
        named = self.solver.encoding.layout.index
        kept = [WitnessCall(tool=tool, args=args) for tool, args in calls if tool in named]
        try:
            return self.solver.admits(kept)
        except MantraError:
            return None

    def classify(self, mutant: Mutant, trace: Trace) -> tuple[Classification, str]:
        calls = trace.calls
        if mutant.added is not None and (mutant.added >= len(calls) or calls[mutant.added].error is not None):
            return "refused", "the env refuses the call the mutant adds"
        accepted = [call for call in calls if call.error is None]
        unrequested = self.requested.unrequested(accepted)
        if unrequested:
            return "wrong", f"unrequested write: step {unrequested[0].step} {unrequested[0].tool}"
        for planned in self.plan:
            spec = self.specs.get(planned.tool)
            if spec is None or spec.kind != "write":
                continue
            targets = {name: planned.arguments.get(name) for name in spec.targets() if name in planned.arguments}
            if not any(
                c.tool == planned.tool and all(c.args.get(k) == v for k, v in targets.items()) for c in accepted
            ):
                return "wrong", f"skips the plan's write {planned.tool}"
        if self.solver is None:
            return "unknown", self.model_note
        if mutant.swapped is not None:
            tool, name = mutant.swapped
            transition = self.model.transition(tool) if self.model is not None else None
            if transition is None or name not in read_params(transition):
                return "unknown", f"the world model does not read {name} of {tool}"
        admitted = self._admits([(call.tool, call.args) for call in accepted])
        if admitted is None:
            return "unknown", "the solver ran out of budget"
        return ("right", "the world model admits it") if admitted else ("wrong", "the world model refuses it")


def audit_case(env: MantraEnv, case: Case, tools: Sequence[ToolSpec]) -> list[MutantResult]:
    """Every mutant of ``case``, replayed in ``env`` (whose suite holds the case), classified and graded."""
    mutants = derive_mutants(case, tools)
    if not mutants:
        return []
    auditor = CaseAuditor(case, tools, max(len(m.calls) for m in mutants))
    results: list[MutantResult] = []
    for mutant in mutants:
        trace = replay(env, case.id, mutant)
        classification, reason = auditor.classify(mutant, trace)
        verdict = grade_case(trace, case, tools)
        results.append(MutantResult(mutant, classification, reason, verdict.checks_passed, verdict.passed))
    return results


@dataclass
class KindScore:
    """The counts of one mutant kind (see the module for the scores)."""

    derived: int = 0
    refused: int = 0
    unknown: int = 0
    wrong: int = 0
    wrong_failed_by_checks: int = 0
    wrong_failed: int = 0
    right: int = 0
    right_passed: int = 0

    def add(self, result: MutantResult) -> None:
        self.derived += 1
        kind = result.classification
        if kind == "refused":
            self.refused += 1
        elif kind == "unknown":
            self.unknown += 1
        elif kind == "wrong":
            self.wrong += 1
            self.wrong_failed_by_checks += not result.checks_passed
            self.wrong_failed += not result.passed
        else:
            self.right += 1
            self.right_passed += result.passed


@dataclass
class MutationReport:
    """The scores of a suite, per kind, and the surviving mutants per case."""

    suite: str
    cases: int = 0
    cases_without_model: int = 0
    kinds: dict[MutantKind, KindScore] = field(
        default_factory=lambda: {k: KindScore() for k in WRONG_KINDS + VARIANT_KINDS}
    )
    survivors: dict[str, list[MutantResult]] = field(default_factory=dict)

    def add(self, case_id: str, results: Sequence[MutantResult]) -> None:
        self.cases += 1
        for result in results:
            self.kinds[result.mutant.kind].add(result)
        if any(r.reason.startswith(_UNCLASSIFIABLE) for r in results):
            self.cases_without_model += 1
        surviving = [r for r in results if r.survives]
        if surviving:
            self.survivors[case_id] = surviving

    def table(self) -> str:
        """The report as a Markdown table (one row per kind, then all wrong kinds together)."""
        rows = [
            f"Suite {self.suite}: {self.cases} cases ({self.cases_without_model} where the world model cannot "
            f"classify: its own plan not admitted or no model); {len(self.survivors)} cases with surviving mutants",
            "",
            "| kind | derived | refused | unknown | wrong | score (checks) | score (verdict) | right | pass rate |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        rows += [_row(kind, score) for kind, score in self.kinds.items()]
        rows.append(_row("all wrong kinds", self.summed(WRONG_KINDS)))
        return "\n".join(rows)

    def summed(self, kinds: Sequence[MutantKind]) -> KindScore:
        """The counts of ``kinds`` added up."""
        total = KindScore()
        for kind in kinds:
            for name, count in vars(self.kinds[kind]).items():
                setattr(total, name, getattr(total, name) + count)
        return total

    def as_json(self) -> dict[str, object]:
        return {
            "suite": self.suite,
            "cases": self.cases,
            "cases_without_model": self.cases_without_model,
            "kinds": {kind: vars(score) for kind, score in self.kinds.items()},
            "survivors": {
                case_id: [
                    {
                        "kind": r.mutant.kind,
                        "detail": r.mutant.detail,
                        "classification": r.classification,
                        "reason": r.reason,
                    }
                    for r in results
                ]
                for case_id, results in self.survivors.items()
            },
        }


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} % ({part}/{whole})" if whole else "-"


def _row(kind: str, s: KindScore) -> str:
    return (
        f"| {kind} | {s.derived} | {s.refused} | {s.unknown} | {s.wrong} | {_share(s.wrong_failed_by_checks, s.wrong)} "
        f"| {_share(s.wrong_failed, s.wrong)} | {s.right} | {_share(s.right_passed, s.right)} |"
    )


def mutation_report(folder: Path, limit: int | None = None) -> MutationReport:
    """The mutation scores of the suite in ``folder`` (its first ``limit`` cases, or all)."""
    suite = load_suite(folder)
    return suite_mutation_report(suite, load_domain(suite.manifest.domain), limit)


def suite_mutation_report(suite: Suite, domain: Domain, limit: int | None = None) -> MutationReport:
    """The mutation scores of ``suite`` on ``domain`` (its first ``limit`` cases, or all)."""
    tools = domain.episode_constants.specs
    env = MantraEnv(suite, domain)
    report = MutationReport(suite=f"{suite.manifest.domain}/{suite.manifest.name}-v{suite.manifest.version}")
    for case in suite.cases[:limit]:
        report.add(case.id, audit_case(env, case, tools))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mantra_env.generators.mutation",
        description="The mutation audit's scores of a suite, without a judge: each case's oracle plan mutated "
        "(reads dropped, writes first, stated arguments swapped, writes inserted; reads permuted, an extra read, "
        "the other branch of an OR), replayed, classified (env, unrequested writes, world model) and graded.",
    )
    parser.add_argument("suite", type=Path, help="a suite folder (suite.jsonl + manifest.json)")
    parser.add_argument("--cases", type=int, default=None, help="only the first N cases")
    parser.add_argument("--json", type=Path, default=None, help="also write the counts and survivors as JSON here")
    args = parser.parse_args(argv)
    try:
        report = mutation_report(args.suite, args.cases)
    except MantraError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report.table())
    if args.json is not None:
        args.json.write_text(json.dumps(report.as_json(), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
