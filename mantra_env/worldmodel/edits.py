"""The typed edit language of the repair loop (paper Sec. "Deterministic Edits and Backward Audit").

A repair is never free-form text: it is a list of :data:`Edit` records (an LLM judge emits them as JSON
against :data:`EDIT_ADAPTER`'s schema; a reviewer makes them in the web UI). :func:`apply_edit` applies one
deterministically to a :class:`Draft` (world model + checks + locks) and returns a new draft, or raises
:class:`EditRejected` and leaves the draft as it was when:

* the edit does not fit the draft (no such transition, index out of range, name taken, unknown check id);
* the result does not parse or type-check (every diagnostic is attached, so the judge can retry);
* the edit is automated (``author="llm"``) and touches a part a human edited (a *locked* part).

A human edit locks the part it touches: ``var:NAME``, ``const:NAME``, ``pre:TOOL``, ``post:TOOL``,
``transition:TOOL``, ``check:ID`` or ``goal:SCENARIO``. Human-authored checks are locked from the start.

Goal edits change the model's ``(goal ...)``: in the repair loop that is one scenario's goal (the draft's
``scenario``), the final state a compliant run reaches. A judge adds to it what the manual makes a compliant run
do even when nothing changes (a refusal still reads the order first), which the backward audit otherwise
cannot tell from an over-restrictive check.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from mantra_env.case import Author, CaseCheck
from mantra_env.checks import parse_check
from mantra_env.errors import CheckSyntaxError, CheckValueError, MantraError
from mantra_env.tools import ToolSpec, call_problem, with_list_order
from mantra_env.worldmodel.ast import ConstDecl, EnumType, ScalarType, Transition, VarDecl, WorldModel
from mantra_env.worldmodel.diagnostics import Diagnostic, DslError
from mantra_env.worldmodel.parser import parse_expr, parse_transition, parse_type, parse_value
from mantra_env.worldmodel.typecheck import check_model


class EditRejected(MantraError, ValueError):
    """An edit could not be applied; the draft is unchanged.

    Attributes:
        code: ``not_applicable``, ``locked``, ``invalid`` (does not parse / type-check) or ``bad_check``.
        diagnostics: the DSL problems, for ``invalid``.
    """

    def __init__(self, code: str, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        self.code = code
        self.diagnostics = list(diagnostics)
        details = "".join(f"\n  {d.render()}" for d in self.diagnostics)
        super().__init__(f"edit rejected ({code}): {message}{details}")


class _Edit(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    author: Author = "llm"
    reason: str = Field(default="", description="Why the edit is made (kept in the validation history).")


class AddCondition(_Edit):
    """Append a pre- or postcondition to a transition."""

    op: Literal["add_condition"] = "add_condition"
    tool: str
    section: Literal["pre", "post"]
    expr: str = Field(description="The condition in DSL syntax, e.g. (= inventory_checked true).")


class RemoveCondition(_Edit):
    """Remove the ``index``-th (0-based) pre- or postcondition of a transition."""

    op: Literal["remove_condition"] = "remove_condition"
    tool: str
    section: Literal["pre", "post"]
    index: int = Field(ge=0)


class ReplaceCondition(_Edit):
    """Replace the ``index``-th (0-based) pre- or postcondition of a transition."""

    op: Literal["replace_condition"] = "replace_condition"
    tool: str
    section: Literal["pre", "post"]
    index: int = Field(ge=0)
    expr: str


class AddTransition(_Edit):
    """Add a transition for a tool that has none."""

    op: Literal["add_transition"] = "add_transition"
    transition: str = Field(description="The whole (transition TOOL (params ...) (pre ...) (post ...)) clause.")


class RemoveTransition(_Edit):
    op: Literal["remove_transition"] = "remove_transition"
    tool: str


class AddVariable(_Edit):
    op: Literal["add_var"] = "add_var"
    name: str
    type: str = Field(description='A DSL type, e.g. Bool or (Enum "NONE" "BOOKED").')
    initial: bool | int | float | str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,  # edits recorded before the field keep their bytes
        description='Its value before any call (false, 0, 0.0, "", an enum option), for a Bool, Int, Real, '
        "String or Enum variable. Without it the variable starts free: the solver may choose any start value, "
        "so a goal or precondition on it says nothing.",
    )


class RemoveVariable(_Edit):
    op: Literal["remove_var"] = "remove_var"
    name: str


class ChangeVariable(_Edit):
    """Give a state variable a new type."""

    op: Literal["change_var"] = "change_var"
    name: str
    type: str


class AddConstant(_Edit):
    op: Literal["add_const"] = "add_const"
    name: str
    type: str
    value: str = Field(description='A DSL value: 3, 2.5, true, "text", (v ...) for arrays, ((f v) ...) for records.')


class RemoveConstant(_Edit):
    op: Literal["remove_const"] = "remove_const"
    name: str


class ChangeConstant(_Edit):
    """Give a constant a new type and value."""

    op: Literal["change_const"] = "change_const"
    name: str
    type: str
    value: str


class AddGoal(_Edit):
    """Append a conjunct to the scenario's goal."""

    op: Literal["add_goal"] = "add_goal"
    expr: str = Field(description="A Boolean DSL expression over the state, e.g. order_checked.")


