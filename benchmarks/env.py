"""Environment throughput: steps per second with a scripted policy, on one core.

Run: ``.venv/bin/python benchmarks/env.py [--episodes N]``. Target: >= 10,000 steps/s (for comparison, tau2-bench's
gym polls a worker thread every 10 ms, i.e. at most 100 steps/s). Reports best and median of 5 repeats (CPU time)
for two workloads, reset (fresh database) and grading included:

* ``operations``: the operations starter suite, every case in turn, replayed by the oracle (its plans are
  computed once, before timing: the SMT solve is not part of an environment step);
* ``retail``: the retail domain's 3.5 MB copy-on-write database and its generated suite, every case replayed by
  the oracle (as every domain once it ships a suite; until then a fixed, realistic plan per episode stands in:
  identify the customer, read the order, the product and the customer, then change the order (swap a variant of
  a pending order, request the return of a delivered one); 40 episodes over 40 real orders, each case with a
  database patch);
* ``telecom``: the same on the telecom domain's 1.1 MB database (compact JSON): identify the customer, read the
  account, the line, the plan and the handset, then push network settings or refuel data; 40 episodes over 40
  real lines;
* ``airline``: the airline domain's 4.4 MB copy-on-write database, likewise without a suite yet: per episode read
  the customer, the reservation, its first flight's status and the flights of that route, then add a checked bag
  (40 episodes over 40 real reservations, each case with a database patch);
* ``minimal``: a two-tool test domain, which shows the environment's own overhead.

* ``vectorised``: ``gymnasium.make_vec`` on the operations suite, sync and async (shared memory on and off), every
  sub-env taking sampled tool calls (``action_space.sample()``, drawn before timing) with autoreset; wall-clock
  steps/s summed over sub-envs (async workers are processes: CPU time of this one would not count them).

Reset times (``env.reset``: fresh database, patch, toolkit, opening observation) are reported per workload, and
the calibration line times ``sum(range(1000))`` so that figures from different machines can be compared.

* ``end of episode``: per suite with stored oracle plans, the grading an episode with writes costs at its end:
  ``grade_case`` (the checks and the unrequested-write rule, the rule compiled afresh as the runner and the export
  use it) against ``grade`` (the checks alone) on the oracle's traces of the cases whose plan writes. The env
  compiles the rule once per case and judges each write as it is made, so its own end-of-episode cost is the
  checks' plus a tuple.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import timeit
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).parents[1]))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH")]))

from mantra_env.agents.scripted import FINAL, action_text, oracle_plan
from mantra_env.case import Case, CaseCheck, Scenario, Suite, SuiteManifest
from mantra_env.domains import Domain, find_suite, load_domain
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError
from mantra_env.grading import grade, grade_case
from mantra_env.trace import ToolCall, Trace
from tests.env.test_env import CALL_CHECK, CALL_ORDER, DOMAIN, SUITE

TARGET = 10_000
OPERATIONS_ID = "mantra/operations-v2"
RESET_TARGET_US = 1_000


def measure(
    env: MantraEnv, episodes: Sequence[tuple[str, Sequence[Any]]], count: int, repeats: int
) -> tuple[list[float], list[float]]:
    """Steps/s (resets and grading included) and mean reset time in microseconds, per repeat."""
    rates, resets = [], []
    for _ in range(repeats):
        steps, in_reset = 0, 0.0
        start = time.process_time()
        for number in range(count):
            case_id, actions = episodes[number % len(episodes)]
            before = time.process_time()
            env.reset(seed=number, options={"case": case_id})
            in_reset += time.process_time() - before
            for action in actions:
                env.step(action)
                steps += 1
        rates.append(steps / (time.process_time() - start))
        resets.append(in_reset / count * 1e6)
    return rates, resets


def report(name: str, measured: tuple[list[float], list[float]], detail: str) -> None:
    rates, resets = measured
    best, median = max(rates), statistics.median(rates)
    print(f"{name}: {detail}")
    print(f"  best {best:,.0f} steps/s, median {median:,.0f} steps/s ({median / TARGET:.2f}x the {TARGET:,} target)")
    reset = statistics.median(resets)
    print(f"  reset: median {reset:,.1f} us ({reset / RESET_TARGET_US:.3f}x the {RESET_TARGET_US:,} us target)")


Episode = tuple[str, list[tuple[str, dict[str, Any]]], str, list[dict[str, Any]]]
"""A benchmark episode: case id, the plan of valid calls, a check, a database patch."""


def scripted_suite(domain: str, episodes: list[Episode]) -> tuple[Suite, list[tuple[str, list[str]]]]:
    """A suite of one case per episode (its check, so that grading runs too) and each case's actions."""
    cases = [
        Case(
            id=case_id,
            domain=domain,
            scenario=Scenario(prompt=f"Help with {case_id}."),
            checks=[CaseCheck(id="c1", check=check)],
            database_patch=patch,
        )  # type: ignore[arg-type]
        for case_id, _, check, patch in episodes
    ]
    plans = [
        (case_id, [action_text({"tool": tool, "arguments": args}) for tool, args in calls] + [action_text(FINAL)])
        for case_id, calls, _, _ in episodes
    ]
    suite = Suite(manifest=SuiteManifest(name="bench", domain=domain, case_count=len(cases)), cases=cases)
    return suite, plans


