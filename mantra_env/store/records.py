"""The records a run stores: versioned pydantic models whose projections are the DuckDB rows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from mantra_env.grading import GRADER_VERSION
from mantra_env.trace import Trace
from mantra_env.verdict import Verdict

EpisodeStatus = Literal["passed", "failed", "error"]
"""``error`` means the episode could not be graded (infrastructure failure); it is never an agent failure."""


GRADER_NAMES = {1: "the checks alone", 2: "the checks and unrequested writes"}
"""What each grader version (:data:`~mantra_env.grading.GRADER_VERSION`) scored, as the store's messages say it."""


def grader_name(version: int) -> str:
    """What grader ``version`` scored, in words."""
    return GRADER_NAMES.get(version, "unknown to this mantra-env")


def utc_now() -> datetime:
    return datetime.now(UTC)


class RunRecord(BaseModel):
    """One run: a set of episodes with one configuration."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = Field(min_length=1)
    name: str = ""
    suite: str
    suite_version: int = 0
    model: str
    agent: str
    code_version: str = ""
    config: dict[str, JsonValue] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)
    suite_hash: str | None = Field(
        default=None,
        description="Content hash of the suite's cases and its domain's manual, tool specs and base database "
        "(None for runs stored before schema version 3).",
    )
    settings: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="What decides the run's episodes (attempts, seed, caps): a resumed run must match it.",
    )
    grader_version: int = Field(
        default=GRADER_VERSION,
        ge=1,
        description="The grader that scored the run's episodes (mantra_env.grading.GRADER_VERSION when it ran; 1, "
        "the checks alone, for runs stored before schema version 4).",
    )

    def differences(self, new: RunRecord) -> list[str]:
        """What ``new`` changes in what decides this stored run's episodes, as ``what: old -> new``.

        A run stored before schema version 3 has no suite hash or settings; those are then not compared.
        """
        found = [
            f"{name}: {old!r} -> {now!r}"
            for name, old, now in (
                ("suite", self.suite, new.suite),
                ("model", self.model, new.model),
                ("agent", self.agent, new.agent),
            )
            if old != now
        ]
        if self.suite_hash is not None and self.suite_hash != new.suite_hash:
            found.append(
                f"suite content (hash of cases, manual, tools, database): {self.suite_hash} -> {new.suite_hash}"
            )
        if self.settings:
            for key in sorted(set(self.settings) | set(new.settings)):
                old, now = self.settings.get(key), new.settings.get(key)
                if old != now:
                    found.append(f"{key}: {old!r} -> {now!r}")
        return found


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    model_calls: int = Field(default=0, ge=0)


class EpisodeRecord(BaseModel):
    """One finished attempt of one case, keyed by (run_id, case_id, attempt)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    case_id: str
    attempt: int = Field(ge=0)
    status: EpisodeStatus
    reward: float | None = None
    verdict: Verdict | None = None
    trace: Trace = Field(default_factory=Trace)
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = Field(default=0.0, ge=0.0)
    step_latencies_s: list[float] = Field(default_factory=list)
    error_kind: str | None = Field(
        default=None,
        description="error episodes: connection, timeout, rate_limit, server, bad_output, auth, not_found, "
        "configuration or internal; failed ones: model (the model's output ended the episode; reason in error).",
    )
    error: str | None = None
    messages: list[JsonValue] = Field(default_factory=list, description="Full model message history.")
    started_at: datetime = Field(default_factory=utc_now)
    finished_at: datetime = Field(default_factory=utc_now)
