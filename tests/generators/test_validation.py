"""The validation rounds' other endings: a scenario a judge declares invalid and one whose checks could not be
generated are rejected; a conflict no judge resolves leaves the scenario awaiting a human; unchanged artifacts
are never solved twice."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from mantra_env.case import CaseCheck, load_suite
from mantra_env.domains import load_domain
from mantra_env.generators import validation
from mantra_env.generators.artifacts import Repair, Scenario, ScenarioDraft, WorldModelArtifact, WorldModelSchema
from mantra_env.generators.config import GenerationConfig, ValidationSettings, parse_config
from mantra_env.generators.exchange import AnswerPending, ExchangeDir
from mantra_env.generators.llm import AnswerCheck, LLMClient
from mantra_env.generators.replay import PROVIDER
from mantra_env.generators.validation import SampleInput, SolveInterrupted, SolverJob, _Loop, solve, validate_sample
from mantra_env.smt.queries import CaseSolver, QueryResult

FIXTURE = Path(__file__).parent / "fixtures" / "ops-mini"
SUITES = Path(__file__).resolve().parents[2] / "mantra_env" / "domains"
RECORDED = yaml.safe_load((FIXTURE / "responses.yaml").read_text())["responses"]


def _scenarios() -> list[Scenario]:
    drafts = RECORDED["scenario_generation/s000#0"]["scenarios"]
    return [
        Scenario(id=f"t-{n}", sample_id="t", draft=ScenarioDraft.model_validate(draft))
        for n, draft in enumerate(drafts, 1)
    ]


def _checks(key: str) -> list[CaseCheck]:
    return [CaseCheck(id=c["id"], check=c["check"]) for c in RECORDED[key]["checks"]]


def _config(tmp_path: Path, responses: dict[str, Any]) -> GenerationConfig:
    fixture = tmp_path / "responses.yaml"
    fixture.write_text(json.dumps({"responses": responses}))
    return parse_config(
        f"document_path: m.md\ndomain: operations\nllm:\n  default_model: replay/t\n  judge_model: replay/t\n"
        f"  replay: {{path: {fixture}}}\nvalidation: {{n_rounds: 4}}\n",
        "cfg",
        tmp_path,
    )


def test_rejected_and_awaiting_human_endings(tmp_path: Path) -> None:
    full = RECORDED["smt_full_pass/s000#1"]
    model = full["model"].replace("(not refurbished)))\n         (= legacy_checked true))", "(not refurbished))))")
    assert "(= legacy_checked true))" not in model  # the repaired model
    schema = WorldModelSchema.model_validate(RECORDED["smt_schema_prepass/s000#0"])
    world = WorldModelArtifact(sample_id="t", schema_prepass=schema, model=model, initial=schema.initial,
                               goals={f"t-{n}": goal for n, goal in enumerate(full["goals"].values(), 1)})  # fmt: skip
    config = _config(
        tmp_path,
        {
            "conflict_resolution/t/r1#0": {"locus": "checks", "edits": [], "reason": "the model is right"},
            "locus_reassessment/t-1/r1#0": {"locus": "scenario_invalid", "reason": "cannot tell from the excerpt"},
            "backward_audit/t-3/delivery_before_po/r2#0": {"locus": "none", "reason": "cannot tell"},
        },
    )
    data = SampleInput(
        sample_id="t",
        excerpt="(excerpt)",
        tools=load_domain("operations").tool_specs(),
        scenarios=_scenarios(),
        checks={"t-1": _checks("check_generation/s000-1#0"), "t-2": [], "t-3": _checks("check_generation/s000-3#0")},
        world=world,
        check_errors={"t-2": "check_generation for t-2: no usable answer after 3 attempts"},
    )
    PROVIDER.served.clear()
    result = asyncio.run(validate_sample(LLMClient(config, None), data, config.validation))
    outcomes = {o.scenario_id: o for o in result.outcomes}
    assert outcomes["t-1"].status == "rejected" and outcomes["t-1"].reason == "judge: cannot tell from the excerpt"
    assert outcomes["t-2"].status == "rejected" and "no usable answer" in outcomes["t-2"].reason
    t3 = outcomes["t-3"]
    assert (t3.status, t3.forward, t3.backward, t3.witness_found) == ("awaiting_human", "consistent", "conflict", True)
    assert t3.reason == "forward consistent, backward conflict after 2 round(s)" and t3.rounds == 2
    assert PROVIDER.served == [
        "conflict_resolution/t/r1#0",
        "locus_reassessment/t-1/r1#0",
        "backward_audit/t-3/delivery_before_po/r2#0",
    ]
    # Round 2 and the final evaluation reuse round 1's forward result of t-3 (same artifacts): one forward query.
    forward_t3 = [e for e in result.history if e.get("scenario") == "t-3" and e.get("query") == "forward"]
    assert len(forward_t3) == 1
    unapplied = [e for e in result.history if e.get("stage") == "backward_audit"]
    assert unapplied == [
        {"round": 2, "stage": "backward_audit", "scenario": "t-3", "locus": "none", "reason": "cannot tell",
         "edits": [], "applied": False}
    ]  # fmt: skip


def test_the_judges_of_different_scenarios_are_asked_together(tmp_path: Path) -> None:
    full = RECORDED["smt_full_pass/s000#1"]  # with the wrong precondition: t-1 and t-2 conflict in round 1
    schema = WorldModelSchema.model_validate(RECORDED["smt_schema_prepass/s000#0"])
    world = WorldModelArtifact(sample_id="t", schema_prepass=schema, model=full["model"], initial=schema.initial,
                               goals={f"t-{n}": goal for n, goal in enumerate(full["goals"].values(), 1)})  # fmt: skip
    config = parse_config(
        "document_path: m.md\ndomain: operations\nllm:\n  default_model: exchange/x\n  judge_model: exchange/x\n",
        "cfg",
        tmp_path,
    )
    data = SampleInput(
        sample_id="t",
        excerpt="(excerpt)",
        tools=load_domain("operations").tool_specs(),
        scenarios=_scenarios(),
        checks={f"t-{n}": _checks(key) for n, key in enumerate(
            ["check_generation/s000-1#0", "check_generation/s000-2#1", "check_generation/s000-3#0"], 1)},
        world=world,
    )  # fmt: skip
    client = LLMClient(config, None, exchange_base=tmp_path)
    folder = ExchangeDir(tmp_path / "x")
    with pytest.raises(AnswerPending) as first:
        asyncio.run(validate_sample(client, data, config.validation))
    assert first.value.keys == ["conflict_resolution/t/r1#0"]
    folder.answer_path("conflict_resolution/t/r1#0").write_text('{"locus": "checks", "edits": [], "reason": "fine"}')
    with pytest.raises(AnswerPending) as second:
        asyncio.run(validate_sample(client, data, config.validation))
    assert second.value.keys == ["locus_reassessment/t-1/r1#0", "locus_reassessment/t-2/r1#0"]  # in one round


class UndecidedJudge:
    """A client whose judges never decide (locus none): the rounds end at once, the artifacts stay as given."""

    config = parse_config("document_path: m.md\ndomain: operations\n", "cfg", Path("."))

    async def generate(self, stage: str, subject: str, messages: Any, answer: AnswerCheck[Any]) -> Any:
        return answer.check(Repair(locus="none", reason="cannot tell"))


def test_validation_warns_when_a_postcondition_ignores_what_the_checks_pin() -> None:
    full = RECORDED["smt_full_pass/s000#1"]
    schema = WorldModelSchema.model_validate(RECORDED["smt_schema_prepass/s000#0"])
    world = WorldModelArtifact(sample_id="t", schema_prepass=schema, model=full["model"], initial=schema.initial,
                               goals={f"t-{n}": goal for n, goal in enumerate(full["goals"].values(), 1)})  # fmt: skip
    address = _scenarios()[2].draft.argument_bindings["set_delivery_options"]["address"]
    pinned = CaseCheck(
        id="delivery",
        check=f'CALL set_delivery_options(item_id="HWL1121", address="{address}", delivery_window="business_hours")',
    )
    data = SampleInput(
        sample_id="t",
        excerpt="(excerpt)",
        tools=load_domain("operations").tool_specs(),
        scenarios=_scenarios()[2:],
        checks={"t-3": [pinned]},
        world=world,
    )
    result = asyncio.run(validate_sample(UndecidedJudge(), data, ValidationSettings(n_rounds=1)))  # type: ignore[arg-type]
    assert [(lint.code, lint.place.split(" (line")[0]) for lint in result.warnings] == [
        ("pinned_argument_ignored", "t-3: transition set_delivery_options")
    ]
    assert result.warnings[0].message.startswith("the checks pin address of set_delivery_options")


REFUSAL_MODEL = """(model
  (var item_name String)
  (var in_stock Bool)
  (var inventory_checked Bool)
  (var po_created Bool)
  (transition check_inventory
    (params (item_name n))
    (pre  true)
    (post (= (next inventory_checked) (or inventory_checked (= (param n) item_name)))))
  (transition create_purchase_order
    (params (item_id i))
    (pre  inventory_checked (not in_stock))
    (post (= (next po_created) true))))"""


def _refusal_case(locks: frozenset[str] = frozenset()) -> SampleInput:
    """An item in stock: no purchase order, but the manual still has the agent check the inventory first, which
    a goal about the final state alone does not justify (the backward audit flags the read)."""
    draft = ScenarioDraft(prompt="Order two desks.", external={"item_name": "desk", "in_stock": True})
    world = WorldModelArtifact(
        sample_id="t", schema_prepass=WorldModelSchema(declarations=""), model=REFUSAL_MODEL,
        initial={"inventory_checked": False, "po_created": False}, goals={"t-1": ["(not po_created)"]},
    )  # fmt: skip
    checks = [
        CaseCheck(id="reads", check='CALL check_inventory(item_name="desk")'),
        CaseCheck(id="no_po", check="NO-CALL create_purchase_order()"),
    ]
    return SampleInput(
        sample_id="t", excerpt="(excerpt)", tools=load_domain("operations").tool_specs(),
        scenarios=[Scenario(id="t-1", sample_id="t", draft=draft)], checks={"t-1": checks}, world=world, locks=locks,
    )  # fmt: skip


ADD_GOAL = {
    "locus": "world_model",
    "reason": "the manual has the agent check the inventory before deciding, also when it declines",
    "edits": [{"op": "add_goal", "expr": "inventory_checked"}],
}


def test_a_judge_strengthens_a_scenarios_goal_instead_of_dropping_a_required_read(tmp_path: Path) -> None:
    config = _config(tmp_path, {"backward_audit/t-1/reads/r1#0": ADD_GOAL})
    PROVIDER.served.clear()
    result = asyncio.run(validate_sample(LLMClient(config, None), _refusal_case(), config.validation))
    (outcome,) = result.outcomes
    assert (outcome.status, outcome.backward) == ("validated", "consistent")
    assert [c.id for c in outcome.checks] == ["reads", "no_po"]  # the read stays required
    assert result.goals == {"t-1": ["(not po_created)", "inventory_checked"]}
    assert "(goal" not in result.model  # goals stay per scenario, out of the shared model
    assert PROVIDER.served == ["backward_audit/t-1/reads/r1#0"]


def test_a_goal_a_human_set_is_locked_against_judges(tmp_path: Path) -> None:
    gives_up = {"locus": "none", "reason": "the goal is the reviewer's"}
    config = _config(tmp_path, {"backward_audit/t-1/reads/r1#0": ADD_GOAL, "fix_repair/t-1/reads/r1/fix1#0": gives_up})
    result = asyncio.run(
        validate_sample(LLMClient(config, None), _refusal_case(frozenset({"goal:t-1"})), config.validation)
    )
    assert result.goals == {"t-1": ["(not po_created)"]} and result.outcomes[0].status == "awaiting_human"
    (entry,) = [e for e in result.history if e.get("stage") == "backward_audit"]
    assert entry["applied"] is False and "goal:t-1 was edited by a human" in str(entry["error"])


@pytest.mark.parametrize(
    ("status", "ending", "reason"),
    [
        ("infeasible", "rejected", "no compliant trace within the bound"),
        ("unknown", "awaiting_human", "the compliant-witness query did not finish (canceled)"),
    ],
)
def test_only_an_infeasible_witness_query_rejects_an_undecided_one_waits_for_a_person(
    monkeypatch: pytest.MonkeyPatch, status: str, ending: str, reason: str
) -> None:
    def witness(self: CaseSolver) -> QueryResult:
        return QueryResult(query="witness", status=status, bound=self.encoding.bound, reason="canceled")

    monkeypatch.setattr(CaseSolver, "compliant_witness", witness)
    data = _refusal_case()
    data = dataclasses.replace(
        data, world=data.world.model_copy(update={"goals": {"t-1": ["(not po_created)", "inventory_checked"]}})
    )
    result = asyncio.run(validate_sample(UndecidedJudge(), data, ValidationSettings(n_rounds=1)))  # type: ignore[arg-type]
    (outcome,) = result.outcomes
    assert (outcome.forward, outcome.backward, outcome.witness_found) == ("consistent", "consistent", False)
    assert (outcome.status, outcome.reason) == (ending, reason)


def test_a_scenario_whose_valuation_does_not_fit_the_model_waits_for_a_person_with_the_reason() -> None:
    """A valuation the world model cannot hold (a null for a String: the scenario left a field unstated) is no
    solver result: the outcome names the error and the history keeps it, never a bare "unknown"."""
    data = _refusal_case()
    draft = ScenarioDraft(prompt="Order two desks.", external={"item_name": None, "in_stock": True})
    data = dataclasses.replace(data, scenarios=[Scenario(id="t-1", sample_id="t", draft=draft)])
    result = asyncio.run(validate_sample(UndecidedJudge(), data, ValidationSettings(n_rounds=1)))  # type: ignore[arg-type]
    (outcome,) = result.outcomes
    assert (outcome.status, outcome.forward, outcome.backward) == ("awaiting_human", "unknown", None)
    assert "initial value of item_name: None is not a String" in outcome.reason
    (entry,) = [e for e in result.history if e.get("query") == "forward"]
    assert entry["status"] == "unknown" and "item_name" in str(entry["reason"])


def test_the_configs_solver_modes_reach_the_solver_and_only_then_its_memo_key(tmp_path: Path) -> None:
    full = RECORDED["smt_full_pass/s000#1"]
    schema = WorldModelSchema.model_validate(RECORDED["smt_schema_prepass/s000#0"])
    world = WorldModelArtifact(sample_id="t", schema_prepass=schema, model=full["model"], initial=schema.initial,
                               goals={f"t-{n}": goal for n, goal in enumerate(full["goals"].values(), 1)})  # fmt: skip
    data = SampleInput(
        sample_id="t",
        excerpt="(excerpt)",
        tools=load_domain("operations").tool_specs(),
        scenarios=_scenarios()[:1],
        checks={"t-1": _checks("check_generation/s000-1#0")},
        world=world,
    )
    config = _config(tmp_path, {})
    assert config.validation.refuse_invented_ids is False  # a config without the key: as before
    assert config.validation.canonical_lists is False
    assert config.validation.witness_at_own_length is False
    keys = "{refuse_invented_ids: true, canonical_lists: true, witness_at_own_length: true}"
    on = parse_config(f"document_path: m.md\ndomain: operations\nvalidation: {keys}\n", "cfg", tmp_path).validation
    off_loop = _Loop(UndecidedJudge(), data, config.validation)  # type: ignore[arg-type]
    on_loop = _Loop(UndecidedJudge(), data, on)  # type: ignore[arg-type]
    off_arguments = off_loop._solver_arguments("t-1")  # memo keys of old configs unchanged
    assert off_arguments.keys().isdisjoint({"refuse_invented_ids", "canonical_lists", "witness_at_own_length"})
    assert off_loop._solver("t-1").encoding.known_ids_only is False
    assert on_loop._solver("t-1").encoding.known_ids_only is True
    assert (off_loop._solver("t-1").canonical_lists, on_loop._solver("t-1").canonical_lists) == (False, True)
    assert (off_loop._solver("t-1").witness_at_own_length, on_loop._solver("t-1").witness_at_own_length) == (
        False,
        True,
    )
    # what its cases carry to the export's oracle
    assert on.solver_modes == {"refuse_invented_ids": True, "canonical_lists": True, "witness_at_own_length": True}


ROUND_4 = Path(__file__).parent / "fixtures" / "telecom_s002_2_round4.json"
"""telecom generated-s002-2 as its validation's round 4 solved it, captured from a replay of the recording."""


