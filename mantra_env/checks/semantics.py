"""The normative semantics of checks. Every consumer (the trace grader, the Z3 encoding, the failure analyzer)
follows this text, and property tests assert that the Python evaluator below and the Z3 encoding agree.

Traces
    A trace is the ordered list of tool calls an agent made, steps ``0 .. n-1``. Every call the agent made is
    in the trace, including calls whose arguments failed schema validation and calls that returned a tool
    error: the agent made them. A call to a tool that does not exist is in the trace too (it matches no atom
    of a real tool). A call whose arguments were not a JSON object is recorded with empty arguments.

Matching
    An atom ``CALL t(a)`` / ``NO-CALL t(a)`` carries a *partial* argument map ``a``. Step ``i`` matches the
    atom iff the step calls tool ``t`` (exact name) and, for every pinned pair ``(p, v)`` in ``a``, the call
    has an argument ``p`` whose value equals ``v`` after JSON-type canonicalisation:

    * strings are compared exactly (case-sensitive) after trimming surrounding whitespace on both sides (free
      text, below, after normalisation);
    * numbers are compared by numeric value, so ``2150 == 2150.0``; booleans are not numbers
      (``true != 1``) and ``null`` equals only ``null``;
    * a pinned list argument matches a list that is a permutation of it (the same elements, each as often:
      ``["a", "b"]`` matches ``["b", "a"]``, not ``["a", "b", "b"]``);
    * *paired* lists are the exception: the lists an atom names in ``ordered`` (text form:
      ``name=[...] PAIRED``) are compared together, up to one common permutation. Row ``k`` of paired lists is
      the tuple of their ``k``-th elements, and the call matches iff its lists have the pinned lengths and
      hold the same rows, each as often: ``item_ids=["a", "b"], new_item_ids=["x", "y"]`` matches
      ``item_ids=["b", "a"], new_item_ids=["y", "x"]`` (the same exchange named in another order), not
      ``new_item_ids=["y", "x"]`` with ``item_ids=["a", "b"]`` (another exchange). A single paired list
      compares as any other list, up to permutation; paired lists pinned with different lengths have no rows
      and compare position by position. ``ordered`` comes from the tool schema: a list parameter marked
      ``"x-ordered": true`` (its order pairs it with another list, as ``new_item_ids`` with ``item_ids``) is
      paired, every other list is not (:func:`mantra_env.tools.with_list_order` stamps atoms from the schema);
    * nested lists (inside a list element or an object) compare element-wise in order, objects key-wise (same
      keys, equal values);
    * values of different JSON types never match (``"1" != 1``).

    Two rules come from the tool schemas (``grade(..., tools=...)``; :func:`mantra_env.tools.argument_rules`
    reads them into :class:`ArgRules`, the one table every matcher uses). Without the schemas (``tools=None``)
    neither applies:

    * *defaults*: a call that omits an optional argument whose schema has a ``default`` is compared as if it
      had passed that default (the tool's own behaviour, and what the Z3 encoding assumes), so an omitted
      ``mode`` whose default is ``"standard"`` matches ``mode="standard"`` and not ``mode="express"``;
    * *free text*: a string parameter marked ``"x-free-text": true`` (addresses, reasons, notes: text the tool
      stores or compares leniently; never ids, emails, codes or enums) matches when both values are strings
      equal after :func:`normalise_text`: Unicode NFKC, case folded, every punctuation character (Unicode
      category ``P*``) a space, runs of whitespace one space, trimmed. ``"12 Main St., Apt 4"`` matches
      ``"12 main st apt 4"``; ``"4.5"`` does not match ``"45"`` (punctuation separates, it never joins); a
      missing component (a country, a company line) is still a different value; symbols (``$``, ``+``) and
      letters with accents (``é`` is not ``e``) stay. Only matching normalises: pinned text is stored and
      replayed exactly, and world-model equalities stay exact.

    Arguments that are not pinned are wildcards; an empty map matches every call to ``t``. A pinned argument
    that the call omits does not match, unless its schema default does. Let ``M(X)`` be the set of steps
    matching atom ``X``.

Operators (``A``, ``B`` atoms unless stated; "anchor" is always a CALL atom)
    ``CALL A``            holds iff ``M(A)`` is non-empty.
    ``NO-CALL A``         holds iff ``M(A)`` is empty (exactly the negation of ``CALL A``).
    ``P OR Q``            holds iff ``P`` or ``Q`` holds; ``P`` and ``Q`` may be any checks.
    ``CALL A AFTER N``    conditional: every ``j`` in ``M(A)`` has some ``i`` in ``M(N)`` with ``i < j``.
                          Equivalently ``M(A)`` is empty or ``min M(N) < min M(A)``. Vacuous if ``A`` never
                          occurs.
    ``NO-CALL A AFTER N`` no ``j`` in ``M(A)`` has some ``i`` in ``M(N)`` with ``i < j``: nothing matching
                          ``A`` happens after the first anchor.
    ``CALL A BEFORE N``   conditional: every ``j`` in ``M(A)`` has some ``i`` in ``M(N)`` with ``i > j``.
                          Equivalently ``M(A)`` is empty or ``max M(A) < max M(N)``.
    ``NO-CALL A BEFORE N`` no ``j`` in ``M(A)`` has some ``i`` in ``M(N)`` with ``i > j``: nothing matching
                          ``A`` happens before the last anchor.
    ``CALL A FOLLOWS N``  positive obligation: ``M(A)`` and ``M(N)`` are non-empty and every ``j`` in ``M(A)``
                          has some ``i`` in ``M(N)`` with ``i < j`` (``min M(N) < min M(A)``). It is
                          ``CALL A`` and ``CALL A AFTER N`` together.
    ``CALL A PRECEDES N`` positive obligation: ``M(A)`` and ``M(N)`` are non-empty and every ``i`` in ``M(N)``
                          has some ``j`` in ``M(A)`` with ``j < i`` (``min M(A) < min M(N)``). It is
                          ``CALL N FOLLOWS A``.
    ``ANSWER R.p AS k``   holds iff the final answer states every expected fact of kind ``k`` (see "Answer
                          facts"); outside the trace formula (no atom, no Z3 encoding).

    AFTER and BEFORE apply to *every* occurrence of their target. FOLLOWS and PRECEDES also quantify over
    every occurrence of the later call, not over some pair: the paper's encoding writes PRECEDES as "some
    ``check_inventory`` step before some ``assign_warehouse_picker`` step", but under that reading the trace
    ``assign, check, assign`` complies, which is exactly the premature write the check exists to catch, and
    the paper's own cross-validation example (adding the PRECEDES check makes the forward query
    unsatisfiable) would not hold. Both operands of FOLLOWS/PRECEDES are CALL atoms; the target of
    AFTER/BEFORE is a CALL or NO-CALL atom; OR takes any checks.

    A step never precedes itself, so ``CALL t() FOLLOWS CALL t()`` needs two calls of ``t`` ... and still
    fails, because its first call has no earlier anchor.

Answer facts
    ``ANSWER t(a).path AS kind = v`` (JSON: ``{"op": "answer", "read": <CALL atom>, "path": ..., "kind": ...,
    "expected": [...]}``) holds iff the trace's final answer states each value of ``expected`` as a fact of ``kind``:
    ``time``, ``date``, ``money``, ``number`` (parsed, so ``08:15`` = ``8:15 am``, ``$57`` = ``57 dollars``,
    ``2024-05-01`` = ``May 1, 2024``), ``identifier`` (exact token; digits only also after a card mask) or ``enum``
    (case-insensitive words, not negated); :mod:`mantra_env.checks.facts` defines each form. Free text is out of
    scope. No final answer, or one that omits a fact, fails with ``missing_answer_fact``; an unresolved check (no
    ``expected``) fails too.

    The read ``t(a)`` and the ``path`` say where the facts come from; they are no trace atom. The expected
    values are stored in the check when it is written: the generation pipeline resolves the path on the result
    of the oracle's read over the case's database, and loading a suite can re-resolve it to verify. Grading
    stays a pure function of the trace and the checks (no database at grading time), a check is auditable on
    its own (it shows the facts), and an agent that states the right facts passes whichever reads it made
    (resolving the read at reset instead would tie grading to the env's database and hide the facts from a
    reader of the suite). An ANSWER check is outside the trace formula (its operator's ``in_trace_formula``
    mark in :mod:`mantra_env.checks.operators`): the Z3 encoding takes it as true, and it stands alone (never
    an operand of OR).

Failure categories (exactly one per failed check; the paper's partition)
    ``missing_required_call`` a CALL atom never matched: ``CALL A`` failed, or the first operand of
                              FOLLOWS/PRECEDES never occurred (checked before the anchor).
    ``missing_anchor``        the anchor of AFTER/BEFORE/FOLLOWS/PRECEDES never occurred (for AFTER/BEFORE with
                              a CALL target: the target occurred, the anchor did not).
    ``forbidden_call``        a NO-CALL atom matched: ``NO-CALL A`` failed, or a NO-CALL AFTER/BEFORE target
                              occurred on the forbidden side of an anchor.
    ``ordering_violation``    all calls occurred but in the wrong order.
    ``or_all_branches_failed`` an OR whose operands all failed (each operand's own outcome is kept as
                              evidence).
    ``missing_answer_fact``   an ANSWER check's fact is not stated in the final answer (or there is none).

    ``unrequested_write`` is no check's category: it charges an accepted write the case never asks for, which
    fails the episode besides its checks (:mod:`mantra_env.unrequested`).

Evidence
    Every outcome records the steps that matched each role (``target``/``call``, ``anchor``) and, for a
    failure, the step that violated the check: the first forbidden step, or the first step of the later
    call that lacks its anchor. A missing call has no violating step.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Protocol

from mantra_env.checks.ast import After, Answer, Before, Call, Check, Follows, NoCall, Or, Precedes


class FailureCategory(StrEnum):
    """Why a check failed (the paper's Table "failure categories")."""

    MISSING_REQUIRED_CALL = "missing_required_call"
    MISSING_ANCHOR = "missing_anchor"
    FORBIDDEN_CALL = "forbidden_call"
    ORDERING_VIOLATION = "ordering_violation"
    OR_ALL_BRANCHES_FAILED = "or_all_branches_failed"
    MISSING_ANSWER_FACT = "missing_answer_fact"
    UNREQUESTED_WRITE = "unrequested_write"
    """Not a check's failure: an accepted write the case never asks for (:mod:`mantra_env.unrequested`),
    charged to that call."""


_MISSING = object()


def values_equal(pinned: Any, actual: Any) -> bool:
    """Whether a canonical pinned value equals an argument value from a trace (see the module docstring)."""
    kind = type(pinned)
    if kind is str:
        return type(actual) is str and (actual == pinned or actual.strip() == pinned)
    if kind is int or kind is float:
        return (type(actual) is int or type(actual) is float) and actual == pinned
    if pinned is None or kind is bool:
        return actual is pinned
    if kind is list:
        return (
            type(actual) is list
            and len(actual) == len(pinned)
            and all(values_equal(p, a) for p, a in zip(pinned, actual, strict=True))
        )
    if kind is dict:
        return (
            type(actual) is dict
            and actual.keys() == pinned.keys()
            and all(values_equal(p, actual[k]) for k, p in pinned.items())
        )
    return False


def bag_equal(pinned: list[Any], actual: Any) -> bool:
    """Whether ``actual`` is a list holding the canonical ``pinned`` elements in some order, each as often."""
    if type(actual) is not list or len(actual) != len(pinned):
        return False
    left = list(actual)
    for value in pinned:  # values_equal(value, .) is one class per canonical value, so greedy is exact
        for k, got in enumerate(left):
            if values_equal(value, got):
                del left[k]
                break
        else:
            return False
    return True


def arg_equal(pinned: Any, actual: Any) -> bool:
    """Whether one argument that is not paired matches its pinned value: a top-level list up to permutation."""
    if type(pinned) is list:
        return bag_equal(pinned, actual)
    return values_equal(pinned, actual)


def paired_equal(pinned: Sequence[list[Any]], actual: Sequence[Any]) -> bool:
    """Whether the call's lists ``actual`` hold the pinned paired lists up to one common permutation (the same
    rows, each as often); pinned lists of different lengths compare position by position."""
    if any(type(got) is not list or len(got) != len(value) for value, got in zip(pinned, actual, strict=True)):
        return False
    if len({len(value) for value in pinned}) > 1:
        return all(values_equal(value, got) for value, got in zip(pinned, actual, strict=True))
    return bag_equal([list(row) for row in zip(*pinned, strict=True)], [list(row) for row in zip(*actual, strict=True)])


@lru_cache(maxsize=2048)  # pinned texts and recent arguments; bounded: an argument may be 10,000 characters
def normalise_text(text: str) -> str:
    """The form in which free-text arguments are compared (see the module docstring): NFKC, case folded,
    punctuation as spaces, whitespace collapsed and trimmed."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    spaced = "".join(" " if unicodedata.category(char)[0] == "P" else char for char in folded)
    return " ".join(spaced.split())


def text_equal(pinned: Any, actual: Any) -> bool:
    """Whether a value pinned on a free-text parameter matches ``actual``: strings equal after
    :func:`normalise_text`; any other value as :func:`arg_equal` compares it."""
    if type(pinned) is str:
        return type(actual) is str and (actual == pinned or normalise_text(actual) == normalise_text(pinned))
    return arg_equal(pinned, actual)


@dataclass(frozen=True)
class ToolArgRules:
    """What one tool's schema adds to argument matching."""

    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The canonical schema default of each optional parameter that has one (an omitted argument is it)."""
    free_text: frozenset[str] = frozenset()
    """The string parameters matched after :func:`normalise_text`."""


NO_TOOL_RULES = ToolArgRules()


_RULE_TOKENS: dict[tuple[tuple[str, str, str], ...], int] = {}


@dataclass(frozen=True)
class ArgRules:
    """What the tool schemas add to argument matching, per tool (see "Matching" in the module docstring):
    built from tool specs by :func:`mantra_env.tools.argument_rules`, read by every matcher (the grader's
    compiled and lazy paths, :func:`call_matches`, the Z3 layout reads the same schema marks)."""

    tools: Mapping[str, ToolArgRules] = field(default_factory=lambda: MappingProxyType({}))
    key: tuple[tuple[str, str, str], ...] = ()
    """A hashable summary of the rules (tool, parameter, ``default:<json>`` or ``free-text``): equal rules,
    equal keys."""
    token: int = field(init=False, compare=False)
    """A small number per distinct ``key`` (compiled matchers are cached by it: cheaper to hash per grade)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "token", _RULE_TOKENS.setdefault(self.key, len(_RULE_TOKENS)))

    def of(self, tool: str) -> ToolArgRules:
        """The rules of ``tool`` (none for a tool the schemas do not know)."""
        return self.tools.get(tool, NO_TOOL_RULES)


