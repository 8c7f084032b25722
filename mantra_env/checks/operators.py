"""The check operators as one table: for each AST node, its forms in the semantics, its line in the generator
prompts, an example, and the atom each failure category is charged to.

Two texts are produced from it: the "Operators" section of :mod:`mantra_env.checks.semantics`'s docstring (which
stays literal, so the normative text reads as text; ``tests/checks/test_operators.py`` asserts it equals
:func:`semantics_section`, and ``python -m mantra_env.checks.operators`` prints the section to paste) and the
check language the generation prompts explain (:func:`prompt_section`). Adding an operator is one row here, one
node class in :mod:`~mantra_env.checks.ast` and one handler per consumer; the tests name what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from mantra_env.checks.ast import After, Answer, Before, Call, Check, Follows, NoCall, Or, Precedes
from mantra_env.checks.semantics import FailureCategory

_MISSING_CALL = FailureCategory.MISSING_REQUIRED_CALL
_MISSING_ANCHOR = FailureCategory.MISSING_ANCHOR
_FORBIDDEN = FailureCategory.FORBIDDEN_CALL
_ORDERING = FailureCategory.ORDERING_VIOLATION


@dataclass(frozen=True)
class Form:
    """One line of a rendered table: a form (``CALL A AFTER N``) and its meaning, lines separated by newlines."""

    form: str
    meaning: str


@dataclass(frozen=True)
class Operator:
    """One check operator (one AST node class)."""

    node: type
    semantics: tuple[Form, ...]
    """Its rows in the normative semantics (AFTER and BEFORE have one per kind of target)."""
    prompt: Form
    """Its row in the generation prompts: what an LLM writing checks needs to know."""
    example: str
    """A check in the text form whose top node is this operator."""
    charged: dict[FailureCategory, str]
    """The role (a key of the evaluator's ``matched`` evidence: ``call``, ``target``, ``anchor``) of the atom a
    failure of each category is charged to: the call that is missing, or that of the violating step."""
    in_trace_formula: bool = True
    """Whether the check is a formula over the trace's calls (encoded in Z3, compared with the grader by the
    agreement tests); False for a check on the final answer, which the SMT encoder takes as true."""

    @property
    def op(self) -> str:
        """The node's ``op`` tag (its JSON form's discriminator)."""
        return str(self.node.model_fields["op"].default)  # type: ignore[attr-defined]


OPERATORS: tuple[Operator, ...] = (
    Operator(
        Call,
        (Form("``CALL A``", "holds iff ``M(A)`` is non-empty."),),
        Form(
            'CALL tool(arg="value", n=1)',
            "the trace contains a call of `tool` whose listed arguments have these values\n"
            "(unlisted arguments are wildcards; `CALL tool()` matches any call of it)",
        ),
        'CALL check_inventory(item="HWM2741")',
        {_MISSING_CALL: "call"},
    ),
    Operator(
        NoCall,
        (Form("``NO-CALL A``", "holds iff ``M(A)`` is empty (exactly the negation of ``CALL A``)."),),
        Form('NO-CALL tool(arg="value")', "the trace contains no such call"),
        "NO-CALL create_po(amount=5)",
        {_FORBIDDEN: "call"},
    ),
    Operator(
        Or,
        (Form("``P OR Q``", "holds iff ``P`` or ``Q`` holds; ``P`` and ``Q`` may be any checks."),),
        Form("A OR B", "either check holds"),
        "CALL refund() OR CALL store_credit()",
        {},  # an OR has no single atom to charge: its branches keep their own outcomes
    ),
    Operator(
        After,
        (
            Form(
                "``CALL A AFTER N``",
                "conditional: every ``j`` in ``M(A)`` has some ``i`` in ``M(N)`` with ``i < j``.\n"
                "Equivalently ``M(A)`` is empty or ``min M(N) < min M(A)``. Vacuous if ``A`` never\noccurs.",
            ),
            Form(
                "``NO-CALL A AFTER N``",
                "no ``j`` in ``M(A)`` has some ``i`` in ``M(N)`` with ``i < j``: nothing matching\n"
                "``A`` happens after the first anchor.",
            ),
        ),
        Form(
            "A AFTER CALL t()",
            "every call matching A comes after some call matching t (vacuous if none);\n"
            "NO-CALL x() AFTER CALL t() forbids x after t",
        ),
        "CALL refund() AFTER CALL verify_identity()",
        {_MISSING_ANCHOR: "anchor", _FORBIDDEN: "target", _ORDERING: "target"},
    ),
    Operator(
        Before,
        (
            Form(
                "``CALL A BEFORE N``",
                "conditional: every ``j`` in ``M(A)`` has some ``i`` in ``M(N)`` with ``i > j``.\n"
                "Equivalently ``M(A)`` is empty or ``max M(A) < max M(N)``.",
            ),
            Form(
                "``NO-CALL A BEFORE N``",
                "no ``j`` in ``M(A)`` has some ``i`` in ``M(N)`` with ``i > j``: nothing matching\n"
                "``A`` happens before the last anchor.",
            ),
        ),
        Form("A BEFORE CALL t()", "every call matching A comes before some later call matching t"),
        "NO-CALL refund() BEFORE CALL verify_identity()",
        {_MISSING_ANCHOR: "anchor", _FORBIDDEN: "target", _ORDERING: "target"},
    ),
    Operator(
        Follows,
        (
            Form(
                "``CALL A FOLLOWS N``",
                "positive obligation: ``M(A)`` and ``M(N)`` are non-empty and every ``j`` in ``M(A)``\n"
                "has some ``i`` in ``M(N)`` with ``i < j`` (``min M(N) < min M(A)``). It is\n"
                "``CALL A`` and ``CALL A AFTER N`` together.",
            ),
        ),
        Form("CALL b() FOLLOWS CALL a()", "both occur, and every b has an a before it"),
        "CALL assign_picker() FOLLOWS CALL check_inventory()",
        # The violating step of an ordering violation is the first ``call`` step, which has no anchor before it.
        {_MISSING_CALL: "call", _MISSING_ANCHOR: "anchor", _ORDERING: "call"},
    ),
    Operator(
        Precedes,
        (
            Form(
                "``CALL A PRECEDES N``",
                "positive obligation: ``M(A)`` and ``M(N)`` are non-empty and every ``i`` in ``M(N)``\n"
                "has some ``j`` in ``M(A)`` with ``j < i`` (``min M(A) < min M(N)``). It is\n"
                "``CALL N FOLLOWS A``.",
            ),
        ),
        Form("CALL a() PRECEDES CALL b()", "both occur, and every b has an a before it (same as b FOLLOWS a)"),
        "CALL check_inventory() PRECEDES CALL assign_picker()",
        # The violating step is the first anchor step (the premature call), which has no ``call`` before it.
        {_MISSING_CALL: "call", _MISSING_ANCHOR: "anchor", _ORDERING: "anchor"},
    ),
    Operator(
        Answer,
        (
            Form(
                "``ANSWER R.p AS k``",
                'holds iff the final answer states every expected fact of kind ``k`` (see "Answer\n'
                'facts"); outside the trace formula (no atom, no Z3 encoding).',
            ),
        ),
        Form(
            'ANSWER CALL read(id="X").path AS kind',
            "the final answer states the fact(s) at `path` of that read's result, parsed as\n"
            "kind: date, time, money, number, identifier or enum (never free text);\n"
            "path: fields (also a mapping's key that is a name) and [k] (one fact: a list's k-th\n"
            "element, or a mapping's numeric key, e.g. variants[1001]) or [*] (every element or\n"
            "value), e.g. flights[*].date;\n"
            "the pipeline fills in the expected value; write it for information requests",
        ),
        'ANSWER CALL get_order(order_id="W1").total AS money',
        {},  # no atom: the fact is missing from the answer, not a call from the trace
        in_trace_formula=False,
    ),
)

BY_NODE: dict[type, Operator] = {operator.node: operator for operator in OPERATORS}
"""The operator of each AST node class (a test asserts one per class of ``NODE_TYPES``)."""


def _render(rows: list[Form], indent: int, width: int) -> str:
    """Rows as a two-column block: the form padded to ``width``, continuation lines under the meaning."""
    lines = []
    for row in rows:
        first, *rest = row.meaning.split("\n")
        lines.append(f"{' ' * indent}{row.form:<{width}} {first}")
        lines.extend(f"{' ' * (indent + width + 1)}{line}" for line in rest)
    return "\n".join(lines)


def semantics_section() -> str:
    """The operator rows of the semantics docstring's "Operators" section."""
    return _render([form for operator in OPERATORS for form in operator.semantics], indent=4, width=21)


def prompt_section(answer_checks: bool = False) -> str:
    """The operator rows of the check language the generation prompts explain; the rows of checks outside the
    trace formula (ANSWER) only with ``answer_checks`` (a ``generation.yaml`` key: without it the prompts, and so
    the recorded generations, stay as they were)."""
    rows = [operator.prompt for operator in OPERATORS if answer_checks or operator.in_trace_formula]
    return _render(rows, indent=2, width=34)


def in_trace_formula(check: Check) -> bool:
    """Whether ``check`` is a formula over the trace's calls (see :attr:`Operator.in_trace_formula`)."""
    return BY_NODE[type(check)].in_trace_formula


def charged_atom(check: Check, category: FailureCategory) -> Call | NoCall | None:
    """The atom a failure of ``check`` in ``category`` is charged to (the missing call, or the violating step's
    atom), or None when the operator charges no single atom for it (an OR)."""
    role = BY_NODE[type(check)].charged.get(category)
    if role is None:
        return None
    if isinstance(check, Call | NoCall):
        return check
    atom: Call | NoCall = getattr(check, role)  # the table names atom fields only (tested)
    return atom


if __name__ == "__main__":
    print(semantics_section())
