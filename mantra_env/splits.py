"""Train/test splits and per-case tags of a suite, computed at load from the suite alone.

A case's *sample* is the set of manual chunks it was generated from (``sample_chunk_ids``; the cases of one sample
share it); a hand-written case with no chunks is its own sample. Samples that share a chunk are joined into
connected *groups*, and whole groups go to one side, so no manual chunk is seen in training and tested on. Where that
leaves a single group (every sample overlaps), the split falls back to samples and reports the chunks both sides
share (:attr:`SuiteSplit.shared_chunks`).

The groups are ordered by a SHA-256 hash of ``(domain/suite, version, group key)`` and taken into the test side in
that order until it holds the test fraction (:data:`TEST_FRACTION`) of the cases, at least one group and never all
of them; so the split is the same on every run and machine, changes only with the suite's version or its groups,
and its size is near the fraction (a per-group coin would leave a 22-group suite with 2 test cases).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mantra_env.case import Case, Suite
from mantra_env.checks.ast import Answer
from mantra_env.errors import MantraError
from mantra_env.tools import ToolSpec

TEST_FRACTION = 0.2
"""The default share of a suite's cases that go to the test side (whole groups: the share is reached or passed)."""

SPLITS = ("train", "test")
Split = Literal["train", "test"]


class SplitError(MantraError, ValueError):
    """A split name or test fraction that is not allowed."""


class SuiteSplit(BaseModel):
    """Which cases of a suite are train and which are test, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    by: Literal["chunk-groups", "samples"]
    """``chunk-groups``: no chunk on both sides; ``samples``: one group covered the suite, split by sample."""
    groups: list[list[str]]
    """The case ids of each group (sorted), in the order of their first case in the suite."""
    train: list[str]
    test: list[str]
    shared_chunks: list[str]
    """Chunks whose cases are on both sides (empty for ``chunk-groups``)."""

    def cases(self, split: Split) -> list[str]:
        return self.train if split == "train" else self.test


def check_split(split: str | None) -> Split | None:
    """``split`` as a :data:`Split`, or None.

    Raises:
        SplitError: for anything but ``"train"``, ``"test"`` or None.
    """
    if split is None or split in SPLITS:
        return split  # type: ignore[return-value]  # narrowed by the membership test
    raise SplitError(f"split must be 'train', 'test' or None, not {split!r}")


def sample_key(case: Case) -> str:
    """The sample a case was generated from: its sorted chunk ids, or its own id for a case with none."""
    return ",".join(sorted(case.sample_chunk_ids)) if case.sample_chunk_ids else f"case:{case.id}"


def suite_split(suite: Suite, test_fraction: float = TEST_FRACTION) -> SuiteSplit:
    """The train/test split of ``suite`` (see the module docstring).

    Raises:
        SplitError: for a test fraction outside (0, 1).
    """
    if not 0 < test_fraction < 1:
        raise SplitError(f"the test fraction must be between 0 and 1 (exclusive), not {test_fraction}")
    samples: dict[str, list[Case]] = {}
    for case in suite.cases:
        samples.setdefault(sample_key(case), []).append(case)
    grouped = _connected(samples)
    by: Literal["chunk-groups", "samples"] = "chunk-groups"
    if len(grouped) < 2:
        by, grouped = "samples", [[key] for key in samples]
    seed = f"{suite.manifest.domain}/{suite.manifest.name}\n{suite.manifest.version}\n"
    ranks = [_unit_hash(seed + "|".join(sorted(keys))) for keys in grouped]
    groups = [sorted(case.id for key in keys for case in samples[key]) for keys in grouped]
    test: set[int] = set()
    wanted = test_fraction * len(suite.cases)
    for index in sorted(range(len(groups)), key=ranks.__getitem__)[: len(groups) - 1]:  # one group stays train
        if sum(len(groups[taken]) for taken in test) >= wanted:
            break
        test.add(index)
    test_ids = {case_id for index in test for case_id in groups[index]}
    train_chunks = {chunk for case in suite.cases if case.id not in test_ids for chunk in case.sample_chunk_ids}
    test_chunks = {chunk for case in suite.cases if case.id in test_ids for chunk in case.sample_chunk_ids}
    return SuiteSplit(
        by=by,
        groups=groups,
        train=[case.id for case in suite.cases if case.id not in test_ids],
        test=[case.id for case in suite.cases if case.id in test_ids],
        shared_chunks=sorted(train_chunks & test_chunks),
    )


def split_suite(suite: Suite, split: str | None, test_fraction: float = TEST_FRACTION) -> Suite:
    """``suite`` with only the cases of ``split`` (``suite`` itself for None).

    Raises:
        SplitError: for an unknown split name or a split with no cases.
    """
    chosen = check_split(split)
    if chosen is None:
        return suite
    keep = set(suite_split(suite, test_fraction).cases(chosen))
    if not keep:
        raise SplitError(
            f"suite {suite.manifest.domain}/{suite.manifest.name} has no {chosen} cases "
            f"(it has {len(suite.cases)} case(s) from one sample); use split=None"
        )
    cases = [case for case in suite.cases if case.id in keep]
    return Suite(manifest=suite.manifest.model_copy(update={"case_count": len(cases)}), cases=cases)


def _connected(samples: dict[str, list[Case]]) -> list[list[str]]:
    """The sample keys joined into groups by shared chunks (union-find), in first-seen order."""
    parent = {key: key for key in samples}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    owner: dict[str, str] = {}
    for key, cases in samples.items():
        for chunk in cases[0].sample_chunk_ids:
            if chunk in owner:
                parent[root(key)] = root(owner[chunk])
            else:
                owner[chunk] = key
    grouped: dict[str, list[str]] = {}
    for key in samples:
        grouped.setdefault(root(key), []).append(key)
    return list(grouped.values())


def _unit_hash(text: str) -> float:
    """A number in [0, 1) from SHA-256: the same on every machine and Python (``hash()`` is salted per process)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") / 2**64


