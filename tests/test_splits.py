"""Train/test splits and per-case tags (mantra_env.splits, mantra_env.agents.tags): no sample or chunk group on both
sides, the same split in another process, a non-empty test side for every shipped suite, ``gym.make(split=...)``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import mantra_env  # noqa: F401  # registers the gymnasium ids
from mantra_env.agents.tags import played_case_tags
from mantra_env.case import Suite
from mantra_env.domains import find_suite
from mantra_env.registration import catalog
from mantra_env.splits import TEST_FRACTION, SplitError, sample_key, split_suite, suite_split

ROOT = Path(__file__).resolve().parents[1]
PINNED_STARTER_TEST = ["fig1-case1", "hw-short-lead-po", "hw-long-lead-standard"]
SHIPPED = [entry.run_name for entry in catalog()[0] if "/" in entry.run_name]  # domain/suite names


def _loaded(name: str) -> Suite:
    return find_suite(name)[1]


def test_the_shipped_suites_are_listed() -> None:
    assert {"operations/starter", "operations/generated", "retail/generated"} <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_no_sample_or_group_is_on_both_sides_and_both_sides_are_non_empty(name: str) -> None:
    suite = _loaded(name)
    split = suite_split(suite)
    assert split.train and split.test
    assert sorted(split.train + split.test) == sorted(case.id for case in suite.cases)
    wanted = TEST_FRACTION * len(suite.cases)  # the fraction, reached with whole groups
    assert wanted <= len(split.test) < wanted + max(len(group) for group in split.groups)
    test = set(split.test)
    for group in split.groups:
        assert set(group) <= test or not set(group) & test, group
    side = {sample_key(case): case.id in test for case in suite.cases}
    for case in suite.cases:
        assert side[sample_key(case)] == (case.id in test), case.id
    train_chunks = {chunk for case in suite.cases if case.id not in test for chunk in case.sample_chunk_ids}
    test_chunks = {chunk for case in suite.cases if case.id in test for chunk in case.sample_chunk_ids}
    assert split.shared_chunks == sorted(train_chunks & test_chunks)
    if split.by == "chunk-groups":
        assert not split.shared_chunks


def test_samples_with_disjoint_chunks_split_by_chunk_group_and_share_no_chunk() -> None:
    suite = _loaded("operations/generated")
    # Each sample's chunks renamed apart, then samples 0 and 1 made to share one: a suite with several groups.
    keys = list(dict.fromkeys(sample_key(case) for case in suite.cases))
    renamed = {key: [f"{index}-{chunk}" for chunk in key.split(",")] for index, key in enumerate(keys)}
    renamed[keys[1]].append(renamed[keys[0]][0])
    cases = [case.model_copy(update={"sample_chunk_ids": renamed[sample_key(case)]}) for case in suite.cases]
    split = suite_split(Suite(manifest=suite.manifest, cases=cases))
    assert split.by == "chunk-groups" and split.train and split.test and not split.shared_chunks
    assert len(split.groups) == len(keys) - 1
    first = {case.id for case in suite.cases if sample_key(case) in keys[:2]}
    assert first in [set(group) for group in split.groups]


def test_the_split_is_the_same_in_another_process_and_moves_with_the_version() -> None:
    script = (
        "import json; from mantra_env.domains import find_suite; from mantra_env.splits import suite_split; "
        f"print(json.dumps({{n: suite_split(find_suite(n)[1]).test for n in {SHIPPED!r}}}))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=True
    )
    assert json.loads(done.stdout) == {name: suite_split(_loaded(name)).test for name in SHIPPED}
    # sha256 of (domain/suite, version, group), pinned: a change of the hashing (or a salted hash) shows here
    assert suite_split(_loaded("operations/starter")).test == PINNED_STARTER_TEST
    suite = _loaded("operations/starter")
    bumped = Suite(
        manifest=suite.manifest.model_copy(update={"version": suite.manifest.version + 7}), cases=suite.cases
    )
    assert suite_split(bumped).test != suite_split(suite).test


def test_gym_make_takes_a_split() -> None:
    suite = _loaded("operations/starter")
    split = suite_split(suite)
    env_id = next(entry.env_ids[0] for entry in catalog()[0] if entry.run_name == "operations/starter")
    for side in ("train", "test"):
        env = gym.make(env_id, split=side)
        assert [case.id for case in env.unwrapped.suite.cases] == split.cases(side)
        env.close()
    assert len(gym.make(env_id, split=None).unwrapped.suite.cases) == len(suite.cases)
    with pytest.raises(SplitError, match="'train', 'test' or None"):
        gym.make(env_id, split="validation")


def test_a_suite_of_one_sample_has_no_test_side_and_says_so() -> None:
    suite = _loaded("operations/generated")
    key = sample_key(suite.cases[0])
    one = [case for case in suite.cases if sample_key(case) == key]
    single = Suite(manifest=suite.manifest.model_copy(update={"case_count": len(one)}), cases=one)
    assert suite_split(single).test == []
    with pytest.raises(SplitError, match="no test cases"):
        split_suite(single, "test")
    with pytest.raises(SplitError, match="between 0 and 1"):
        suite_split(suite, 1.0)


def test_tags_follow_the_plan_checks_and_the_baselines_played() -> None:
    domain, suite = find_suite("retail/generated")
    assert domain is not None
    tags = played_case_tags(suite, domain)
    test = set(suite_split(suite).test)
    writes = {spec.name for spec in domain.tool_specs() if spec.kind == "write"}
    for case in suite.cases:
        tag = tags[case.id]
        assert tag.split == ("test" if case.id in test else "train")
        assert case.oracle_plan is not None and tag.plan_length == len(case.oracle_plan)
        assert tag.kind == ("action" if any(call.tool in writes for call in case.oracle_plan) else "refusal")
        assert tag.checks == len(case.checks) and tag.first_valid_round == case.validation.first_valid_round
        assert tag.baselines_passed is not None and "noop" not in tag.baselines_passed  # noop screened out
        # decline reads what the oracle reads and writes nothing: it passes exactly the refusal cases
        assert ("decline" in tag.baselines_passed) == (tag.kind == "refusal"), case.id
    assert {tag.kind for tag in tags.values()} == {"action", "refusal"}
    assert any(tag.answer_checks for tag in tags.values()) or not any(
        "ANSWER" in entry.text for case in suite.cases for entry in case.checks
    )
    assert played_case_tags(suite, domain) is tags  # played once per suite and process


def test_played_tags_of_one_side_are_that_sides_not_the_suites() -> None:
    domain, suite = find_suite("operations/starter")
    assert domain is not None
    assert set(played_case_tags(split_suite(suite, "test"), domain)) == set(suite_split(suite).test)
    assert set(played_case_tags(suite, domain)) == {case.id for case in suite.cases}