class RemoveGoal(_Edit):
    """Remove the ``index``-th (0-based) conjunct of the scenario's goal."""

    op: Literal["remove_goal"] = "remove_goal"
    index: int = Field(ge=0)


class ReplaceGoal(_Edit):
    """Replace the ``index``-th (0-based) conjunct of the scenario's goal."""

    op: Literal["replace_goal"] = "replace_goal"
    index: int = Field(ge=0)
    expr: str


class AddCheck(_Edit):
    op: Literal["add_check"] = "add_check"
    check: str = Field(description="The check in its text form.")
    id: str | None = Field(default=None, description="Defaults to the first free c<N>.")


class RemoveCheck(_Edit):
    op: Literal["remove_check"] = "remove_check"
    id: str


class ReplaceCheck(_Edit):
    op: Literal["replace_check"] = "replace_check"
    id: str
    check: str


Edit: TypeAlias = Annotated[
    AddCondition
    | RemoveCondition
    | ReplaceCondition
    | AddTransition
    | RemoveTransition
    | AddVariable
    | RemoveVariable
    | ChangeVariable
    | AddConstant
    | RemoveConstant
    | ChangeConstant
    | AddGoal
    | RemoveGoal
    | ReplaceGoal
    | AddCheck
    | RemoveCheck
    | ReplaceCheck,
    Field(discriminator="op"),
]
EDIT_ADAPTER: TypeAdapter[Edit] = TypeAdapter(Edit)


@dataclasses.dataclass(frozen=True)
class Draft:
    """What the repair loop edits: a world model (with the scenario's goal), a check set, and the parts humans
    locked. ``scenario`` names whose goal ``model.goal`` is (goal edits touch the part ``goal:SCENARIO``)."""

    model: WorldModel
    checks: tuple[CaseCheck, ...] = ()
    locks: frozenset[str] = frozenset()
    scenario: str | None = None
    initial: Mapping[str, bool | int | float | str] = dataclasses.field(default_factory=dict)
    """Start values the edits gave variables they added (``add_var`` with ``initial``); the caller merges them
    into the world model's initial values. A removed variable's entry is dropped."""

    def locked(self, part: str) -> bool:
        if part.startswith("check:"):
            entry = next((c for c in self.checks if c.id == part[6:]), None)
            if entry is not None and entry.author == "human":
                return True
        return part in self.locks


def edit_part(edit: Edit) -> str:
    """The lockable part an edit touches (``goal`` stands for the draft's ``goal:SCENARIO``)."""
    if isinstance(edit, AddCondition | RemoveCondition | ReplaceCondition):
        return f"{edit.section}:{edit.tool}"
    if isinstance(edit, AddTransition):
        return f"transition:{_transition_tool(edit.transition)}"
    if isinstance(edit, RemoveTransition):
        return f"transition:{edit.tool}"
    if isinstance(edit, AddVariable | RemoveVariable | ChangeVariable):
        return f"var:{edit.name}"
    if isinstance(edit, AddConstant | RemoveConstant | ChangeConstant):
        return f"const:{edit.name}"
    if isinstance(edit, AddGoal | RemoveGoal | ReplaceGoal):
        return "goal"
    if isinstance(edit, AddCheck):
        return f"check:{edit.id or '?'}"
    return f"check:{edit.id}"


def _transition_tool(text: str) -> str:
    parts = text.replace("(", " ").split()
    return parts[1] if len(parts) > 1 else "?"


def apply_edit(draft: Draft, edit: Edit, tools: Sequence[ToolSpec] | Mapping[str, ToolSpec] | None = None) -> Draft:
    """Apply one edit; the result type-checks (against ``tools`` if given) or :class:`EditRejected` is raised."""
    return apply_edits(draft, [edit], tools)


