"""Warnings about argument-insensitive world models (issue 14.4), recorded, never fatal; used by the generation
pipeline and the authoring tool.

A postcondition that updates the state whatever the call's arguments (``(= (next cancelled) true)`` for
``cancel_order(order_id)``) lets a call with other arguments reach the goal, so the backward audit finds every
check that pins the scenario's arguments over-restrictive. Two lints:

- :func:`insensitive_writes` (the world-model stage, which never sees the checks): a write tool's
  postcondition ignores every identifying parameter (``*_id``, ``*_ids``, ``id``; the required ones if it has
  none).
- :func:`ignored_pins` (the validation stage and the authoring tool, which see both artifacts): a postcondition of
  a tool the checks pin ignores the parameters the checks pin.

A third, on the checks alone: :func:`free_text_pins` (the checks stage, config ``checks.lint_free_text_pins``): a
check pins a free-text parameter (schema mark ``x-free-text``: an address, a reason), which a correct agent words
otherwise (an address without its country), so the pin fails it; normalisation forgives case and spacing only.

They are not sent back to the writers as repair requests: a write whose effect legitimately does not depend on
an argument (a free-text note) would otherwise cost a sample its repair attempts; the world-model prompt says
why effects should depend on the arguments instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from mantra_env.case import CaseCheck
from mantra_env.checks.ast import atoms
from mantra_env.tools import FREE_TEXT_KEY, ToolSpec
from mantra_env.worldmodel.ast import ParamRef, Transition, WorldModel, subexpressions

_IDENTIFYING = re.compile(r"(^|_)ids?$")


class Lint(BaseModel):
    """One warning: what, where, and how to fix it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str
    place: str
    message: str
    hint: str

    def render(self) -> str:
        return f"{self.place}: {self.message} ({self.hint})"


def identifying_params(spec: ToolSpec) -> list[str]:
    """The parameters that say which record a call acts on."""
    named = [name for name in spec.properties if _IDENTIFYING.search(name)]
    return named or [name for name in spec.properties if name in spec.required]


def post_params(transition: Transition) -> set[str]:
    """The tool parameters the transition's postconditions read (through their local names)."""
    locals_ = {bind.local: bind.tool_param for bind in transition.params}
    return {
        locals_[node.name]
        for expr in transition.post
        for node in subexpressions(expr)
        if isinstance(node, ParamRef) and node.name in locals_
    }


def _place(transition: Transition) -> str:
    line = f" (line {transition.span.line})" if transition.span is not None else ""
    return f"transition {transition.tool}{line}"


def insensitive_writes(model: WorldModel, tools: Sequence[ToolSpec]) -> list[Lint]:
    """Write tools whose postconditions change the state but read none of their identifying parameters."""
    specs = {spec.name: spec for spec in tools}
    found: list[Lint] = []
    for transition in model.transitions:
        spec = specs.get(transition.tool)
        if spec is None or spec.kind != "write" or not transition.post:
            continue
        identifying = identifying_params(spec)
        if identifying and not set(identifying) & post_params(transition):
            found.append(
                Lint(
                    code="argument_insensitive_effect",
                    place=_place(transition),
                    message=f"the postcondition ignores {', '.join(identifying)}: a call on any record has the "
                    "same effect",
                    hint="bind the parameter in (params ...) and make the effect conditional on it, e.g. "
                    "(= (next done) (or done (= (param id) order_id)))",
                )
            )
    return found


def _pins(checks: Iterable[CaseCheck]) -> dict[str, set[str]]:
    pinned: dict[str, set[str]] = {}
    for entry in checks:
        for atom in atoms(entry.check):
            if atom.args:
                pinned.setdefault(atom.tool, set()).update(atom.args)
    return pinned


def ignored_pins(model: WorldModel, checks: Mapping[str, Sequence[CaseCheck]]) -> list[Lint]:
    """Per scenario, the pinned parameters of a tool whose (non-empty) postcondition does not read them."""
    found: list[Lint] = []
    for scenario_id, entries in checks.items():
        for tool, pinned in sorted(_pins(entries).items()):
            transition = model.transition(tool)
            if transition is None or not transition.post:
                continue
            ignored = sorted(pinned - post_params(transition))
            if ignored:
                found.append(
                    Lint(
                        code="pinned_argument_ignored",
                        place=f"{scenario_id}: {_place(transition)}",
                        message=f"the checks pin {', '.join(ignored)} of {tool} but its postcondition ignores "
                        f"{'it' if len(ignored) == 1 else 'them'}: the backward audit will find those pins "
                        "over-restrictive",
                        hint="make the effect depend on the pinned arguments, or pin only what the manual fixes",
                    )
                )
    return found


def free_text_pins(scenario_id: str, checks: Sequence[CaseCheck], tools: Sequence[ToolSpec]) -> list[Lint]:
    """The checks of one scenario that pin a free-text parameter with a positive atom (a ``NO-CALL`` pinning free
    text forbids one wording only, which is the writer's business too, but fails no correct agent)."""
    specs = {spec.name: spec for spec in tools}
    found: list[Lint] = []
    for entry in checks:
        for atom in atoms(entry.check):
            spec = specs.get(atom.tool)
            if spec is None or atom.op != "call":
                continue
            pinned = sorted(name for name in atom.args if spec.free_text(name))
            if pinned:
                found.append(
                    Lint(
                        code="free_text_pinned",
                        place=f"{scenario_id}: check {entry.id}",
                        message=f"pins {', '.join(pinned)} of {atom.tool}, free text ({FREE_TEXT_KEY}): a correct "
                        "agent that words it otherwise fails the check",
                        hint="pin the identifiers and stated values only; leave free text unpinned",
                    )
                )
    return found
