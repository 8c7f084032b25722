"""The strands agent end to end through litellm against a stub OpenAI-compatible server: the exact trace is
stored, malformed and unknown calls are tool errors in the trace, provider faults are infrastructure errors."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from mantra_env.agents.models import ModelConfig
from mantra_env.agents.strands_agent import StrandsAgent
from mantra_env.domains import find_suite
from mantra_env.env import MantraEnv
from mantra_env.runner import RunSettings, run_suite
from mantra_env.store import RolloutStore
from mantra_env.store.records import RunRecord
from tests.agents.stub_server import serve, text, tool_call

DOMAIN, SUITE = find_suite("operations")
assert DOMAIN is not None
STUB = ModelConfig(alias="stub", model="openai/stub-model", api_key="not-a-key")


def run_case(
    tmp_path: Path, responses: list[dict[str, Any]], request_timeout: float = 30, **settings: Any
) -> RolloutStore:
    """Run fig1-case1 once with the stub answering ``responses``; the requests it saw are kept."""
    with serve(responses) as stub:
        agent = lambda: StrandsAgent(STUB, api_base=stub.api_base, request_timeout_s=request_timeout)  # noqa: E731
        record = RunRecord(run_id="r", suite="operations/starter", model="stub", agent="strands:stub")
        store = RolloutStore(tmp_path / "r.duckdb")
        run_settings = RunSettings(attempts=1, cases=("fig1-case1",), backoff_s=0.0, **settings)
        asyncio.run(run_suite(store, record, SUITE, DOMAIN, agent, run_settings))
        run_case.requests = stub.requests  # type: ignore[attr-defined]
    return store


def test_compliant_episode_is_stored_exactly(tmp_path: Path) -> None:
    responses = [
        tool_call("check_inventory", {"item_name": "Dell UltraSharp U2723QE"}),
        tool_call("assign_warehouse_picker", {"item_id": "HWM2741", "quantity": 1}, "call_2"),
        text("A picker is assigned; no purchase order was needed."),
    ]
    with run_case(tmp_path, responses) as store:
        steps = store.query("SELECT step, tool, kind, arguments, error_code FROM steps ORDER BY step")
        assert steps == [
            (0, "check_inventory", "read", '{"item_name": "Dell UltraSharp U2723QE"}', None),
            (1, "assign_warehouse_picker", "write", '{"item_id": "HWM2741", "quantity": 1}', None),
        ]
        (status, reward, tokens_in, tokens_out, calls, answer, messages) = store.query(
            "SELECT status, reward, input_tokens, output_tokens, model_calls, final_answer, messages FROM episodes"
        )[0]
        assert (status, reward, tokens_in, tokens_out, calls) == ("passed", 1.0, 300, 30, 3)
        assert answer.startswith("A picker is assigned")
        history = json.loads(messages)
        assert history[0]["role"] == "user" and "Dell UltraSharp" in json.dumps(history[0])
        assert any("toolResult" in part for message in history for part in message["content"])
    first = run_case.requests[0]  # type: ignore[attr-defined]
    assert first["model"] == "stub-model" and first["messages"][0]["role"] == "system"
    assert {tool["function"]["name"] for tool in first["tools"]} >= {"check_inventory", "reject_request"}
    # The tool result reached the model.
    assert "HWM2741" in json.dumps(run_case.requests[1]["messages"][-1])  # type: ignore[attr-defined]


def test_malformed_and_unknown_calls_are_tool_errors_in_the_trace(tmp_path: Path) -> None:
    responses = [
        tool_call("check_inventory", '{"item_name": "Dell'),  # cut-off JSON
        tool_call("teleport", {"to": "warehouse"}, "call_2"),
        tool_call("check_inventory", {"item_name": 5}, "call_3"),
        text("giving up"),
    ]
    with run_case(tmp_path, responses) as store:
        steps = store.query("SELECT tool, error_code FROM steps ORDER BY step")
        assert steps == [
            ("check_inventory", "invalid_arguments"),
            ("teleport", "unknown_tool"),
            ("check_inventory", "invalid_arguments"),
        ]
        assert store.query("SELECT status, error_kind FROM episodes") == [("failed", None)]


def test_html_escaped_arguments_from_small_models_are_unescaped(tmp_path: Path) -> None:
    responses = [tool_call("check_inventory", {"item_name": "Dell UltraSharp U2723QE &#34;4K&#34;"}), text("ok")]
    with run_case(tmp_path, responses) as store:
        assert store.query("SELECT arguments FROM steps") == [('{"item_name": "Dell UltraSharp U2723QE \\"4K\\""}',)]


def test_rate_limits_become_infrastructure_errors_after_retries(tmp_path: Path) -> None:
    with run_case(tmp_path, [{"status": 429}] * 3, retries=2) as store:
        assert store.query("SELECT status, error_kind FROM episodes") == [("error", "rate_limit")]
    assert len(run_case.requests) == 3  # type: ignore[attr-defined]


def test_a_provider_that_times_out_is_an_infrastructure_error(tmp_path: Path) -> None:
    with run_case(tmp_path, [{"hang": True}], retries=0, request_timeout=0.5) as store:
        assert store.query("SELECT status, error_kind FROM episodes") == [("error", "timeout")]


def test_cycle_cap_ends_a_looping_model_and_grades_what_it_did(tmp_path: Path) -> None:
    loop = [tool_call("check_inventory", {"item_name": "Dell UltraSharp U2723QE"}, f"call_{n}") for n in range(50)]
    with serve(loop) as stub:
        agent = lambda: StrandsAgent(STUB, api_base=stub.api_base, max_cycles=3)  # noqa: E731
        record = RunRecord(run_id="r", suite="operations/starter", model="stub", agent="strands:stub")
        with RolloutStore(tmp_path / "r.duckdb") as store:
            asyncio.run(run_suite(store, record, SUITE, DOMAIN, agent, RunSettings(attempts=1, cases=("fig1-case1",))))
            assert store.query("SELECT status, steps FROM episodes") == [("failed", 3)]


def test_tool_calls_step_the_environment_on_the_event_loop_thread() -> None:
    """Tool handlers are coroutines: strands awaits them on the loop instead of handing each call to a worker
    thread, so the calls of one model turn step the environment one after another, in the model's order."""

    class Recording(MantraEnv):
        threads: list[str] = []  # noqa: RUF012

        def step(self, action: str | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
            Recording.threads.append(threading.current_thread().name)
            return super().step(action)

    two_calls = tool_call("check_inventory", {"item_name": "Dell UltraSharp U2723QE"})
    two_calls["tool_calls"] += tool_call("get_request", {"request_id": "HW-2841"}, "call_2")["tool_calls"]
    with serve([two_calls, text("done")]) as stub:
        agent = StrandsAgent(STUB, api_base=stub.api_base)
        env = Recording(SUITE, DOMAIN, case="fig1-case1")

        async def episode() -> str:
            await agent.run(env, "fig1-case1", 0)
            return threading.current_thread().name

        loop_thread = asyncio.run(episode())
    assert Recording.threads == [loop_thread, loop_thread]
    assert [call.tool for call in env.trace.calls] == ["check_inventory", "get_request"]


def test_cached_tool_specs_are_strands_own_and_follow_registrations() -> None:
    import copy

    from strands.tools.registry import ToolRegistry
    from strands.tools.tools import PythonAgentTool

    from mantra_env.agents.strands_agent import cache_tool_specs

    async def handler(tool_use: Any, **context: Any) -> dict[str, Any]:
        return {}

    def tool(spec: dict[str, Any]) -> PythonAgentTool:
        schema = {"name": spec["name"], "description": spec["description"], "inputSchema": {"json": spec["parameters"]}}
        return PythonAgentTool(spec["name"], schema, handler)  # type: ignore[arg-type]

    specs = json.loads(DOMAIN.episode_constants.tools_json)
    plain, cached = ToolRegistry(), ToolRegistry()
    for registry in (plain, cached):
        registry.process_tools([tool(spec) for spec in specs[:-1]])
    cache_tool_specs(cached)
    assert cached.get_all_tools_config() == plain.get_all_tools_config()
    assert cached.get_all_tool_specs() == plain.get_all_tool_specs()
    first = cached.get_all_tools_config()
    assert copy.deepcopy(first) == first and cached.get_all_tools_config() is not first  # callers get their own dict
    for registry in (plain, cached):
        registry.register_tool(tool(specs[-1]))
    assert cached.get_all_tools_config() == plain.get_all_tools_config()
    assert len(cached.get_all_tools_config()) == len(specs)


CALL = tool_call("check_inventory", {"item_name": "Dell UltraSharp U2723QE"})


def episode(store: RolloutStore) -> tuple[str, str | None, str | None]:
    ((status, kind, error),) = store.query("SELECT status, error_kind, error FROM episodes")
    return status, kind, error


@pytest.mark.parametrize(
    ("fault", "kind"), [({"status": 500}, "server"), ({"status": 503}, "server"), ({"drop": True}, "connection")]
)
def test_d1_a_provider_error_after_the_first_tool_call_is_an_error_episode_of_its_kind(
    tmp_path: Path, fault: dict[str, Any], kind: str
) -> None:
    with run_case(tmp_path, [CALL, fault, CALL, fault], retries=1) as store:
        assert episode(store)[:2] == ("error", kind)
    assert len(run_case.requests) == 4  # type: ignore[attr-defined]  # retried once, each time after a tool call


@pytest.mark.parametrize(
    "arguments", ['{"item_name": "\\ud800"}', '{"item_name": ' + "[" * 900 + "]" * 900 + "}"], ids=["surrogate", "deep"]
)
def test_d2_a_tool_call_that_breaks_the_next_request_is_a_scored_failed_attempt(tmp_path: Path, arguments: str) -> None:
    with run_case(tmp_path, [tool_call("check_inventory", arguments), text("never reached")], retries=2) as store:
        status, kind, error = episode(store)
        assert (status, kind) == ("failed", "model")
        assert error is not None and "the model's tool call cannot be processed" in error
    assert len(run_case.requests) == 1  # the model's fault: scored, not retried


def test_d11_empty_choices_junk_bodies_and_refused_connections_are_told_apart(tmp_path: Path) -> None:
    with run_case(tmp_path / "empty", [CALL, {"choices": []}], retries=0) as store:
        status, kind, error = episode(store)
        assert (status, kind) == ("error", "bad_output") and "held no choice" in str(error)
    with run_case(tmp_path / "junk", [{"body": "<html>502 Bad Gateway</html>"}], retries=0) as store:
        assert episode(store)[:2] == ("error", "bad_output")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    agent = lambda: StrandsAgent(STUB, api_base=f"http://127.0.0.1:{port}/v1")  # noqa: E731
    record = RunRecord(run_id="r", suite="operations/starter", model="stub", agent="strands:stub")
    with RolloutStore(tmp_path / "refused.duckdb") as store:
        settings = RunSettings(attempts=1, cases=("fig1-case1",), retries=0)
        asyncio.run(run_suite(store, record, SUITE, DOMAIN, agent, settings))
        assert episode(store)[:2] == ("error", "connection")


def test_a_400_is_configuration_on_the_first_request_and_the_models_after_a_turn(tmp_path: Path) -> None:
    with run_case(tmp_path / "first", [{"status": 400}, {"status": 400}], retries=1) as store:
        assert episode(store)[:2] == ("error", "configuration")
    assert len(run_case.requests) == 1  # not retried  # type: ignore[attr-defined]
    with run_case(tmp_path / "later", [CALL, {"status": 400}]) as store:
        assert episode(store)[:2] == ("failed", "model")


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (404, "not_found")])
def test_a_refused_key_or_unknown_model_mid_run_is_an_error_not_retried(tmp_path: Path, status: int, kind: str) -> None:
    with run_case(tmp_path, [CALL, {"status": status}, CALL, {"status": status}], retries=1) as store:
        assert episode(store)[:2] == ("error", kind)
    assert len(run_case.requests) == 2  # type: ignore[attr-defined]