def test_the_compliant_witness_is_made_at_the_bound_unless_the_config_says_at_its_own_length() -> None:
    # The shipped telecom suite's history holds this witness as made at the bound, on the solver that had just
    # answered the backward audits (the recording predates the key); at its own length the solver reads the
    # customer's two lines the other way round (both orders comply), which is why a full replay of telecom stopped
    # matching when the w2-speed merge made that the only way.
    fixture = json.loads(ROUND_4.read_text(encoding="utf-8"))
    arguments = {name: fixture[name] for name in ("model", "checks", "bound", "initial", "timeout_ms")}
    arguments["checks"] = [CaseCheck.model_validate(entry) for entry in fixture["checks"]]
    tools = load_domain("telecom").tool_specs()
    forward = QueryResult(query="forward", status="consistent", bound=fixture["bound"])  # the round's forward phase
    witnesses = {}
    for on in (False, True):
        modes = ValidationSettings(witness_at_own_length=on).solver_modes
        solved = solve(tools, SolverJob(arguments={**arguments, **modes}, forward=forward, backward=True))
        assert solved.witness is not None and solved.witness.witness is not None
        witnesses[on] = solved.witness.witness
    case = load_suite(SUITES / "telecom" / "suites" / "generated").case("generated-s002-2")
    (shipped,) = [e for e in case.validation.history if e.get("round") == 4 and e.get("query") == "witness"]
    assert witnesses[False].render() == shipped["witness"]
    assert witnesses[True].render() != shipped["witness"]
    lines = [[call.args["line_id"] for call in w.calls if call.tool == "get_line_details"] for w in witnesses.values()]
    assert lines == [["L9469396", "L0461754"], ["L0461754", "L9469396"]]  # the same calls otherwise
    assert [call for call in witnesses[True].calls if call.tool != "get_line_details"] == [
        call for call in witnesses[False].calls if call.tool != "get_line_details"
    ]


