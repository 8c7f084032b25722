"""Screening at export (issue 16.4): a validated case ships only if the oracle passes it cleanly and no trivial
agent passes it.

Cleanly: the oracle's replay of the compliant witness passes every check with zero tool errors and zero
premature writes (a write before the trace's first read). One error is no mistake: a read a check pins by its
arguments that finds nothing (``not_found``), as when the procedure has the agent try the email the customer
gave before the name and zip code and the email is not on file; the check says the lookup is required
(:func:`mantra_env.rewards.expected_misses`, which the shaped reward does not penalize either).

Trivial agents: ``noop`` (no call), ``random``
(seeded random calls, a few seeds) and ``write-first`` (the oracle's calls with the writes moved first); a case
one of them passes does not tell compliance from luck or from ignoring the manual's order. A case whose oracle
makes no write (a refusal that must still read what it refuses) has no order to ignore: its write-first agent
would be the oracle itself, so that screen is skipped there.
"""

from __future__ import annotations

from collections.abc import Sequence

from mantra_env.agents.base import play
from mantra_env.agents.scripted import NoopPolicy, OraclePolicy, RandomPolicy, ScriptedPolicy, WriteFirstPolicy
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError
from mantra_env.oracle import OracleError
from mantra_env.rewards import expected_misses
from mantra_env.trace import Trace

ORACLE_REASONS = ("oracle_error", "oracle_fails", "oracle_tool_errors", "oracle_premature_write")
"""Why the oracle does not pass a case cleanly (counted as ``replay_failed`` in the funnel)."""
RANDOM_SEEDS = (0, 1, 2)


def premature_write(trace: Trace) -> bool:
    """Whether a write comes before the trace's first read (the report's premature-write measure)."""
    for call in trace.calls:
        if call.kind == "read":
            return False
        if call.kind == "write":
            return True
    return False


def trivial_policies() -> list[tuple[ScriptedPolicy, Sequence[int]]]:
    """The trivial agents a case must defeat, with the episode seeds each plays."""
    return [(NoopPolicy(), (0,)), (RandomPolicy(), RANDOM_SEEDS), (WriteFirstPolicy(), (0,))]


def screen_case(env: MantraEnv, case_id: str) -> tuple[str, str] | None:
    """``(reason, detail)`` if the case must not ship, ``None`` if it passes the screen."""
    try:
        result = play(env, OraclePolicy(), case_id)
    except (OracleError, MantraError) as error:
        return "oracle_error", str(error)
    verdict, trace = result["verdict"], result["trace"]
    if verdict is None or not verdict.passed:
        failed = [c.check_id for c in verdict.checks if not c.passed] if verdict else []
        return "oracle_fails", f"the oracle's replay fails check(s) {', '.join(failed)}"
    expected = expected_misses(env.suite.case(case_id).checks, trace.calls)
    errors = [
        f"step {call.step} {call.tool}: {call.error.code}"
        for call in trace.calls
        if call.error is not None and call.step not in expected
    ]
    if errors:
        return "oracle_tool_errors", f"the oracle's replay gets tool errors: {'; '.join(errors)}"
    if premature_write(trace):
        return "oracle_premature_write", "the oracle's replay writes before its first read"
    writes = any(call.kind == "write" for call in trace.calls)
    for policy, seeds in trivial_policies():
        if isinstance(policy, WriteFirstPolicy) and not writes:
            continue
        for seed in seeds:
            try:
                verdict = play(env, policy, case_id, seed=seed)["verdict"]
            except OracleError:  # write-first replans the oracle: it cannot fail here after the oracle succeeded
                continue
            if verdict is not None and verdict.passed:
                return f"passed_by_{policy.name.replace('-', '_')}", (
                    f"the {policy.name} agent passes it (seed {seed}): the checks do not require the procedure"
                )
    return None