NO_RULES = ArgRules()
"""No schema: a pinned argument the call omits never matches, strings compare exactly (trimmed)."""


def args_match(
    pinned: Mapping[str, Any],
    actual: Mapping[str, Any],
    ordered: Collection[str] = (),
    rules: ToolArgRules = NO_TOOL_RULES,
) -> bool:
    """Whether a call's arguments ``actual`` match the partial map ``pinned`` (the lists named in ``ordered``
    are paired: compared together up to one common permutation; other top-level lists up to permutation;
    ``rules``: the tool's schema defaults and free-text parameters)."""
    defaults = rules.defaults
    for name, value in pinned.items():
        if name in ordered:
            continue
        got = actual.get(name, defaults.get(name, _MISSING))
        if got is _MISSING:
            return False
        if not (text_equal(value, got) if name in rules.free_text else arg_equal(value, got)):
            return False
    return not ordered or paired_equal(
        [pinned[name] for name in ordered], [actual.get(name, defaults.get(name)) for name in ordered]
    )


def call_matches(atom: Call | NoCall, call: CallLike, rules: ArgRules = NO_RULES) -> bool:
    """Whether one call matches an atom: the same tool and every pinned argument (the one definition the
    grader and the unrequested-write rule share)."""
    return call.tool == atom.tool and args_match(atom.args, call.args, atom.ordered, rules.of(atom.tool))