ADD_CHECK = {
    "locus": "checks",
    "reason": "the manual asks for the inventory read by item",
    "edits": [{"op": "add_check", "id": "reads_again", "check": 'CALL check_inventory(item_name="desk")'}],
}


@pytest.mark.parametrize("provenance", [False, True])
def test_a_judges_new_check_records_its_stage_and_round_only_with_the_key_on(provenance: bool) -> None:
    data = dataclasses.replace(_refusal_case(), check_provenance=provenance)
    loop = _Loop(None, data, ValidationSettings())  # type: ignore[arg-type]
    loop.round = 2
    assert loop._apply("backward_audit", "t-1", Repair.model_validate(ADD_CHECK)) is None
    by_id = {entry.id: entry for entry in loop.checks["t-1"]}
    assert by_id["reads"].written_by is None  # untouched checks keep what they had
    assert by_id["reads_again"].written_by == ("backward_audit round 2" if provenance else None)
    dumped = by_id["reads_again"].model_dump(mode="json")
    assert ("written_by" in dumped) is provenance  # unset, the field stays out of the JSON (suite digests)


def _adds_asked(initial: bool | None) -> Repair:
    add: dict[str, object] = {"op": "add_var", "name": "asked", "type": "Bool"}
    if initial is not None:
        add["initial"] = initial
    return Repair.model_validate(
        {
            "locus": "world_model",
            "reason": "the manual has the agent check the inventory first",
            "edits": [
                add,
                {"op": "add_condition", "tool": "check_inventory", "section": "post", "expr": "(= (next asked) true)"},
                {"op": "add_goal", "expr": "asked"},
            ],
        }
    )


