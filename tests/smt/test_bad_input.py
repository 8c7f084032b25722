"""Bad input to the SMT engine gives a typed error or a typed result, never another exception."""

from __future__ import annotations

import pytest

from mantra_env.case import CaseCheck
from mantra_env.checks import parse_check
from mantra_env.domains import load_domain
from mantra_env.smt import DEFAULT_TIMEOUT_MS, CaseSolver, SmtInputError
from mantra_env.smt.queries import WORK_PER_MS
from mantra_env.worldmodel import DslSyntaxError, DslTypeError
from tests.smt.test_paper_examples import CV_MODEL, EARLY_CHECKS, INITIAL, ORDERING

TOOLS = load_domain("operations").tool_specs()


def test_a_time_limit_gives_unknown_results_not_exceptions() -> None:
    # A solver's first query at h=256 internalises the whole formula and takes about 100 ms, far over the limit;
    # later queries reuse what it learned and can take a few milliseconds, close enough to Z3's timer to be
    # flaky (at h=64 some finished within 1 ms). So every query here is the first of a fresh solver.
    def fresh(**modes: bool) -> CaseSolver:
        return CaseSolver(CV_MODEL, [*EARLY_CHECKS, ORDERING], 256, INITIAL, TOOLS, timeout_ms=1, **modes)

    results = [fresh().forward(), *(fresh().backward(j) for j in range(3)), fresh().compliant_witness()]
    assert {(r.status, r.witness is None) for r in results} == {("unknown", True)}
    assert all(r.reason for r in results)
    # With witness_at_own_length the compliant witness asks the case encoded at lengths 1, 2, ... first: a budget
    # far too small for the h=256 formula is enough for those, and the answer is the one the default budget gives.
    witness = fresh(witness_at_own_length=True).compliant_witness()
    full = CaseSolver(
        CV_MODEL, [*EARLY_CHECKS, ORDERING], 256, INITIAL, TOOLS, witness_at_own_length=True
    ).compliant_witness()
    assert witness.status == full.status == "found" and witness.witness == full.witness
    # With the default time limit the same case answers.
    assert CaseSolver(CV_MODEL, [*EARLY_CHECKS, ORDERING], 64, INITIAL, TOOLS).forward().status == "consistent"


def _work(solver: CaseSolver) -> int:
    statistics = solver.solver.statistics()
    return int(statistics.get_key_value("rlimit count"))


def test_the_budget_is_counted_in_work_so_the_answer_does_not_depend_on_the_machine() -> None:
    # A wall-clock limit answers `unknown` on a loaded or slow machine where a quiet one finds the trace, and a
    # regenerated suite would then differ from the shipped one. The budget is Z3 work (rlimit): a budget below
    # the work the query needs stops it there, whatever the time; the default budget answers.
    def fresh(timeout_ms: int = DEFAULT_TIMEOUT_MS) -> CaseSolver:
        return CaseSolver(CV_MODEL, [*EARLY_CHECKS, ORDERING], 32, INITIAL, TOOLS, timeout_ms=timeout_ms)

    # (the forward query: one query on one solver; the compliant witness spreads its work over the shorter
    # encodings it asks first, each with its own budget)
    answered = fresh()
    assert answered.forward().status == "consistent"
    needed = _work(answered)
    budget_ms = max(1, needed // WORK_PER_MS // 4)
    stopped = fresh(budget_ms)
    assert stopped.forward().status == "unknown"
    # it stopped on the work budget (a little over it: Z3 looks at the counter between steps), not on a clock
    assert _work(stopped) < needed
    assert budget_ms * WORK_PER_MS <= _work(stopped) <= budget_ms * WORK_PER_MS * 2


@pytest.mark.parametrize(
    ("model", "checks", "initial", "error", "message"),
    [
        ("(model (var x Bool)", [], {}, DslSyntaxError, "never closed"),
        ("(model (transition teleport))", [], {}, DslTypeError, "no tool named teleport"),
        (CV_MODEL, [CaseCheck(id="a", check="CALL teleport()")], {}, SmtInputError, "teleport, which is not a tool"),
        (CV_MODEL, [CaseCheck(id="a", check="CALL check_inventory(sku=1)")], {}, SmtInputError, "pins sku"),
        (CV_MODEL, EARLY_CHECKS, {"in_stock": "yes"}, SmtInputError, "initial value of in_stock"),
        (CV_MODEL, [parse_check("CALL check_inventory()"), parse_check("CALL check_inventory()")], {}, None, ""),
    ],
)
def test_bad_models_checks_and_initial_states_are_typed_errors(
    model: str, checks: list[object], initial: dict[str, object], error: type[Exception] | None, message: str
) -> None:
    if error is None:  # duplicate checks without ids get distinct ids and are fine
        assert CaseSolver(model, checks, 8, initial, TOOLS).forward().status == "consistent"  # type: ignore[arg-type]
        return
    with pytest.raises(error, match=message):
        CaseSolver(model, checks, 8, initial, TOOLS)  # type: ignore[arg-type]


def test_a_bound_below_one_is_a_typed_error() -> None:
    with pytest.raises(SmtInputError, match="at least 1"):
        CaseSolver(CV_MODEL, EARLY_CHECKS, 0, INITIAL, TOOLS)