class CallLike(Protocol):
    """What the semantics needs of a trace step: the tool name and the argument object."""

    @property
    def tool(self) -> str: ...

    @property
    def args(self) -> Mapping[str, Any]: ...


def _scan(
    pinned: tuple[tuple[str, Any], ...], args: Mapping[str, Any], ordered: tuple[str, ...], rules: ToolArgRules
) -> bool:
    """Whether ``args`` match the pinned pairs (``args_match``, with the common scalar cases inlined)."""
    if rules is not NO_TOOL_RULES:
        return args_match(dict(pinned), args, ordered, rules)
    for name, value in pinned:
        got = args.get(name, _MISSING)
        kind = type(value)
        if kind is str:
            if type(got) is not str or (got != value and got.strip() != value):
                return False
        elif kind is int and type(got) is int:
            if got != value:
                return False
        elif name in ordered:
            continue  # compared below, with the lists it is paired with
        elif got is _MISSING or not arg_equal(value, got):
            return False
    if ordered:
        values = dict(pinned)
        return paired_equal([values[name] for name in ordered], [args.get(name) for name in ordered])
    return True


class TraceIndex:
    """The steps matching each atom of a trace, computed lazily per atom and memoised (atoms recur across the
    checks of a case). ``atoms`` may name atoms to match in one pass over the trace up front; ``rules``: what
    the tool schemas add to matching (defaults, free text); ``final_answer``: what ANSWER checks read."""

    __slots__ = ("_calls", "_memo", "_rules", "final_answer", "length")

    def __init__(
        self,
        calls: Sequence[CallLike],
        atoms: Sequence[Call | NoCall] = (),
        rules: ArgRules = NO_RULES,
        final_answer: str | None = None,
    ) -> None:
        self._calls = calls
        self.final_answer = final_answer
        self._rules = rules
        self.length = len(calls)
        self._memo: dict[str, tuple[int, ...]] = {}
        if atoms:
            from mantra_env.checks.matching import match_all  # matching.py imports this module

            self._memo = match_all(atoms, calls, rules)

    def matches(self, atom: Call | NoCall) -> tuple[int, ...]:
        """Steps matching ``atom``, ascending."""
        cached = self._memo.get(atom.match_key)
        if cached is None:
            tool, pinned, ordered = atom.tool, atom.pinned, atom.ordered
            rules = self._rules.of(tool)
            cached = tuple(
                step
                for step, call in enumerate(self._calls)
                if call.tool == tool and _scan(pinned, call.args, ordered, rules)
            )
            self._memo[atom.match_key] = cached
        return cached