def apply_edits(
    draft: Draft, edits: Sequence[Edit], tools: Sequence[ToolSpec] | Mapping[str, ToolSpec] | None = None
) -> Draft:
    """Apply edits in order, all or nothing. The model is type-checked once, after the last edit, so that a
    batch may change a variable's type and the conditions that use it together. Given ``tools``, a check an edit
    writes must call tools that exist with parameters they take, and its pinned lists are stamped with the tool
    schema's pairing (:func:`mantra_env.tools.with_list_order`), as generated checks are."""
    specs = {spec.name: spec for spec in tools} if tools is not None and not isinstance(tools, Mapping) else tools
    model, checks, locks, initial = draft.model, draft.checks, set(draft.locks), dict(draft.initial)
    for number, edit in enumerate(edits):
        current = Draft(model, checks, frozenset(locks), draft.scenario, initial)
        part = edit_part(edit)
        if part == "goal":
            part = f"goal:{draft.scenario}"
        where = f"edit {number + 1} of {len(edits)} ({edit.op})" if len(edits) > 1 else edit.op
        if edit.author == "llm" and current.locked(part) and not isinstance(edit, AddCheck):
            raise EditRejected("locked", f"{where}: {part} was edited by a human; automated edits need approval")
        try:
            model, checks = _apply(current, edit)
            if specs is not None and isinstance(edit, AddCheck | ReplaceCheck):
                checks = _fitted(checks, -1 if isinstance(edit, AddCheck) else edit.id, specs)
        except DslError as error:
            raise EditRejected("invalid", f"{where}: its DSL text does not parse", error.diagnostics) from None
        except (CheckSyntaxError, CheckValueError) as error:
            raise EditRejected("bad_check", f"{where}: {error}") from None
        except EditRejected as error:
            raise EditRejected(error.code, f"{where}: {str(error).split(': ', 1)[1]}", error.diagnostics) from None
        if isinstance(edit, AddVariable | ChangeVariable | RemoveVariable):
            initial.pop(edit.name, None)
        if isinstance(edit, AddVariable) and edit.initial is not None:
            problem = _start_problem(edit.initial, model.var(edit.name))
            if problem:
                raise EditRejected("invalid", f"{where}: initial {edit.initial!r} of {edit.name}: {problem}")
            initial[edit.name] = edit.initial
        if edit.author == "human":  # a human decision stays locked, removals included
            locks.add(f"check:{checks[-1].id}" if isinstance(edit, AddCheck) else part)
    try:
        check_model(model, tools)
    except DslError as error:
        raise EditRejected("invalid", "the edited model does not type-check", error.diagnostics) from None
    return Draft(model, checks, frozenset(locks), draft.scenario, initial)


def _start_problem(value: bool | int | float | str, declared: VarDecl | None) -> str | None:
    """Why ``value`` cannot start the variable ``declared`` (None: it can)."""
    dsl_type = declared.var_type if declared is not None else None
    if isinstance(dsl_type, EnumType):
        return None if value in dsl_type.values else f"not one of the options {', '.join(dsl_type.values)}"
    if not isinstance(dsl_type, ScalarType):
        return "an initial value is given for a Bool, Int, Real, String or Enum variable only"
    fits = {
        "Bool": isinstance(value, bool),
        "Int": isinstance(value, int) and not isinstance(value, bool),
        "Real": isinstance(value, int | float) and not isinstance(value, bool),
        "String": isinstance(value, str),
    }
    return None if fits[dsl_type.type] else f"not a {dsl_type.type} value"


def _not_applicable(message: str) -> EditRejected:
    return EditRejected("not_applicable", message)


