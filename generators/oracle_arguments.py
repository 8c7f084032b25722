"""Stage ``oracle_arguments``: the values a validated case's oracle needs and nothing in the case gives.

The oracle replays the case's compliant witness (:mod:`mantra_env.oracle`); its arguments come from the checks, the
scenario's ``argument_bindings`` and the witness. A free-text argument no check pins and the world model does not
track (a justification, a summary) is in none of them when the scenario writer gave no binding for it, and the
case would be screened out as ``oracle_error`` although it is sound. Before the export, the scenario writer is
asked for exactly those values (``oracle_arguments/<scenario id>``), with the scenario, the plan and the tools;
the answer becomes part of the case's ``argument_bindings``. A case whose plan is complete asks nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from mantra_env.case import Case
from mantra_env.generators.llm import AnswerCheck, LLMClient, RepairNeeded
from mantra_env.generators.prompts import SINGLE_TURN, Messages, tool_block
from mantra_env.oracle import MissingArguments
from mantra_env.tools import ToolSpec, fits_schema


class OracleArguments(BaseModel):
    """The answer: per tool, the values of the parameters the request lists."""

    model_config = ConfigDict(extra="forbid")

    argument_bindings: dict[str, dict[str, JsonValue]] = Field(
        description="tool name -> parameter name -> the value a compliant agent would pass"
    )


class Gap(BaseModel):
    model_config = ConfigDict(frozen=True)

    tool: str
    names: list[str]


class ArgumentsCheck(AnswerCheck[OracleArguments]):
    """Every listed parameter gets a value of its schema's type; nothing else is given."""

    gaps: list[Gap]
    tools: list[ToolSpec]

    def output(self) -> type[OracleArguments]:
        return OracleArguments

    def check(self, value: OracleArguments) -> OracleArguments:
        specs = {spec.name: spec for spec in self.tools}
        wanted = {(gap.tool, name) for gap in self.gaps for name in gap.names}
        problems = []
        for tool, arguments in value.argument_bindings.items():
            for name, given in arguments.items():
                if (tool, name) not in wanted:
                    problems.append(f"{tool}.{name} was not asked for; give only the parameters listed")
                    continue
                problem = _type_problem(specs[tool], name, given)
                if problem:
                    problems.append(f"{tool}.{name}: {problem}")
        missing = sorted(f"{t}.{n}" for t, n in wanted if n not in value.argument_bindings.get(t, {}))
        if missing:
            problems.append(f"no value for {', '.join(missing)}")
        if problems:
            raise RepairNeeded.listing(problems)
        return value

    def statement(self) -> str:
        asked = "; ".join(f"{gap.tool}: {', '.join(gap.names)}" for gap in self.gaps)
        return f"one JSON object fitting the schema with a value of the parameter's type for exactly these: {asked}"


def _type_problem(spec: ToolSpec, name: str, value: JsonValue) -> str | None:
    schema = spec.param_schema(name) or {}
    defs = spec.parameters.get("$defs")
    if not fits_schema(value, schema, defs if isinstance(defs, dict) else {}):
        return f"give a JSON {schema.get('type', 'value its schema allows')}, not {value!r}"
    if isinstance(value, str) and not value.strip():
        return "give the text a compliant agent would write, not an empty string"
    return None


def _gaps(missing: MissingArguments) -> list[Gap]:
    merged: dict[str, list[str]] = {}
    for gap in missing.gaps:
        names = merged.setdefault(gap.tool, [])
        names.extend(name for name in gap.names if name not in names)
    return [Gap(tool=tool, names=names) for tool, names in merged.items()]


def prompt(case: Case, missing: MissingArguments, tools: Sequence[ToolSpec]) -> Messages:
    plan = "\n".join(
        f"{step}. {action['tool']}({', '.join(f'{k}={v!r}' for k, v in action['arguments'].items())})"
        for step, action in enumerate(missing.plan)
    )
    asked = "\n".join(f"- {gap.tool}: {', '.join(gap.names)}" for gap in _gaps(missing))
    used = sorted({gap.tool for gap in missing.gaps})
    return [
        {
            "role": "system",
            "content": "You wrote a test scenario for an agent that follows a manual with tools. A compliant run of "
            "it is known (the calls below), but some of its calls lack arguments that no check fixes: free-form "
            "values such as a justification, a summary or a note. Give the value a careful, compliant agent would "
            "pass for each listed parameter, taken from what the scenario's prompt says (write free text as that "
            "agent would, in one or two sentences). " + SINGLE_TURN,
        },
        {
            "role": "user",
            "content": f"Scenario prompt:\n{case.scenario.prompt}\n\nCompliant run (arguments known so far):\n{plan}"
            f"\n\nTools:\n{tool_block([t for t in tools if t.name in used])}\n\nParameters to give:\n{asked}",
        },
    ]


async def fill_arguments(
    client: LLMClient, case: Case, scenario_id: str, missing: MissingArguments, tools: Sequence[ToolSpec]
) -> Case:
    """``case`` with the writer's values for the arguments its oracle lacks added to its bindings.

    Raises:
        AnswerPending: an exchange writer has not answered yet.
        GenerationError: the writer kept giving unusable answers.
    """
    check = ArgumentsCheck(gaps=_gaps(missing), tools=list(tools))
    answer = await client.generate("oracle_arguments", scenario_id, prompt(case, missing, tools), check)
    bindings = {tool: dict(values) for tool, values in case.argument_bindings.items()}
    for tool, values in answer.argument_bindings.items():
        bindings[tool] = {**bindings.get(tool, {}), **values}
    return case.model_copy(update={"argument_bindings": bindings})