@pytest.mark.parametrize("initial", [None, False])
def test_a_variable_a_judge_adds_starts_where_the_judge_says(initial: bool | None) -> None:
    """Without a start value the solver may start the judge's new flag true, so a goal on it holds with no call;
    with ``initial`` the flag starts false and only the read the goal is for reaches it."""
    loop = _Loop(None, _refusal_case(), ValidationSettings())  # type: ignore[arg-type]
    assert loop._apply("backward_audit", "t-1", _adds_asked(initial)) is None
    witness = loop._solver("t-1").admits([])  # the empty trace: does the model accept it as compliant?
    if initial is None:
        assert "asked" not in loop.initial and witness is not False  # the start is the solver's choice
    else:
        assert loop.initial["asked"] is False and witness is False
        found = loop._solver("t-1").compliant_witness().witness
        assert found is not None and [call.tool for call in found.calls] == ["check_inventory"]
    dumped = _adds_asked(None).edits[0].model_dump(mode="json")
    assert "initial" not in dumped  # edits recorded before the field keep their bytes


@pytest.mark.parametrize("reason", ["interrupted", "interrupted from keyboard"])
def test_a_query_a_stop_interrupted_is_no_answer_to_record(monkeypatch: pytest.MonkeyPatch, reason: str) -> None:
    """A query a stop interrupted (``Context.interrupt``, Ctrl-C) must not be recorded as the scenario's answer."""

    class Interrupted:
        def __init__(self, **_: Any) -> None:
            pass

        def forward(self, shortest: bool = False) -> QueryResult:
            return QueryResult(query="forward", status="unknown", bound=16, reason=reason)

    monkeypatch.setattr(validation, "CaseSolver", Interrupted)
    with pytest.raises(SolveInterrupted, match=rf"the forward query was interrupted \({reason}\); resume the run"):
        solve([], SolverJob(arguments={}, forward=None, backward=True))