def _apply(draft: Draft, edit: Edit) -> tuple[WorldModel, tuple[CaseCheck, ...]]:
    model, checks = draft.model, draft.checks
    if isinstance(edit, AddCondition | RemoveCondition | ReplaceCondition):
        transition = model.transition(edit.tool)
        if transition is None:
            raise _not_applicable(f"there is no transition for {edit.tool}")
        entries = list(getattr(transition, edit.section))
        if isinstance(edit, AddCondition):
            entries.append(parse_expr(edit.expr, f"{edit.section} of {edit.tool}"))
        else:
            if edit.index >= len(entries):
                raise _not_applicable(
                    f"{edit.tool} has {len(entries)} {edit.section}condition(s); index {edit.index} is out of range"
                )
            if isinstance(edit, ReplaceCondition):
                entries[edit.index] = parse_expr(edit.expr, f"{edit.section} of {edit.tool}")
            else:
                del entries[edit.index]
        if edit.section == "pre":
            changed = dataclasses.replace(transition, pre=tuple(entries))
        else:
            changed = dataclasses.replace(transition, post=tuple(entries))
        return _with_transition(model, edit.tool, changed), checks
    if isinstance(edit, AddTransition):
        transition = parse_transition(edit.transition)
        if model.transition(transition.tool) is not None:
            raise _not_applicable(f"{transition.tool} already has a transition; edit its conditions instead")
        return dataclasses.replace(model, transitions=(*model.transitions, transition)), checks
    if isinstance(edit, RemoveTransition):
        if model.transition(edit.tool) is None:
            raise _not_applicable(f"there is no transition for {edit.tool}")
        return _with_transition(model, edit.tool, None), checks
    if isinstance(edit, AddVariable | ChangeVariable | RemoveVariable):
        exists = model.var(edit.name) is not None
        if isinstance(edit, AddVariable) == exists:
            raise _not_applicable(f"state variable {edit.name} {'already exists' if exists else 'does not exist'}")
        variables = [v for v in model.vars if v.name != edit.name]
        if not isinstance(edit, RemoveVariable):
            new = VarDecl(edit.name, parse_type(edit.type))
            variables = [new if v.name == edit.name else v for v in model.vars] if exists else [*variables, new]
        return dataclasses.replace(model, vars=tuple(variables)), checks
    if isinstance(edit, AddConstant | ChangeConstant | RemoveConstant):
        exists = model.const(edit.name) is not None
        if isinstance(edit, AddConstant) == exists:
            raise _not_applicable(f"constant {edit.name} {'already exists' if exists else 'does not exist'}")
        consts = [c for c in model.consts if c.name != edit.name]
        if not isinstance(edit, RemoveConstant):
            new_const = ConstDecl(edit.name, parse_type(edit.type), parse_value(edit.value))
            consts = [new_const if c.name == edit.name else c for c in model.consts] if exists else [*consts, new_const]
        return dataclasses.replace(model, consts=tuple(consts)), checks
    if isinstance(edit, AddGoal | RemoveGoal | ReplaceGoal):
        goal = list(model.goal)
        if isinstance(edit, AddGoal):
            goal.append(parse_expr(edit.expr, "goal"))
        elif edit.index >= len(goal):
            raise _not_applicable(f"the goal has {len(goal)} conjunct(s); index {edit.index} is out of range")
        elif isinstance(edit, ReplaceGoal):
            goal[edit.index] = parse_expr(edit.expr, "goal")
        else:
            del goal[edit.index]
        return dataclasses.replace(model, goal=tuple(goal)), checks
    return model, _apply_check(checks, edit)


def _apply_check(checks: tuple[CaseCheck, ...], edit: Edit) -> tuple[CaseCheck, ...]:
    ids = [entry.id for entry in checks]
    if isinstance(edit, AddCheck):
        new_id = edit.id or next(f"c{n}" for n in range(len(ids) + 1) if f"c{n}" not in ids)
        if new_id in ids:
            raise _not_applicable(f"check id {new_id} is taken")
        try:
            entry = CaseCheck(id=new_id, check=parse_check(edit.check), author=edit.author)
        except ValueError as error:  # an id pydantic rejects
            raise EditRejected("bad_check", str(error)) from None
        return (*checks, entry)
    assert isinstance(edit, RemoveCheck | ReplaceCheck)
    if edit.id not in ids:
        raise _not_applicable(f"there is no check {edit.id}; checks: {', '.join(ids) or '(none)'}")
    if isinstance(edit, RemoveCheck):
        if len(checks) == 1:
            raise _not_applicable("a case needs at least one check; replace it instead")
        return tuple(entry for entry in checks if entry.id != edit.id)
    replaced = CaseCheck(id=edit.id, check=parse_check(edit.check), author=edit.author)
    return tuple(replaced if entry.id == edit.id else entry for entry in checks)


def _fitted(checks: tuple[CaseCheck, ...], which: int | str, specs: Mapping[str, ToolSpec]) -> tuple[CaseCheck, ...]:
    """``checks`` with the edited one (the last, or the one with id ``which``) checked against the tools and
    stamped with their list pairing."""
    fitted = []
    for number, entry in enumerate(checks):
        if which != entry.id and not (which == -1 and number == len(checks) - 1):
            fitted.append(entry)
            continue
        for atom in entry.check.atoms:
            if problem := call_problem(atom.tool, atom.args, specs):
                raise EditRejected("bad_check", f"check {entry.id} {problem}")
        fitted.append(entry.model_copy(update={"check": with_list_order(entry.check, specs)}))
    return tuple(fitted)


def _with_transition(model: WorldModel, tool: str, new: Transition | None) -> WorldModel:
    """``model`` with the transition of ``tool`` replaced by ``new`` (removed if None), in place."""
    transitions: list[Transition] = []
    for transition in model.transitions:
        if transition.tool != tool:
            transitions.append(transition)
        elif new is not None:
            transitions.append(new)
    return dataclasses.replace(model, transitions=tuple(transitions))
