"""Stage ``oracle_arguments``: a validated case whose oracle lacks a free-text argument asks the scenario writer
for exactly that value, and then ships (the oracle passes it) instead of being screened out as ``oracle_error``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mantra_env.agents.base import play
from mantra_env.agents.scripted import MissingArguments, OraclePolicy, argument_gaps, oracle_plan
from mantra_env.case import Case, CaseCheck, Scenario, Suite, SuiteManifest
from mantra_env.domains import load_domain
from mantra_env.env import MantraEnv
from mantra_env.generators.llm import AnswerCheck, RepairNeeded
from mantra_env.generators.oracle_arguments import ArgumentsCheck, Gap, OracleArguments, fill_arguments
from mantra_env.generators.screening import screen_case

DOMAIN = load_domain("operations")
TOOLS = DOMAIN.tool_specs()
MODEL = """(model
  (var justified Bool)
  (transition submit_budget_justification
    (params (request_id rid))
    (pre (= (param rid) "TR-5501"))
    (post (= (next justified) true))))"""


def _env(case: Case) -> MantraEnv:
    manifest = SuiteManifest(name="generated", domain="operations", version=0, case_count=1)
    return MantraEnv(Suite(manifest=manifest, cases=[case]), DOMAIN)


def _case(bindings: dict[str, dict[str, Any]] | None = None) -> Case:
    return Case(
        id="generated-s000-1",
        domain="operations",
        scenario=Scenario(
            prompt="Please file the justification for TR-5501: the client summit moved and only this flight works.",
            internal={"justified": False},
        ),
        checks=[CaseCheck(id="filed", check='CALL submit_budget_justification(request_id="TR-5501")')],
        world_model=MODEL.replace("))))", ")))\n  (goal justified))"),
        argument_bindings=bindings or {},
    )


class Writer:
    """A scenario writer that answers with ``values`` (checked as the pipeline checks any answer)."""

    def __init__(self, values: dict[str, dict[str, Any]]) -> None:
        self.values, self.asked = values, []  # type: list[tuple[str, str, Any]]

    async def generate(self, stage: str, subject: str, messages: Any, answer: AnswerCheck[Any]) -> Any:
        self.asked.append((stage, subject, messages))
        return answer.check(OracleArguments(argument_bindings=self.values))


def test_a_missing_free_text_argument_is_asked_for_and_the_case_then_passes_the_screen() -> None:
    case = _case()
    missing = argument_gaps(case, TOOLS)
    assert isinstance(missing, MissingArguments)
    assert [(g.step, g.tool, g.names) for g in missing.gaps] == [(0, "submit_budget_justification", ("justification",))]
    env = _env(case)
    assert screen_case(env, case.id) == ("oracle_error", str(missing))

    text = "The client summit moved to Friday and this is the only flight that arrives in time."
    writer = Writer({"submit_budget_justification": {"justification": text}})
    filled = asyncio.run(fill_arguments(writer, case, "s000-1", missing, TOOLS))  # type: ignore[arg-type]
    ((stage, subject, messages),) = writer.asked
    assert (stage, subject) == ("oracle_arguments", "s000-1")
    assert "the client summit moved" in messages[1]["content"] and "justification" in messages[1]["content"]
    assert filled.argument_bindings == {"submit_budget_justification": {"justification": text}}
    assert argument_gaps(filled, TOOLS) is None
    assert oracle_plan(filled, TOOLS) == [
        {"tool": "submit_budget_justification", "arguments": {"request_id": "TR-5501", "justification": text}}
    ]
    result = play(_env(filled), OraclePolicy(), filled.id)
    assert result["verdict"].passed and all(call.error is None for call in result["trace"].calls)


def test_a_complete_plan_asks_nothing() -> None:
    bound = _case({"submit_budget_justification": {"justification": "Only this flight arrives in time."}})
    assert argument_gaps(bound, TOOLS) is None


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"submit_budget_justification": {"justification": 3}}, "give a JSON string, not 3"),
        ({"submit_budget_justification": {"justification": "  "}}, "not an empty string"),
        ({"submit_budget_justification": {}}, "no value for submit_budget_justification.justification"),
        (
            {"submit_budget_justification": {"justification": "Needed.", "request_id": "TR-1"}},
            "submit_budget_justification.request_id was not asked for",
        ),
    ],
)
def test_the_answer_check_names_each_problem(values: dict[str, dict[str, Any]], problem: str) -> None:
    check = ArgumentsCheck(gaps=[Gap(tool="submit_budget_justification", names=["justification"])], tools=TOOLS)
    with pytest.raises(RepairNeeded, match=problem):
        check.check(OracleArguments(argument_bindings=values))
    assert "submit_budget_justification: justification" in check.statement()
