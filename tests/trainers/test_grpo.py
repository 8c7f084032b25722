"""The GRPO recipe's episodes (trainers/grpo.py): a multi-turn rollout against the live env, as TRL takes it.

The trainer itself (torch, TRL) runs in its own virtualenv under ``make train-smoke``; these tests drive
:func:`mantra_env.trainers.grpo.play_episode` with a scripted policy and a character-level codec, in the main one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from mantra_env.domains import find_suite
from mantra_env.env import MantraEnv
from mantra_env.observations import tool_observation
from mantra_env.oracle import oracle_plan
from mantra_env.trainers.grpo import Codec, Messages, RolloutError, demonstration, play_episode
from mantra_env.trainers.text import opening_messages, reply_for_call

END = "\x00"  # the end of a turn: one "token" of the character codec below


def _render(messages: Messages, generation_prompt: bool) -> str:
    text = "".join(f"<{m['role']}>\n{m['content']}{END}\n" for m in messages)
    return text + ("<assistant>\n" if generation_prompt else "")


CODEC = Codec(
    render=_render,
    encode=lambda text: [ord(char) for char in text],
    decode=lambda ids: "".join(chr(i) for i in ids),
    end_of_turn=0,
)


def _env_and_plan() -> tuple[MantraEnv, str, list[str]]:
    domain, suite = find_suite("operations/starter")
    assert domain is not None
    case = suite.cases[0]
    plan = oracle_plan(case, domain.episode_constants.specs)
    replies = [reply_for_call(action["tool"], action.get("arguments", {})) for action in plan]
    return MantraEnv(suite, domain, reward_mode="fraction"), case.id, [*replies, "All done."]


def _scripted(replies: list[str], end_turns: bool = True) -> tuple[list[list[int]], Callable[[list[int]], list[int]]]:
    seen: list[list[int]] = []
    queue = list(replies)

    def generate(ids: list[int]) -> list[int]:
        seen.append(list(ids))
        return CODEC.encode(queue.pop(0)) + ([CODEC.end_of_turn] if end_turns else [])

    return seen, generate


def test_an_episode_is_the_policys_turns_and_the_envs_observations_with_the_envs_masked() -> None:
    env, case_id, replies = _env_and_plan()
    seen, generate = _scripted(replies)
    episode = play_episode(env, case_id, CODEC, generate, max_turns=len(replies))
    assert episode.reward == 1.0 and env.last_verdict is not None and env.last_verdict.passed
    assert episode.replies == replies and len(seen) == len(replies)
    policy = "".join(chr(i) for i, keep in zip(episode.completion_ids, episode.env_mask, strict=True) if keep)
    assert policy == "".join(reply + END for reply in replies)
    # each generation continued exactly what the template writes for the conversation so far
    conversation = opening_messages(env.reset(options={"case": case_id})[0])
    for reply, ids, call in zip(replies, seen, [*env.last_trace.calls, None], strict=True):
        assert CODEC.decode(ids) == _render(conversation, True)
        if call is not None:
            observation = tool_observation(call, env.observation_space.max_bytes)
            conversation += [{"role": "assistant", "content": reply}, {"role": "user", "content": observation}]


def test_out_of_turns_the_episode_ends_with_an_empty_answer_graded_on_its_calls() -> None:
    env, case_id, replies = _env_and_plan()
    _, generate = _scripted(replies, end_turns=False)  # replies cut at the token budget: no end of turn
    episode = play_episode(env, case_id, CODEC, generate, max_turns=1)
    assert env.done and env.last_trace.final_answer == "" and len(env.last_trace.calls) == 1
    assert episode.reward == env.last_reward and episode.reward < 1.0
    assert sum(episode.env_mask) == len(replies[0])  # the template's end of turn is the env's text, masked


def test_a_demonstration_is_the_oracles_episode_in_the_policys_format() -> None:
    env, case_id, _ = _env_and_plan()
    episode = demonstration(env, case_id, CODEC)
    assert episode.reward == 1.0 and env.last_verdict is not None and env.last_verdict.passed
    assert episode.replies[-1] == env.last_trace.final_answer and "<tool_call>" not in episode.replies[-1]
    assert len(episode.replies) == len(env.last_trace.calls) + 1


def test_a_chat_template_that_rewrites_earlier_turns_is_refused() -> None:
    env, case_id, replies = _env_and_plan()
    _, generate = _scripted(replies)
    newest_first = replace(CODEC, render=lambda messages, prompt: _render(messages[::-1], prompt))
    with pytest.raises(RolloutError, match="rewrites earlier turns"):
        play_episode(env, case_id, newest_first, generate, max_turns=len(replies))