def test_an_empty_final_answer_is_kept_as_the_reason_of_the_failure(tmp_path: Path) -> None:
    with run_case(tmp_path, [text("")]) as store:
        assert episode(store) == ("failed", "model", "the model's final answer was empty")


def test_d17_calls_strands_drops_and_malformed_arguments_are_in_the_trace(tmp_path: Path) -> None:
    responses = [
        tool_call("bad name!", {"item_name": "Dell UltraSharp U2723QE"}),
        tool_call("check_inventory", '{"item_name": "Dell', "call_2"),
        text("giving up"),
    ]
    with run_case(tmp_path, responses) as store:
        steps = store.query("SELECT tool, error_code, arguments, raw_arguments FROM steps ORDER BY step")
        assert steps == [
            ("bad name!", "unknown_tool", '{"item_name": "Dell UltraSharp U2723QE"}', None),
            ("check_inventory", "invalid_arguments", "{}", '{"item_name": "Dell'),
        ]


def test_n8_an_html_page_is_bad_output_a_504_server_and_a_huge_number_in_a_call_a_scored_failure(
    tmp_path: Path,
) -> None:
    page = {"body": "<html><body>502 Bad Gateway</body></html>", "content_type": "text/html"}
    with run_case(tmp_path / "html", [CALL, page], retries=0) as store:
        assert episode(store)[:2] == ("error", "bad_output")
    with run_case(tmp_path / "504", [CALL, {"status": 504}], retries=0) as store:
        assert episode(store)[:2] == ("error", "server")
    huge = tool_call("check_inventory", '{"item_name": ' + "9" * 5000 + "}")
    with run_case(tmp_path / "huge", [CALL, huge, CALL, huge], retries=1) as store:
        status, kind, error = episode(store)
        assert (status, kind) == ("failed", "model") and "a number too long to read" in str(error)
    assert len(run_case.requests) == 2  # type: ignore[attr-defined]  # the model's fault: scored, not retried