@dataclass(slots=True)
class CheckOutcome:
    """The result of evaluating one check on one trace, with its evidence.

    Treat as immutable. It is not a frozen dataclass only because frozen construction is three times slower and
    the grader builds one per check per graded trace.
    """

    passed: bool
    category: FailureCategory | None = None
    matched: dict[str, tuple[int, ...]] = field(default_factory=dict)
    violating_step: int | None = None
    explanation: str = ""
    branches: tuple[CheckOutcome, ...] = ()


def evaluate(check: Check, index: TraceIndex) -> CheckOutcome:
    """Evaluate ``check`` on the trace behind ``index`` (the reference semantics, with evidence)."""
    return _EVALUATORS[type(check)](check, index)


def _call(check: Call, index: TraceIndex) -> CheckOutcome:
    steps = index.matches(check)
    if steps:
        return CheckOutcome(True, None, {"call": steps})
    return CheckOutcome(False, _MISSING_CALL, {"call": ()}, None, f"{check.tool} was never called")


def _no_call(check: NoCall, index: TraceIndex) -> CheckOutcome:
    steps = index.matches(check)
    if not steps:
        return CheckOutcome(True, None, {"call": ()})
    return CheckOutcome(
        False, _FORBIDDEN, {"call": steps}, steps[0], f"forbidden call to {check.tool} at step {steps[0]}"
    )