def shipped_suite(name: str) -> tuple[Domain, Suite] | None:
    """The domain's default suite, or None while it ships none."""
    try:
        domain, suite = find_suite(name)
    except MantraError:
        return None
    return (domain, suite) if domain is not None else None


def retail_episodes(count: int) -> list[Episode]:
    """Real orders of the retail database and the fixed plan of valid calls that stands in for the oracle on
    each: identify the customer, read the order, the product and the customer, then change the order."""
    data = load_domain("retail").base_data
    episodes: list[Episode] = []
    for order in data["orders"].values():
        if len(episodes) == count:
            break
        user, item = data["users"][order["user_id"]], order["items"][0]
        swap = next(
            (
                v
                for v in data["products"][item["product_id"]]["variants"].values()
                if v["available"] and v["item_id"] != item["item_id"]
            ),
            None,
        )
        method = order["payment_history"][0]["payment_method_id"]
        if order["status"] == "pending" and swap is not None:
            write = (
                "modify_pending_order_items",
                {
                    "order_id": order["order_id"],
                    "item_ids": [item["item_id"]],
                    "new_item_ids": [swap["item_id"]],
                    "payment_method_id": method,
                },
            )
        elif order["status"] == "delivered":
            write = (
                "return_delivered_order_items",
                {"order_id": order["order_id"], "item_ids": [item["item_id"]], "payment_method_id": method},
            )
        else:
            continue
        plan = [
            ("find_user_id_by_email", {"email": user["email"]}),
            ("get_order_details", {"order_id": order["order_id"]}),
            ("get_product_details", {"product_id": item["product_id"]}),
            ("get_user_details", {"user_id": user["user_id"]}),
            ("calculate", {"expression": f"{item['price']} - {swap['price'] if swap else 0}"}),
            write,
        ]
        pinned = f'(order_id="{order["order_id"]}")'
        check = f"CALL get_order_details{pinned} PRECEDES CALL {write[0]}{pinned}"
        patch = [{"op": "set", "path": f"users.{user['user_id']}.email", "value": user["email"]}]
        episodes.append((f"bench-{order['order_id'][1:]}", plan, check, patch))
    return episodes


def telecom_episodes(count: int) -> list[Episode]:
    """Real lines of the telecom database and a fixed plan of valid calls per line: identify the customer, read
    the account, the line, the plan and the handset, then fix what the diagnostics show (push the network
    settings to a handset with a wrong APN, refuel a line out of data)."""
    data = load_domain("telecom").base_data
    episodes: list[Episode] = []
    for line in data["lines"].values():
        if len(episodes) == count:
            break
        customer, device = data["customers"][line["customer_id"]], data["devices"][line["device_id"]]
        methods = [m["id"] for m in customer["payment_methods"].values() if not m["expired"]]
        if line["status"] != "active" or not methods:
            continue
        line_id = {"line_id": line["line_id"]}
        if device["apn"] != "carrier_default" and not device["airplane_mode"] and device["sim_status"] == "active":
            write = ("push_network_settings", line_id)
        elif data["plans"][line["plan_id"]]["max_refuel_gb"] > line["data_refueled_gb"]:
            write = ("refuel_data", {**line_id, "gigabytes": 1, "payment_method_id": methods[0]})
        else:
            continue
        plan = [
            ("find_customer_id_by_phone", {"phone_number": line["phone_number"]}),
            ("get_customer_details", {"customer_id": customer["customer_id"]}),
            ("get_line_details", line_id),
            ("get_plan_details", {"plan_id": line["plan_id"]}),
            ("run_device_diagnostics", line_id),
            write,
        ]
        pinned = f'(line_id="{line["line_id"]}")'
        check = f"CALL run_device_diagnostics{pinned} PRECEDES CALL {write[0]}{pinned}"
        patch = [{"op": "set", "path": f"lines.{line['line_id']}.roaming_enabled", "value": line["roaming_enabled"]}]
        episodes.append((f"bench-{line['line_id']}", plan, check, patch))
    return episodes


