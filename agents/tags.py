"""Per-case tags with the scripted baselines played: :func:`mantra_env.splits.case_tags` plus which of noop, decline
and read-all pass each case (their combined verdict), computed once per suite and process (a few seconds at most
for a shipped suite) and only when asked, so ``gym.make`` stays fast."""

from __future__ import annotations

from mantra_env.agents.base import play
from mantra_env.agents.scripted import SCRIPTED
from mantra_env.case import Suite, cases_digest
from mantra_env.domains import Domain
from mantra_env.env import MantraEnv
from mantra_env.splits import CaseTags, case_tags, write_tool_names

BASELINES = ("noop", "decline", "read-all")
"""The writeless baselines a case's tags report on: a case one of them passes tests no action."""

_CACHE: dict[tuple[str, str, int, str], dict[str, CaseTags]] = {}


def played_case_tags(suite: Suite, domain: Domain) -> dict[str, CaseTags]:
    """The tags per case id of ``suite``, ``baselines_passed`` filled in by playing :data:`BASELINES`."""
    manifest = suite.manifest
    # keyed by the cases themselves: a suite built in memory (one split side, an edited copy) may carry the
    # manifest, and so the stored digest, of the suite it came from
    key = (manifest.domain, manifest.name, manifest.version, cases_digest(suite.cases))
    if key not in _CACHE:
        tags = case_tags(suite, write_tool_names(domain.episode_constants.specs))
        env = MantraEnv(suite, domain)
        try:
            passing: dict[str, list[str]] = {case.id: [] for case in suite.cases}
            for case in suite.cases:
                for name in BASELINES:
                    verdict = play(env, SCRIPTED[name](), case.id)["verdict"]
                    if verdict is not None and verdict.passed:
                        passing[case.id].append(name)
        finally:
            env.close()
        played = {
            case_id: tag.model_copy(update={"baselines_passed": passing[case_id]}) for case_id, tag in tags.items()
        }
        _CACHE[key] = played
    return _CACHE[key]