# -- per-case tags ------------------------------------------------------------------------------------------------
class CaseTags(BaseModel):
    """What a case asks of an agent, from its stored fields (no episode is played)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    split: Split
    kind: Literal["action", "refusal"] | None
    """``action``: the oracle plan writes; ``refusal``: it only reads; None: no stored plan."""
    plan_length: int | None
    checks: int
    answer_checks: bool
    first_valid_round: int | None
    baselines_passed: list[str] | None = None
    """The scripted baselines (noop, decline, read-all) whose episode passes the case; None: not played here
    (the core plays no agent: ``mantra_env.agents.tags.played_case_tags`` fills it in)."""


def case_tags(suite: Suite, write_tools: Collection[str], test_fraction: float = TEST_FRACTION) -> dict[str, CaseTags]:
    """Tags per case id of ``suite``; ``write_tools`` names the domain's write tools."""
    test = set(suite_split(suite, test_fraction).test)
    return {case.id: _tags(case, write_tools, "test" if case.id in test else "train") for case in suite.cases}


def _tags(case: Case, write_tools: Collection[str], split: Split) -> CaseTags:
    plan = case.oracle_plan
    kind: Literal["action", "refusal"] | None = None
    if plan is not None:
        kind = "action" if any(call.tool in write_tools for call in plan) else "refusal"
    return CaseTags(
        split=split,
        kind=kind,
        plan_length=len(plan) if plan is not None else None,
        checks=len(case.checks),
        answer_checks=any(isinstance(entry.check, Answer) for entry in case.checks),
        first_valid_round=case.validation.first_valid_round,
    )


def write_tool_names(specs: Iterable[ToolSpec]) -> set[str]:
    """The names of the write tools among a domain's tool specs."""
    return {spec.name for spec in specs if spec.kind == "write"}