def vectorised(env_id: str, num_envs: int, batches: int, repeats: int, mode: str, **kwargs: Any) -> list[float]:
    """Wall-clock steps/s (summed over sub-envs) of ``batches`` vector steps of sampled tool calls, per repeat."""
    vector = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=mode, vector_kwargs=kwargs)
    try:
        vector.action_space.seed(0)
        actions = [vector.action_space.sample() for _ in range(batches)]
        rates = []
        for _ in range(repeats):
            vector.reset(seed=0)
            start = time.perf_counter()
            for batch in actions:
                vector.step(batch)
            rates.append(batches * num_envs / (time.perf_counter() - start))
        return rates
    finally:
        vector.close()


def airline_episodes(count: int) -> list[Episode]:
    """Real reservations of the airline database and a fixed plan of valid calls per reservation: read the
    customer, the reservation, its first flight's status and the flights of that route, then add a checked bag."""
    from mantra_env.domains.airline.database import FREE_BAGS

    data = load_domain("airline").base_data
    episodes: list[Episode] = []
    for reservation in data["reservations"].values():
        if len(episodes) == count:
            break
        user = data["users"][reservation["user_id"]]
        card = next(m["id"] for m in user["payment_methods"].values() if m["source"] == "credit_card")
        if reservation["status"] != "confirmed":
            continue
        segment, bags = reservation["flights"][0], reservation["total_baggages"] + 1
        free = FREE_BAGS[user["membership"]][reservation["cabin"]] * len(reservation["passengers"])
        key = {"reservation_id": reservation["reservation_id"]}
        more = {"total_baggages": bags, "nonfree_baggages": max(0, bags - free), "payment_id": card}
        write = ("update_reservation_baggages", {**key, **more})
        plan = [
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_reservation_details", key),
            ("get_flight_status", {"flight_number": segment["flight_number"], "date": segment["date"]}),
            (
                "search_direct_flight",
                {"origin": segment["origin"], "destination": segment["destination"], "date": "2026-05-25"},
            ),
            ("calculate", {"expression": f"{bags} - {free}"}),
            write,
        ]
        pinned = f'(reservation_id="{reservation["reservation_id"]}")'
        check = f"CALL get_reservation_details{pinned} PRECEDES CALL {write[0]}{pinned}"
        patch = [{"op": "set", "path": f"users.{user['user_id']}.email", "value": user["email"]}]
        episodes.append((f"bench-{reservation['reservation_id']}", plan, check, patch))
    return episodes


def calibration() -> float:
    """Microseconds of ``sum(range(1000))`` (best of 5 x 10,000)."""
    return min(timeit.repeat("sum(range(1000))", number=10_000, repeat=5)) / 10_000 * 1e6


def measure_domain(name: str, episodes: list[Episode], count: int, repeats: int) -> None:
    """Steps/s and reset time on a domain's copy-on-write database, with a fixed plan of valid calls per case."""
    domain = load_domain(name)
    suite, plans = scripted_suite(name, episodes)
    for episode in range(3):  # each episode's plan is valid and its check passes
        env = MantraEnv(suite, domain, max_steps=50)
        env.reset(options={"case": plans[episode][0]})
        assert all(not json.loads(env.step(action)[0]).get("error") for action in plans[episode][1][:-1])
        assert env.last_reward is None or env.last_reward == 1.0
    steps = sum(len(actions) for _, actions in plans) / len(plans)
    rates = measure(MantraEnv(suite, domain, max_steps=50), plans, count, repeats)
    size = len(domain._base_json) / 1e6
    report(
        name,
        rates,
        f"{len(plans)} cases on the {size:.1f} MB database (no suite yet: a fixed plan of valid calls per case "
        f"stands in for the oracle), {steps:.1f} steps per episode, a one-record database patch per case",
    )
    patch = suite.cases[0].database_patch
    database_reset = min(timeit.repeat(lambda: domain.fresh_database(patch), number=2000, repeat=5)) / 2000 * 1e6
    print(f"  of which the database (a copy-on-write view and a one-record patch): {database_reset:.1f} us")
    start = time.process_time()
    domain.database_model.model_validate_json(domain._base_json)
    print(f"  (for comparison, parsing the base database as resets did before: {time.process_time() - start:.3f} s)")


