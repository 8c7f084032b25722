"""The check operators table: complete, the source of the semantics docstring's operator rows and of the
generation prompts' check language, and the atom each failure is charged to agrees with the evaluator."""

from __future__ import annotations

from hypothesis import given, settings

from mantra_env.checks import NODE_TYPES, Check, FailureCategory, evaluate, parse_check, semantics
from mantra_env.checks.operators import BY_NODE, OPERATORS, charged_atom, prompt_section, semantics_section
from mantra_env.generators.prompts import CHECK_LANGUAGE, check_language
from mantra_env.trace import Trace

from .strategies import checks, traces


def docstring_operator_rows() -> str:
    """The rows of the semantics docstring's "Operators" section: from its heading to the first blank line."""
    lines = (semantics.__doc__ or "").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Operators ("))
    end = lines.index("", start)
    return "\n".join(lines[start + 1 : end])


def test_the_semantics_docstring_rows_are_the_tables() -> None:
    assert docstring_operator_rows() == semantics_section(), (
        "mantra_env/checks/semantics.py's Operators rows differ from mantra_env/checks/operators.py: paste the "
        "output of `python -m mantra_env.checks.operators` into the docstring"
    )


def test_the_generation_prompts_explain_the_tables_operators() -> None:
    assert "\n" + prompt_section() + "\n" in CHECK_LANGUAGE
    assert all(operator.prompt.form in CHECK_LANGUAGE for operator in OPERATORS if operator.in_trace_formula)
    # ANSWER checks only behind the generation.yaml key checks.answer_checks (the recorded prompts stay as they were)
    assert "ANSWER" not in CHECK_LANGUAGE
    with_answers = check_language(answer_checks=True)
    assert "\n" + prompt_section(answer_checks=True) + "\n" in with_answers
    assert all(operator.prompt.form in with_answers for operator in OPERATORS)


def test_one_operator_per_node_class_with_an_example_of_it() -> None:
    assert [operator.node for operator in OPERATORS] == list(NODE_TYPES)
    assert set(BY_NODE) == set(NODE_TYPES)
    for operator in OPERATORS:
        check = parse_check(operator.example)
        assert type(check) is operator.node
        assert operator.op == check.op


def test_every_failure_category_an_operator_can_produce_is_charged_to_an_atom_role() -> None:
    # The categories the evaluator gives each operator (semantics docstring, "Failure categories").
    produced = {
        "call": {FailureCategory.MISSING_REQUIRED_CALL},
        "no_call": {FailureCategory.FORBIDDEN_CALL},
        "or": set(),  # or_all_branches_failed: no single atom
        "after": {FailureCategory.MISSING_ANCHOR, FailureCategory.FORBIDDEN_CALL, FailureCategory.ORDERING_VIOLATION},
        "before": {FailureCategory.MISSING_ANCHOR, FailureCategory.FORBIDDEN_CALL, FailureCategory.ORDERING_VIOLATION},
        "follows": {
            FailureCategory.MISSING_REQUIRED_CALL,
            FailureCategory.MISSING_ANCHOR,
            FailureCategory.ORDERING_VIOLATION,
        },
        "precedes": {
            FailureCategory.MISSING_REQUIRED_CALL,
            FailureCategory.MISSING_ANCHOR,
            FailureCategory.ORDERING_VIOLATION,
        },
        "answer": set(),  # missing_answer_fact: a fact missing from the answer, no atom of the trace
    }
    for operator in OPERATORS:
        assert set(operator.charged) == produced[operator.op], operator.op


@settings(max_examples=400, deadline=None)
@given(checks(), traces())
def test_a_failure_is_charged_to_the_missing_call_or_the_violating_steps_atom(check: Check, trace: Trace) -> None:
    outcome = evaluate(check, trace.index())
    if outcome.passed or outcome.category is FailureCategory.OR_ALL_BRANCHES_FAILED:
        return
    assert outcome.category is not None
    atom = charged_atom(check, outcome.category)
    assert atom is not None
    role = BY_NODE[type(check)].charged[outcome.category]
    steps = outcome.matched[role]
    if outcome.category in (FailureCategory.MISSING_REQUIRED_CALL, FailureCategory.MISSING_ANCHOR):
        assert steps == ()  # the charged atom is the call that never happened
    else:
        assert outcome.violating_step in steps
        assert trace.calls[outcome.violating_step].tool == atom.tool


def test_an_or_charges_no_single_atom() -> None:
    assert charged_atom(parse_check("CALL a() OR CALL b()"), FailureCategory.OR_ALL_BRANCHES_FAILED) is None