def _or(check: Or, index: TraceIndex) -> CheckOutcome:
    left = evaluate(check.left, index)
    right = evaluate(check.right, index)
    if left.passed or right.passed:
        return CheckOutcome(True, branches=(left, right))
    return CheckOutcome(
        False, FailureCategory.OR_ALL_BRANCHES_FAILED, explanation="no branch of the OR holds", branches=(left, right)
    )


def _missing_anchor(check: After | Before, matched: dict[str, tuple[int, ...]], step: int) -> CheckOutcome:
    explanation = f"{check.target.tool} was called but anchor {check.anchor.tool} never was"
    return CheckOutcome(False, _MISSING_ANCHOR, matched, step, explanation)


def _after(check: After, index: TraceIndex) -> CheckOutcome:
    target = index.matches(check.target)
    anchor = index.matches(check.anchor)
    matched = {"target": target, "anchor": anchor}
    if not target:
        return CheckOutcome(True, None, matched)
    forbid = check.target.op == "no_call"
    if not anchor:
        return CheckOutcome(True, None, matched) if forbid else _missing_anchor(check, matched, target[0])
    if forbid:  # nothing matching the target after the first anchor
        first_bad = bisect_right(target, anchor[0])
        if first_bad == len(target):
            return CheckOutcome(True, None, matched)
        step = target[first_bad]
        explanation = f"{check.target.tool} was called at step {step}, after {check.anchor.tool}, which is forbidden"
        return CheckOutcome(False, _FORBIDDEN, matched, step, explanation)
    if target[0] > anchor[0]:  # every target occurrence has an anchor before it
        return CheckOutcome(True, None, matched)
    step = target[0]
    explanation = f"{check.target.tool} at step {step} has no {check.anchor.tool} before it"
    return CheckOutcome(False, _ORDERING, matched, step, explanation)