def end_of_episode(suite_name: str, repeats: int) -> None:
    """Microseconds per episode of ``grade_case`` and of ``grade`` on the oracle traces with writes of a suite."""
    domain, suite = find_suite(suite_name)
    assert domain is not None
    tools = domain.tool_specs()
    kinds = {spec.name: spec.kind for spec in tools}
    episodes = []
    for case in suite.cases:
        calls = tuple(
            ToolCall(step=step, tool=call.tool, args=call.arguments, kind=kinds.get(call.tool))
            for step, call in enumerate(case.oracle_plan or ())
        )
        if any(call.kind == "write" for call in calls):
            episodes.append((case, Trace(calls=calls)))
    if not episodes:
        return

    def per_episode(grader: Any) -> float:
        runs = timeit.repeat(lambda: [grader(case, trace) for case, trace in episodes], number=20, repeat=repeats)
        return min(runs) / 20 / len(episodes) * 1e6

    combined = per_episode(lambda case, trace: grade_case(trace, case, tools))
    checks = per_episode(lambda case, trace: grade(trace, case.checks, tools=tools))  # the same argument rules
    print(
        f"  end of episode ({suite_name}, {len(episodes)} oracle episodes with writes): grade_case "
        f"{combined:.1f} us per episode, grade (the checks alone) {checks:.1f} us: "
        f"the rule adds {combined - checks:.1f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    print(f"calibration: sum(range(1000)) takes {calibration():.2f} us")
    fixed = {"retail": retail_episodes, "telecom": telecom_episodes, "airline": airline_episodes}
    for name in ("operations", "retail", "telecom", "airline"):
        shipped = shipped_suite(name)
        if shipped is not None:  # the domain's default suite, every case replayed by the oracle
            domain, suite = shipped
            tools = domain.tool_specs()
            plans = [
                (case.id, [*map(action_text, oracle_plan(case, tools)), action_text(FINAL)]) for case in suite.cases
            ]
            steps = sum(len(actions) for _, actions in plans) / len(plans)
            measured = measure(MantraEnv(suite, domain, max_steps=50), plans, args.episodes, args.repeats)
            detail = (
                f"{len(plans)} cases of {name}/{suite.manifest.name} replayed by the oracle, {steps:.1f} steps each"
            )
            report(name, measured, detail)
            end_of_episode(name, args.repeats)
        else:  # no suite yet: a fixed, realistic plan per episode stands in for the oracle
            measure_domain(name, fixed[name](40), args.episodes, args.repeats)

    end_of_episode("operations/generated", args.repeats)

    minimal = [CALL_CHECK, CALL_ORDER, CALL_CHECK, CALL_CHECK, CALL_ORDER, CALL_CHECK, CALL_CHECK, CALL_CHECK, FINAL]
    rates = measure(MantraEnv(SUITE, DOMAIN, max_steps=50), [(SUITE.cases[0].id, minimal)], args.episodes, args.repeats)
    report("minimal", rates, f"one case, {len(minimal)} steps per episode")

    import mantra_env  # noqa: F401 - registers the shipped suites

    print("vectorised: mantra/operations, sampled tool calls, autoreset, wall clock, steps/s summed over sub-envs")
    for label, num_envs, mode, kwargs in [
        ("sync, 4 envs", 4, "sync", {}),
        ("async, 2 envs, shared memory", 2, "async", {"shared_memory": True}),
        ("async, 2 envs, pipes", 2, "async", {"shared_memory": False}),
    ]:
        rates = vectorised(OPERATIONS_ID, num_envs, args.episodes, args.repeats, mode, **kwargs)
        print(f"  {label}: best {max(rates):,.0f}, median {statistics.median(rates):,.0f} steps/s")


if __name__ == "__main__":
    main()
