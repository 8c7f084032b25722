"""The bounded encoding of a world model and a check set, as SMT-LIB text (paper App. "Bounded SMT
compilation" and "Check encoding").

Everything is emitted once as *definitions* over the shared step variables, so that every query of a case is
the same base formula plus assumptions (see :mod:`mantra_env.smt.queries`):

* structure: tool-index range, contiguous prefix ``t_i = noop ⇒ t_{i+1} = noop``, enum ranges, and the frame
  axiom with the no-op carry as one clause per changing state leaf and step: the leaf keeps its value unless
  step ``i`` calls a tool whose postconditions write it (per record field);
* per tool ``k``: ``∧_i (t_i = k ⇒ post_k(i))`` asserted outright (every query assumes it), and
  ``∧_i (t_i = k ⇒ pre_k(i))`` asserted outright for background tools (no check mentions them) or defined as
  the selector ``P_k`` for focus tools, whose preconditions the forward query negates; each transition is
  translated once into a template with step placeholders and formatted per step;
* ``G ⇔ goal(σ_h)``; the initial state pinned from the scenario valuation;
* per check ``j``: ``c_j ⇔ ⟦check_j⟧``, built from per-atom match literals ``m_x_i`` and O(h) prefix/suffix
  auxiliaries (``seen``: some match before ``i``; ``later``: some match after ``i``) instead of O(h²) pairs.

Two semantics of a refused call (``semantics=``, see :mod:`mantra_env.smt.queries` for the queries):

* ``"paper"``: the paper's encoding, as above: every call's postcondition holds whether or not its
  precondition did, and a trace is admitted by the world model only if its preconditions hold.
* ``"refusal"``: what the env does with a call the world model refuses. Step ``i`` has an *acceptance*
  literal, ``t_i = k ⇒ (A_i ⇔ pre_k(i))`` and ``t_i = noop ⇒ ¬A_i``; postconditions apply only to accepted
  steps (``A_i ∧ t_i = k ⇒ post_k(i)``), and a refused step *stutters*: beside the frame clause, one clause
  ``A_i ∨ s_{i+1} = s_i`` per changing leaf carries the state unchanged. Nothing restricts which calls a
  trace makes. ``ALLACC ⇔ ∧_i (t_i = noop ∨ A_i)`` says every call was accepted.
  Every check ``j`` also gets ``ca_j``: the check evaluated on the accepted calls alone (match literals
  ``ma_x_i ⇔ m_x_i ∧ A_i``), and ``FOCUS ⇔ ∧_j ca_j ∧ G``.
  Facts the scenario does not state are unknown to the agent, as in the env: a String leaf the initial state
  leaves unset holds a sentinel of its own (``UNSTATED_BASE + n``, below the intern table and every other value)
  and argument slots stay above the sentinels. Otherwise the solver picks the unstated fact to suit the query:
  a customer who gave only an email is "verified" by name and zip, and every check pinning the email looks
  over-restrictive.

Check semantics follow :mod:`mantra_env.checks.semantics` exactly (every occurrence; PRECEDES as the
obligation that every anchor step has an earlier call); ``tests/smt/test_agreement.py`` checks it against the
Python grader on random traces.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from mantra_env.checks import After, Before, Call, Check, Follows, NoCall, Or, Precedes, tools_mentioned
from mantra_env.checks.operators import in_trace_formula
from mantra_env.errors import CheckValueError
from mantra_env.smt.layout import (
    DECLARED_SORT,
    SORT_CODES,
    Layout,
    Slot,
    id_value,
    value_key,
    written_paths,
    z3_sort,
)
from mantra_env.smt.terms import TermsTooLarge, Translator, bool_term, int_term, real_term
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel.ast import (
    ArrayType,
    CollectionOp,
    EnumType,
    Expr,
    FieldAccess,
    ListLit,
    Lit,
    NextRef,
    OpApp,
    ParamRef,
    RecordType,
    ScalarType,
    VarRef,
    WorldModel,
    subexpressions,
)
from mantra_env.worldmodel.printer import format_expr
from mantra_env.worldmodel.typecheck import CheckedModel, check_model, value_problem

Semantics = Literal["paper", "refusal"]
SEMANTICS: tuple[Semantics, ...] = ("paper", "refusal")
# Sentinels of unstated String facts (refusal semantics): far below the intern table (0..n) and the values
# pinned traces give to strings no check names (-1, -2, ...).
UNSTATED_BASE = -(2**40)


def is_identifier(param: str) -> bool:
    """Whether a tool parameter names a record (``id``, ``order_id``, ``line_id``): the env answers a value it
    does not hold with "not found"."""
    return param == "id" or param.endswith("_id")


def returning_vars(model: WorldModel) -> set[str]:
    """The String and array-of-String variables through which a call can return a value nobody stated: those a
    transition may leave with a value its call did not pass. A transition passes values on when every write of
    ``v`` is ``(= (next v) e)`` with ``e`` built from parameters (and their fields: the items of a list argument),
    literals, and unions or differences of ``v`` with those, asserted outright or under implications whose
    conditions cover every case (``(=> c ...)`` beside ``(=> (not c) ...)``, the airline models' "this user's
    booking, else unchanged"). Any other write (a create call's ``(not (= (next id) "none"))``, an assignment
    under one branch only, which leaves ``v`` free in the other) can return a new value. The others only ever
    hold stated values or values the calls passed, so the encoding need not consult them: an equality or an
    array read per step and identifier slot that costs up to 3x on ``benchmarks/smt.py``'s list row, and put
    the airline re-audit's booking models (six such arrays) out of the solver's budget."""
    kinds = (ScalarType("String"), ArrayType(ScalarType("String")))
    holders = {var.name for var in model.vars if var.var_type in kinds}
    found: set[str] = set()
    for transition in model.transitions:
        plain: dict[str, set[tuple[str, ...]]] = {}  # variable -> the conditions it is passed a value under
        other: set[str] = set()
        for post in transition.post:
            _passed_writes(post, (), plain, other)
        for name in holders:
            if name in other or (name in plain and not _covers(plain[name])):
                found.add(name)
    return found


def _passed_writes(
    post: Expr, condition: tuple[str, ...], plain: dict[str, set[tuple[str, ...]]], other: set[str]
) -> None:
    """Sort the writes of ``post`` (under the implications' ``condition``): into ``plain``, variable -> conditions
    of the assignments that pass values on (:func:`_plain_assignment`), or else into ``other``."""
    if isinstance(post, OpApp) and post.symbol == "and":
        for arg in post.args:
            _passed_writes(arg, condition, plain, other)
        return
    if isinstance(post, OpApp) and post.symbol == "=>" and len(post.args) == 2:
        antecedent, consequent = post.args
        other.update(name for name, _ in written_paths(antecedent))
        _passed_writes(consequent, (*condition, format_expr(antecedent)), plain, other)
        return
    assigned = _plain_assignment(post)
    for name, path in written_paths(post):
        if name == assigned and not path:
            plain.setdefault(name, set()).add(condition)
        else:
            other.add(name)


def _covers(conditions: set[tuple[str, ...]]) -> bool:
    """Whether assignments under ``conditions`` (each a chain of implication antecedents) cover every case: one
    holds outright, or two chains differ only in a last antecedent ``c`` and ``(not c)`` (and so on upwards)."""
    while () not in conditions:
        merged = {chain[:-1] for chain in conditions if chain and (*chain[:-1], f"(not {chain[-1]})") in conditions}
        if merged <= conditions:
            return False
        conditions = conditions | merged
    return True


def _plain_assignment(post: Expr) -> str | None:
    """The variable ``v`` of a postcondition ``(= (next v) e)`` whose ``e`` passes values on, creates none."""
    if not (isinstance(post, OpApp) and post.symbol == "=" and len(post.args) == 2):
        return None
    target, value = post.args
    if not isinstance(target, NextRef):
        return None
    plain = all(
        isinstance(node, ParamRef | Lit | ListLit)
        or (isinstance(node, VarRef) and node.name == target.name)
        or (isinstance(node, CollectionOp) and node.symbol in ("union", "difference"))
        or (isinstance(node, FieldAccess) and _of_parameter(node))
        for node in subexpressions(value)
    )
    return target.name if plain else None


def _of_parameter(node: FieldAccess) -> bool:
    """A field of a parameter (of a record argument, or the column of a list argument's records)."""
    inner: Expr = node
    while isinstance(inner, FieldAccess):
        inner = inner.record
    return isinstance(inner, ParamRef)


class EncodingError(ValueError):
    """Raised for inputs the encoding cannot represent (wrapped into typed errors by the callers)."""


class Encoding:
    """The SMT-LIB text of one (world model, checks, bound, initial state) and the names in it.

    Args:
        checked: the type-checked world model (an empty ``WorldModel()`` encodes the checks alone).
        checks: the check set, in order; check ``j`` is the Bool ``c_j``.
        bound: the trace bound ``h`` (number of steps).
        initial: values for state variables at boundary 0 (unknown names are ignored: a scenario valuation
            also holds variables the world model does not track).
        extra_tools: tools to index even if neither the model nor the checks mention them (trace pinning).
        list_bound: element slots per list argument (default: see :mod:`mantra_env.smt.layout`).
        extra_values: strings to intern besides those the inputs name (a pinned trace's free-text arguments).
        semantics: ``"paper"`` (postconditions of every call) or ``"refusal"`` (a call whose precondition
            fails is refused and leaves the state unchanged).
        refuse_invented_ids: under ``"refusal"``, no trace calls a tool on an identifier nobody could know
            (:meth:`_known_ids`). Off by default: generation configs opt in, so that shipped suites regenerate.
    """

    def __init__(
        self,
        checked: CheckedModel,
        checks: Sequence[Check],
        bound: int,
        initial: Mapping[str, Any] | None = None,
        extra_tools: Iterable[str] = (),
        semantics: Semantics = "paper",
        list_bound: int | None = None,
        extra_values: Iterable[Any] = (),
        refuse_invented_ids: bool = False,
    ) -> None:
        if bound < 1:
            raise EncodingError(f"the trace bound must be at least 1, not {bound}")
        if semantics not in SEMANTICS:
            raise EncodingError(f"unknown semantics {semantics!r}: use one of {', '.join(SEMANTICS)}")
        self.semantics = semantics
        self.refusal = semantics == "refusal"
        self.known_ids_only = self.refusal and refuse_invented_ids
        self.checked = checked
        self.checks = tuple(checks)
        self.bound = bound
        self.initial: dict[str, Any] = dict(initial or {})
        try:
            values = [*(initial or {}).values(), *extra_values]
            self.layout = Layout(checked, self.checks, checked.tools, extra_tools, values, list_bound)
        except CheckValueError as error:
            raise EncodingError(str(error)) from None
        # LISTS_FIT: every list argument has at most list_bound elements. Queries assume it; a query unsat with
        # it and sat without it needs longer lists, which is reported as such (never as "no trace").
        self.has_lists = any(slot.sort == "List" for slots in self.layout.slots.values() for slot in slots.values())
        self.translator = Translator(checked, self.layout)
        self.check_tools = sorted({tool for check in self.checks for tool in tools_mentioned(check)})
        self.pre_templates: dict[str, list[str]] = {}  # tool -> precondition terms with {i}/{j} placeholders
        self._lines: list[str] = []
        self._atoms: dict[str, int] = {}
        self._accepted_atoms: set[int] = set()
        self._seen_done: set[tuple[int, str]] = set()
        self._later_done: set[tuple[int, str]] = set()
        self.unstated: dict[int, int] = {}  # leaf -> the sentinel of a String fact the initial state leaves unset
        try:
            self._emit_declarations()
            self._emit_initial(initial or {})  # first: pinned static variables are inlined in what follows
            self._emit_structure()
            self._emit_transitions()
            self._emit_goal()
            self._emit_checks()
        except TermsTooLarge as error:
            raise EncodingError(f"the world model is too large to encode: {error}") from None
        self.text = "\n".join(self._lines) + "\n"
        self.extensional = needs_extensionality(checked)
        self.writes_arrays = any(isinstance(self.layout.leaves[n].type, ArrayType) for n in self.layout.dynamic)
        """Some postcondition writes an array (a set update: its store terms, at every step, meet the array
        theory; see ``CaseSolver(array_relevancy=...)``)."""

    # --- helpers -----------------------------------------------------------------------------------------------

    def _emit(self, line: str) -> None:
        self._lines.append(line)

    def _declare(self, name: str, sort: str) -> None:
        self._emit(f"(declare-const {name} {sort})")

    @property
    def noop(self) -> int:
        return self.layout.noop

    # --- world model -------------------------------------------------------------------------------------------

    def _emit_declarations(self) -> None:
        h, layout = self.bound, self.layout
        for i in range(h):
            self._declare(f"t_{i}", "Int")
            if self.refusal:
                self._declare(f"A_{i}", "Bool")
            for sort, count in layout.slot_counts.items():
                for j in range(count):
                    self._declare(f"a_{i}_{SORT_CODES[sort]}{j}", DECLARED_SORT[sort])
                    self._declare(f"h_{i}_{SORT_CODES[sort]}{j}", "Bool")
        if self.has_lists:
            self._declare("LISTS_FIT", "Bool")
        for n, leaf in enumerate(layout.leaves):
            for b in range(h + 1) if n not in layout.static else (0,):
                self._declare(f"s_{b}_{n}", z3_sort(leaf.type))

    def _emit_structure(self) -> None:
        h, n = self.bound, self.noop
        per_step: list[str] = [f"(assert (and (<= 0 t_{{i}}) (<= t_{{i}} {n})))"]
        # Frame axiom and no-op carry in one clause per changing leaf: a leaf keeps its value unless the step
        # calls a tool that writes it (tools x leaves x h clauses otherwise, 86% of the text at 150 tools).
        # Under refusal semantics only an accepted step writes; a refused one stutters.
        for changing in self.layout.dynamic:
            writes = " ".join(f"(= t_{{i}} {self.layout.index[tool]})" for tool in self.layout.writers[changing])
            per_step.append(f"(assert (or {writes} (= s_{{j}}_{changing} s_{{i}}_{changing})))")
            if self.refusal:  # a separate clause: the paper's frame clause stays as it is
                per_step.append(f"(assert (or A_{{i}} (= s_{{j}}_{changing} s_{{i}}_{changing})))")
        for tool, slots in self.layout.slots.items():
            called = f"(= t_{{i}} {self.layout.index[tool]})"
            for slot in slots.values():
                if slot.has_default:  # an omitted argument is the tool's default (exactly: not normalised)
                    exact = dataclasses.replace(slot, optional=False, free_text=False)
                    value = _conj(_pin(exact, slot.default, "{i}", self.layout))
                    per_step.append(f"(assert (=> (and {called} (not {slot.flag('{i}')})) {value}))")
                elif slot.bound and slot.optional:  # the model reads it, so a call in the model supplies it
                    per_step.append(f"(assert (=> {called} {slot.flag('{i}')}))")
            ranges = [
                f"(<= 0 {slot.var('{i}')}) (< {slot.var('{i}')} {len(slot.enum)})"
                for slot in slots.values()
                if slot.enum
            ]
            for slot in slots.values():
                if slot.sort != "List":
                    continue
                length = slot.var("{i}")
                ranges.append(f"(<= 0 {length}) (=> LISTS_FIT (<= {length} {slot.width}))")
                ranges += [
                    f"(<= 0 {column.var('{i}', k)}) (< {column.var('{i}', k)} {len(column.enum)})"
                    for column in slot.columns
                    if column.enum
                    for k in range(slot.width)
                ]
            if ranges:
                per_step.append(f"(assert (=> {called} (and {' '.join(ranges)})))")
        if self.unstated:  # an agent cannot pass a fact nobody told it (sentinels are consecutive)
            above = UNSTATED_BASE + len(self.unstated)
            for k in range(self.layout.slot_counts["Id"]):
                per_step.append(f"(assert (>= a_{{i}}_{SORT_CODES['Id']}{k} {above}))")
        template = "\n".join(per_step)
        for i in range(h):
            self._emit(template.format(i=i, j=i + 1))
            if i + 1 < h:
                self._emit(f"(assert (=> (= t_{i} {n}) (= t_{i + 1} {n})))")
        for leaf_index, leaf in enumerate(self.layout.leaves):
            if isinstance(leaf.type, EnumType):
                for b in range(h + 1) if leaf_index not in self.layout.static else (0,):
                    var = f"s_{b}_{leaf_index}"
                    self._emit(f"(assert (and (<= 0 {var}) (< {var} {len(leaf.type.values)})))")

    def _emit_transitions(self) -> None:
        if self.refusal:
            self._emit_refusal_transitions()
            return
        h = self.bound
        for k, tool in enumerate(self.layout.tools):
            pres, post_terms = self._pre_post(tool)  # one template per transition, formatted for every step
            pre_template = f"(=> (= t_{{i}} {k}) {_conj(pres)})" if pres else ""
            post_template = f"(=> (= t_{{i}} {k}) {_conj(post_terms)})" if post_terms else ""
            pre_steps = " ".join(pre_template.format(i=i, j=i + 1) for i in range(h)) if pres else ""
            post_steps = " ".join(post_template.format(i=i, j=i + 1) for i in range(h)) if post_terms else ""
            # Postconditions and frames hold in every query, and so do the preconditions of tools no check
            # mentions (the background): those are asserted outright. Only a focus tool's preconditions are
            # negated by the forward query, so only they get a selector P_k.
            if post_steps:
                self._emit(f"(assert (and {post_steps}))")
            if tool in self.check_tools:
                self._declare(f"P_{k}", "Bool")
                self._emit(f"(assert (= P_{k} (and true {pre_steps})))")
            elif pre_steps:
                self._emit(f"(assert (and {pre_steps}))")

    def _pre_post(self, tool: str) -> tuple[list[str], list[str]]:
        """The precondition and postcondition templates of ``tool`` (``{i}``/``{j}`` placeholders)."""
        transition = self.checked.model.transition(tool)
        slots = self.layout.slots[tool]
        locals_ = {bind.local: slots[bind.tool_param] for bind in self.checked.params.get(tool, {}).values()}
        pres = [self.translator.term(expr, "{i}", locals_) for expr in (transition.pre if transition else ())]
        posts = [self.translator.term(expr, "{i}", locals_) for expr in (transition.post if transition else ())]
        self.pre_templates[tool] = pres
        return pres, posts

    def acceptance(self, precondition: str) -> str:
        """What ``A_{i}`` equals at a step that calls a tool with this precondition (a method so that a test can
        build the encoding without refusal, which must break the corpus)."""
        return precondition

    def _emit_refusal_transitions(self) -> None:
        h = self.bound
        # A_i is defined per tool ((= t_i k) ⇒ (A_i ⇔ pre_k)) rather than as one disjunction over the tools:
        # once t_i is decided, A_i follows by unit propagation (measured on benchmarks/smt.py).
        per_step = [f"(=> (= t_{{i}} {self.noop}) (not A_{{i}}))"]
        for k, tool in enumerate(self.layout.tools):
            pres, posts = self._pre_post(tool)
            per_step.append(f"(=> (= t_{{i}} {k}) (= A_{{i}} {self.acceptance(_conj(pres))}))")
            if posts:
                per_step.append(f"(=> (and A_{{i}} (= t_{{i}} {k})) {_conj(posts)})")
        # No trace calls a tool on an identifier nobody could know: one clause per argument slot, over the tools
        # that use it for one (a clause per tool tripled the text at 15 tools and slowed every query).
        per_step += self._known_ids()
        template = f"(assert (and {' '.join(per_step)}))"
        for i in range(h):
            self._emit(template.format(i=i, j=i + 1))
        self._declare("ALLACC", "Bool")
        every = [f"(or (= t_{i} {self.noop}) A_{i})" for i in range(h)]
        self._emit(f"(assert (= ALLACC {_conj(every)}))")

    def _known_ids(self) -> list[str]:
        """Refusal semantics with ``refuse_invented_ids``: each identifier argument names a record somebody could
        know. The env answers any other with "not found", so such a call could neither change the state nor, as
        a refused call, make a conflict that is not an artefact (a refused call on an invented id that an
        unpinned check counts); the queries leave it out of their traces altogether. An identifier is a String
        parameter the world model binds (an ``Id`` slot; not free text, not an enum) named like one
        (:func:`is_identifier`; a name, a reason or an address is data the agent may compose). Known at step
        ``i``: a value of the intern table (what the scenario states, the database holds, the checks pin, the
        model or a schema default names) other than the model's enum values (statuses, not records), or one the
        state holds before the call in a variable that returns values (:func:`returning_vars`: what earlier
        accepted calls wrote, e.g. an id a create call returned). Clauses with ``{i}`` placeholders."""
        if not self.known_ids_only:
            return []
        layout = self.layout
        users: dict[int, list[int]] = {}  # Id slot index -> the tools whose identifier it holds
        for k, tool in enumerate(layout.tools):
            for name, slot in layout.slots[tool].items():
                if (
                    slot.sort == "Id"
                    and slot.enum is None
                    and slot.bound
                    and not slot.free_text
                    and is_identifier(name)
                ):
                    users.setdefault(slot.index, []).append(k)
        returned = returning_vars(self.checked.model)
        holders = [n for n in layout.dynamic if not layout.leaves[n].path and layout.leaves[n].var in returned]
        strings = [n for n in holders if layout.leaves[n].type == ScalarType("String")]
        sets = [n for n in holders if layout.leaves[n].type == ArrayType(ScalarType("String"))]
        known = []
        for index, tools in sorted(users.items()):
            arg = Slot("Id", index).var("{i}")
            statuses = [f"(not (= {arg} {n}))" for n in layout.status_ids]
            options = [_conj([f"(<= 0 {arg})", f"(< {arg} {len(layout.interned)})", *statuses])]
            options += [f"(= {arg} {layout.state('{i}', n)})" for n in strings]
            options += [f"(select {layout.state('{i}', n)} {arg})" for n in sets]
            called = _disj([f"(= t_{{i}} {k})" for k in tools])
            known.append(f"(=> {called} {_disj(options)})")
        return known

    def _emit_goal(self) -> None:
        goal = [self.translator.term(expr, self.bound, {}) for expr in self.checked.model.goal]
        self._declare("G", "Bool")
        self._emit(f"(assert (= G {_conj(goal)}))")
        if self.refusal:
            return  # FOCUS is defined with the checks (the checks on accepted calls)
        # What the forward query negates: the focus tools' preconditions and the goal.
        focus = [f"P_{self.layout.index[tool]}" for tool in self.layout.tools if tool in self.check_tools]
        self._declare("FOCUS", "Bool")
        self._emit(f"(assert (= FOCUS {_conj([*focus, 'G'])}))")

    def _emit_initial(self, initial: Mapping[str, Any]) -> None:
        for var in self.checked.model.vars:
            if var.name not in initial:
                if self.refusal:
                    self._emit_unstated(var.name)
                continue
            parts = self._initial_parts(initial[var.name], var.var_type, var.name)
            for n, part in zip(self.layout.leaves_of(var.name), parts, strict=True):
                self._emit(f"(assert (= s_0_{n} {part}))")
                if n in self.layout.static:
                    self.layout.fixed[n] = part

    def _emit_unstated(self, var: str) -> None:
        for n in self.layout.leaves_of(var):
            leaf = self.layout.leaves[n]
            if isinstance(leaf.type, ScalarType) and leaf.type.type == "String":
                sentinel = UNSTATED_BASE + len(self.unstated)
                self.unstated[n] = sentinel
                self._emit(f"(assert (= s_0_{n} {sentinel}))")
                if n in self.layout.static:
                    self.layout.fixed[n] = str(sentinel)

    def _initial_parts(self, value: Any, var_type: Any, where: str) -> list[str]:
        if isinstance(value, float) and value.is_integer() and getattr(var_type, "type", None) == "Int":
            value = int(value)
        problem = value_problem(value, var_type)
        if problem:
            raise EncodingError(f"initial value of {where}: {problem}")
        if isinstance(var_type, RecordType):
            return self.translator.value_parts(value, var_type)
        return [self.translator.scalar_value(value, var_type)]

    # --- checks ------------------------------------------------------------------------------------------------

    @property
    def world(self) -> list[str]:
        """The literals a trace the world model admits satisfies: every call accepted (the focus tools'
        preconditions, for the paper's semantics) and the goal reached."""
        if self.refusal:
            return ["ALLACC", "G"]
        return [f"P_{self.layout.index[tool]}" for tool in self.layout.tools if tool in self.check_tools] + ["G"]

    def _emit_checks(self) -> None:
        for j, check in enumerate(self.checks):
            formula = self._check(check, "")
            self._declare(f"c_{j}", "Bool")
            self._emit(f"(assert (= c_{j} {formula}))")
        if not self.refusal:
            return
        for j, check in enumerate(self.checks):
            formula = self._check(check, "a")
            self._declare(f"ca_{j}", "Bool")
            self._emit(f"(assert (= ca_{j} {formula}))")
        self._declare("FOCUS", "Bool")
        self._emit(f"(assert (= FOCUS {_conj([*(f'ca_{j}' for j in range(len(self.checks))), 'G'])}))")

    def _atom(self, atom: Call | NoCall) -> int:
        """Declare the match literals of ``atom`` (shared by CALL and NO-CALL of one tool and arguments)."""
        key = atom.match_key
        if key in self._atoms:
            return self._atoms[key]
        x = len(self._atoms)
        self._atoms[key] = x
        k = self.layout.index[atom.tool]
        slots = self.layout.slots[atom.tool]
        conjuncts = [f"(= t_{{i}} {k})"]
        for name, value in atom.args.items():
            if name not in atom.ordered:
                conjuncts += _pin(slots[name], value, "{i}", self.layout)
        if atom.ordered:
            paired = [(slots[name], atom.args[name]) for name in atom.ordered]
            conjuncts += _pin_paired(paired, "{i}", self.layout)
        template = f"(declare-const m_{x}_{{i}} Bool)\n(assert (= m_{x}_{{i}} {_conj(conjuncts)}))"
        for i in range(self.bound):
            self._emit(template.format(i=i))
        return x

    def _match(self, atom: Call | NoCall, family: str) -> int:
        """The atom's index; family ``"a"`` also defines ``ma_x_i``: step ``i`` matches and is accepted."""
        x = self._atom(atom)
        if family and x not in self._accepted_atoms:
            self._accepted_atoms.add(x)
            for i in range(self.bound):
                self._declare(f"ma_{x}_{i}", "Bool")
                self._emit(f"(assert (= ma_{x}_{i} (and m_{x}_{i} A_{i})))")
        return x

    def _seen_before(self, x: int, family: str) -> None:
        """``sn_x_i``: some step before ``i`` matches atom ``x`` (``sn_x_0`` is false); ``sna`` for accepted."""
        if (x, family) in self._seen_done:
            return
        self._seen_done.add((x, family))
        sn, m = f"sn{family}_{x}", f"m{family}_{x}"
        self._declare(f"{sn}_0", "Bool")
        self._emit(f"(assert (not {sn}_0))")
        for i in range(1, self.bound + 1):
            self._declare(f"{sn}_{i}", "Bool")
            self._emit(f"(assert (= {sn}_{i} (or {sn}_{i - 1} {m}_{i - 1})))")

    def _later(self, x: int, family: str) -> None:
        """``lt_x_i``: some step after ``i`` matches atom ``x`` (``lt_x_{h-1}`` is false); ``lta`` for accepted."""
        if (x, family) in self._later_done:
            return
        self._later_done.add((x, family))
        h = self.bound
        lt, m = f"lt{family}_{x}", f"m{family}_{x}"
        self._declare(f"{lt}_{h - 1}", "Bool")
        self._emit(f"(assert (not {lt}_{h - 1}))")
        for i in range(h - 2, -1, -1):
            self._declare(f"{lt}_{i}", "Bool")
            self._emit(f"(assert (= {lt}_{i} (or {lt}_{i + 1} {m}_{i + 1})))")

    def _occurs(self, x: int, family: str) -> str:
        return _disj([f"m{family}_{x}_{i}" for i in range(self.bound)])

    def _check(self, check: Check, family: str) -> str:
        """The check over the match literals of ``family``: ``""`` every call, ``"a"`` accepted calls only; a
        check outside the trace formula (an ANSWER on the final answer: its operator's mark) is true here."""
        if not in_trace_formula(check):
            return "true"
        return _CHECK_ENCODERS[type(check)](self, check, family)

    def _atom_check(self, check: Call | NoCall, f: str) -> str:
        occurs = self._occurs(self._match(check, f), f)
        return occurs if isinstance(check, Call) else f"(not {occurs})"

    def _or_check(self, check: Or, f: str) -> str:
        return f"(or {self._check(check.left, f)} {self._check(check.right, f)})"

    def _conditional_check(self, check: After | Before, f: str) -> str:
        h = self.bound
        target, anchor = self._match(check.target, f), self._match(check.anchor, f)
        if isinstance(check, After):
            self._seen_before(anchor, f)
            side = f"sn{f}"
        else:
            self._later(anchor, f)
            side = f"lt{f}"
        if isinstance(check.target, Call):
            return _conj([f"(=> m{f}_{target}_{j} {side}_{anchor}_{j})" for j in range(h)])
        return _conj([f"(not (and m{f}_{target}_{j} {side}_{anchor}_{j}))" for j in range(h)])

    def _follows_check(self, check: Follows, f: str) -> str:
        call, anchor = self._match(check.call, f), self._match(check.anchor, f)
        self._seen_before(anchor, f)
        every = [f"(=> m{f}_{call}_{j} sn{f}_{anchor}_{j})" for j in range(self.bound)]
        return _conj([self._occurs(call, f), *every])

    def _precedes_check(self, check: Precedes, f: str) -> str:
        call, anchor = self._match(check.call, f), self._match(check.anchor, f)
        self._seen_before(call, f)
        every = [f"(=> m{f}_{anchor}_{i} sn{f}_{call}_{i})" for i in range(self.bound)]
        return _conj([self._occurs(call, f), self._occurs(anchor, f), *every])


_CHECK_ENCODERS: dict[type, Callable[[Encoding, Any, str], str]] = {
    Call: Encoding._atom_check,
    NoCall: Encoding._atom_check,
    Or: Encoding._or_check,
    After: Encoding._conditional_check,
    Before: Encoding._conditional_check,
    Follows: Encoding._follows_check,
    Precedes: Encoding._precedes_check,
}
"""The Z3 encoding of each check operator (the semantics are :mod:`mantra_env.checks.semantics`'; a test holds
this table to the same node types as the grader's evaluators, and the agreement tests hold the two to one
meaning)."""


def _present(slot: Slot, step: int | str) -> list[str]:
    """What a pin needs of the argument's presence: an optional argument must be passed, unless it has a schema
    default (an omitted argument is the default, asserted per step, and the pin compares that)."""
    return [slot.flag(step)] if slot.optional and not slot.has_default else []


def _pin(slot: Slot, value: Any, step: int | str, layout: Layout) -> list[str]:
    """Conjuncts saying that the argument in ``slot`` at ``step`` is present and equals ``value`` (a list:
    position by position if ``slot.ordered``, else up to permutation, as the grader matches)."""
    present = _present(slot, step)
    if slot.sort == "List":
        return _pin_list(slot, value, step, layout, present)
    if slot.sort == "Id" and slot.enum is None:
        free = slot.free_text and isinstance(value, str)
        same = [f"(= {slot.var(step)} {n})" for n in layout.text_ids(value)] if free else []
        if same:  # any interned string equal after normalisation (the pinned one is interned: never empty)
            return [*present, same[0] if len(same) == 1 else f"(or {' '.join(same)})"]
        return [*present, f"(= {slot.var(step)} {layout.id_of(id_value(value, slot))})"]
    equal = _equals(slot.var(step), slot.sort, slot.enum, value, layout)
    return ["false"] if equal == "false" else [*present, equal]


def _equals(var: str, sort: str, enum: tuple[str, ...] | None, value: Any, layout: Layout) -> str:
    """The term saying that ``var`` (of ``sort``) holds the JSON ``value`` ("false" if it cannot)."""
    if enum is not None:
        if not isinstance(value, str) or value not in enum:
            return "false"  # a schema-valid call cannot carry it
        return f"(= {var} {enum.index(value)})"
    if sort == "Id":
        key = value_key(value)
        number = layout.interned.get(key) if key is not None else None
        return f"(= {var} {number})" if number is not None else "false"
    if sort == "Bool":
        return f"(= {var} {bool_term(value)})" if isinstance(value, bool) else "false"
    if sort == "Real":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "false"
        return f"(= {var} {real_term(value)})"
    if isinstance(value, int) and not isinstance(value, bool):  # an Int slot
        return f"(= {var} {int_term(value)})"
    return "false"


def _element_is(slot: Slot, step: int | str, k: int, item: Any, layout: Layout) -> str:
    """The term saying that element ``k`` of the list in ``slot`` at ``step`` is ``item``."""
    if slot.columns[0].field is None:
        return _equals(slot.columns[0].var(step, k), slot.columns[0].sort, slot.columns[0].enum, item, layout)
    if not isinstance(item, dict) or set(item) != {column.field for column in slot.columns}:
        return "false"
    return _conj([_equals(c.var(step, k), c.sort, c.enum, item[c.field or ""], layout) for c in slot.columns])


def _fits(slot: Slot, value: list[Any]) -> None:
    if len(value) > slot.width:
        raise EncodingError(
            f"a pinned list of {len(value)} elements is longer than the list bound {slot.width}; raise list_bound"
        )


def _pin_list(slot: Slot, value: Any, step: int | str, layout: Layout, present: list[str]) -> list[str]:
    """A list pinned up to permutation, or position by position if ``slot.ordered`` (a schema default: an
    omitted argument is the default itself)."""
    if not isinstance(value, list):
        # A list slot only pairing made (no model reads it) holds a non-list value as length ``width + 1`` and
        # the value's id in the first element slot, as pinned traces do (``pinned.py``): the grader compares it
        # by equality. A list the model reads never matches one.
        number = layout.interned.get(value_key(value) or "")
        if slot.bound or not slot.columns or slot.columns[0].sort != "Id" or number is None:
            return ["false"]
        return [*present, f"(= {slot.var(step)} {slot.width + 1})", f"(= {slot.columns[0].var(step, 0)} {number})"]
    _fits(slot, value)
    conjuncts = [*present, f"(= {slot.var(step)} {len(value)})"]
    if slot.ordered:
        conjuncts += [_element_is(slot, step, k, item, layout) for k, item in enumerate(value)]
    else:  # a permutation: each distinct value occurs among the first len(value) elements as often as pinned
        conjuncts += _row_counts([(slot, value)], step, layout)
    return ["false"] if "false" in conjuncts else conjuncts


def _pin_paired(paired: list[tuple[Slot, Any]], step: int | str, layout: Layout) -> list[str]:
    """Paired lists pinned together (``semantics.paired_equal``): every list has its pinned length and each
    pinned row (the tuple of the lists' ``k``-th elements) occurs among the rows as often as pinned; pinned
    lists of different lengths, position by position."""
    conjuncts: list[str] = []
    for slot, value in paired:
        if slot.sort != "List" or not isinstance(value, list):
            return ["false"]  # a layout error elsewhere; a non-list value never matches a paired list
        _fits(slot, value)
        conjuncts += _present(slot, step)
        conjuncts.append(f"(= {slot.var(step)} {len(value)})")
    if len({len(value) for _, value in paired}) > 1:
        conjuncts += [
            _element_is(slot, step, k, item, layout) for slot, value in paired for k, item in enumerate(value)
        ]
    else:
        conjuncts += _row_counts(paired, step, layout)
    return ["false"] if "false" in conjuncts else conjuncts


def _row_counts(lists: list[tuple[Slot, list[Any]]], step: int | str, layout: Layout) -> list[str]:
    """Each distinct pinned row of ``lists`` (equal lengths) occurs among their first ``length`` rows as often
    as pinned: the multiset of rows is the pinned one (one list: the multiset of its elements)."""
    length = len(lists[0][1])
    counts: dict[str, tuple[int, int]] = {}  # row key -> (first row index, count)
    for k in range(length):
        key = json.dumps([value_key(value[k]) or repr(value[k]) for _, value in lists])
        first, count = counts.get(key, (k, 0))
        counts[key] = (first, count + 1)
    conjuncts = []
    for first, count in counts.values():
        hits = " ".join(
            f"(ite {_conj([_element_is(slot, step, k, value[first], layout) for slot, value in lists])} 1 0)"
            for k in range(length)
        )
        conjuncts.append(f"(= (+ 0 {hits}) {count})")
    return conjuncts


def needs_extensionality(checked: CheckedModel) -> bool:
    """Whether some equality between arrays can be false in the encoding: one in a precondition or the goal
    (which queries negate), or under a negation in a postcondition.

    Every other array equality of the encoding (frames, stutters, initial values, positive postconditions) is
    asserted positively, and then the array theory without the extensionality axiom has a model exactly when
    the full theory has one: mapping each array of such a model to its function keeps every equality that
    held and only makes more equalities true. Z3 without extensionality solves set updates from list
    arguments orders of magnitude faster (``benchmarks/smt.py`` row ``15+L``), so the solver drops the axiom
    whenever this returns False.
    """
    model = checked.model
    both = [*(e for t in model.transitions for e in t.pre), *model.goal]
    positive = [e for t in model.transitions for e in t.post]
    stack: list[tuple[Expr, bool, bool]] = [(e, True, True) for e in both] + [(e, True, False) for e in positive]
    while stack:
        expr, pos, neg = stack.pop()
        if not isinstance(expr, OpApp):
            continue  # array equalities are OpApps; other nodes hold terms, never formulas over arrays
        if expr.symbol == "not":
            stack.append((expr.args[0], neg, pos))
        elif expr.symbol == "=>":
            stack.extend((arg, neg, pos) for arg in expr.args[:-1])
            stack.append((expr.args[-1], pos, neg))
        elif expr.symbol in ("and", "or"):
            stack.extend((arg, pos, neg) for arg in expr.args)
        elif expr.symbol == "=":
            if isinstance(checked.type_of(expr.args[0]), ArrayType):
                if neg:
                    return True
            else:  # a Bool equality uses each side both ways
                stack.extend((arg, True, True) for arg in expr.args)
    return False


def _conj(parts: Sequence[str]) -> str:
    if not parts:
        return "true"
    return parts[0] if len(parts) == 1 else "(and " + " ".join(parts) + ")"


def _disj(parts: Sequence[str]) -> str:
    if not parts:
        return "false"
    return parts[0] if len(parts) == 1 else "(or " + " ".join(parts) + ")"


def encode(
    model: WorldModel | CheckedModel | None,
    checks: Sequence[Check],
    bound: int,
    initial: Mapping[str, Any] | None = None,
    tools: Sequence[ToolSpec] | Mapping[str, ToolSpec] | None = None,
    semantics: Semantics = "paper",
) -> Encoding:
    """Encode ``model`` (type-checked here if needed) and ``checks`` at ``bound`` under ``semantics``."""
    checked = model if isinstance(model, CheckedModel) else check_model(model or WorldModel(), tools)
    return Encoding(checked, checks, bound, initial, semantics=semantics)