def test_a_query_out_of_its_budget_is_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    class OutOfBudget:
        def __init__(self, **_: Any) -> None:
            pass

        def forward(self, shortest: bool = False) -> QueryResult:
            return QueryResult(query="forward", status="unknown", bound=16, reason="canceled")  # Z3: rlimit ran out

    monkeypatch.setattr(validation, "CaseSolver", OutOfBudget)
    solved = solve([], SolverJob(arguments={}, forward=None, backward=True))
    assert solved.forward is not None and solved.forward.reason == "canceled"


class RecordingJudge(UndecidedJudge):
    """An undecided judge that keeps each request's stage and system message."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def generate(self, stage: str, subject: str, messages: Any, answer: AnswerCheck[Any]) -> Any:
        self.asked.append((stage, messages[0]["content"]))
        return await super().generate(stage, subject, messages, answer)


@pytest.mark.parametrize("scoped", [False, True])
def test_the_judges_get_the_scope_rules_and_every_domain_tool_only_with_the_key_on(scoped: bool) -> None:
    """Retail v5's s068-2 got a check that its order be read before the product, from a judge's premise that no
    other tool yields the product id (one does: list_all_product_types)."""
    judge = RecordingJudge()
    data = _refusal_case()
    asyncio.run(validate_sample(judge, data, ValidationSettings(n_rounds=1, judge_scope_rules=scoped)))  # type: ignore[arg-type]
    assert judge.asked, "the sample's audit asks a judge"
    for stage, system in judge.asked:
        assert ("Scope of your edits" in system) is scoped, stage
        assert all((f"- {spec.name}(" in system) is scoped for spec in data.tools if spec.name not in data.world.model)


class RejectedOnceJudge(RecordingJudge):
    """A judge whose first repair names a condition the model does not have; its fix_repair answers none."""

    def __init__(self) -> None:
        super().__init__()
        self.fixes: list[str] = []

    async def generate(self, stage: str, subject: str, messages: Any, answer: AnswerCheck[Any]) -> Any:
        if stage == "fix_repair":
            self.fixes.append(messages[1]["content"])
            return answer.check(Repair(locus="none", reason="cannot tell"))
        bad = {"op": "remove_condition", "tool": "check_inventory", "section": "pre", "index": 99}
        return answer.check(Repair.model_validate({"locus": "world_model", "reason": "r", "edits": [bad]}))


@pytest.mark.parametrize("shown", [False, True])
def test_a_rejected_repair_goes_back_with_the_model_it_edits_only_with_the_key_on(shown: bool) -> None:
    judge = RejectedOnceJudge()
    data = _refusal_case()
    settings = ValidationSettings(n_rounds=1, fix_repair_shows_model=shown)
    asyncio.run(validate_sample(judge, data, settings))  # type: ignore[arg-type]
    assert judge.fixes, "the rejected repair goes back to its judge"
    for content in judge.fixes:
        assert "Why it was rejected:" in content and "99" in content  # the error naming the index, as before
        assert ("The world model and checks your edits apply to:" in content) is shown
        assert (
            "(transition check_inventory" in content and 'CALL check_inventory(item_name="desk")' in content
        ) is shown