def _before(check: Before, index: TraceIndex) -> CheckOutcome:
    target = index.matches(check.target)
    anchor = index.matches(check.anchor)
    matched = {"target": target, "anchor": anchor}
    if not target:
        return CheckOutcome(True, None, matched)
    forbid = check.target.op == "no_call"
    if not anchor:
        return CheckOutcome(True, None, matched) if forbid else _missing_anchor(check, matched, target[0])
    if forbid:  # nothing matching the target before the last anchor
        if target[0] >= anchor[-1]:
            return CheckOutcome(True, None, matched)
        step = target[0]
        explanation = f"{check.target.tool} was called at step {step}, before {check.anchor.tool}, which is forbidden"
        return CheckOutcome(False, _FORBIDDEN, matched, step, explanation)
    if target[-1] < anchor[-1]:  # every target occurrence has an anchor after it
        return CheckOutcome(True, None, matched)
    step = target[bisect_left(target, anchor[-1])]
    explanation = f"{check.target.tool} at step {step} has no {check.anchor.tool} after it"
    return CheckOutcome(False, _ORDERING, matched, step, explanation)


def _obligation(check: Follows | Precedes, index: TraceIndex) -> CheckOutcome:
    first = index.matches(check.call)
    anchor = index.matches(check.anchor)
    matched = {"call": first, "anchor": anchor}
    if not first:
        return CheckOutcome(False, _MISSING_CALL, matched, None, f"{check.call.tool} was never called")
    if not anchor:
        return CheckOutcome(False, _MISSING_ANCHOR, matched, None, f"anchor {check.anchor.tool} was never called")
    # FOLLOWS: the call's first step must come after the anchor's first; PRECEDES: the other way round.
    if check.op == "follows":
        earlier, later, earlier_tool, later_tool = anchor, first, check.anchor.tool, check.call.tool
    else:
        earlier, later, earlier_tool, later_tool = first, anchor, check.call.tool, check.anchor.tool
    if earlier[0] < later[0]:
        return CheckOutcome(True, None, matched)
    explanation = f"{later_tool} at step {later[0]} comes before any {earlier_tool}"
    return CheckOutcome(False, _ORDERING, matched, later[0], explanation)


def _answer(check: Answer, index: TraceIndex) -> CheckOutcome:
    from mantra_env.checks.facts import stated  # facts.py imports the AST only; kept lazy

    if check.expected is None:
        explanation = f"the facts at {check.read.tool}.{check.path} were never resolved; regenerate the check"
        return CheckOutcome(False, FailureCategory.MISSING_ANSWER_FACT, {}, None, explanation)
    answer = index.final_answer or ""
    missing = [fact for fact in check.expected if not stated(check.kind, fact, answer)]
    if not missing:
        return CheckOutcome(True)
    said = "no final answer" if index.final_answer is None else "the final answer"
    explanation = f"{said} does not state the {check.kind} {', '.join(map(str, missing))} ({check.path})"
    return CheckOutcome(False, FailureCategory.MISSING_ANSWER_FACT, {}, None, explanation)


_MISSING_CALL = FailureCategory.MISSING_REQUIRED_CALL
_MISSING_ANCHOR = FailureCategory.MISSING_ANCHOR
_FORBIDDEN = FailureCategory.FORBIDDEN_CALL
_ORDERING = FailureCategory.ORDERING_VIOLATION

# One handler per node class (a test asserts every node class has one).
_EVALUATORS: dict[type, Callable[[Any, TraceIndex], CheckOutcome]] = {
    Call: _call,
    NoCall: _no_call,
    Or: _or,
    After: _after,
    Before: _before,
    Follows: _obligation,
    Precedes: _obligation,
    Answer: _answer,
}
