"""GRPO on mantra-env's rewards with TRL's ``GRPOTrainer``, multi-turn, on a CPU (``make train-smoke``).

Each training prompt is one case of a suite, in :mod:`mantra_env.trainers.text`'s protocol (a system message with the
manual and the tools, the request as the user message). A rollout is a whole episode against a live
:class:`~mantra_env.env.MantraEnv`: the policy writes a reply, the env steps the action the reply means
(:func:`mantra_env.trainers.text.action_from_reply`: a ``<tool_call>`` block, else the final answer), the observation
comes back as a user message, until the final answer, the env's step limit or ``--max-turns`` (then an empty final
answer ends it). TRL gets the episode as one completion, the policy's tokens and the env's, the env's masked out
of the loss (its ``env_mask``), and the env's reward of the episode (``--reward``: binary, fraction, shaped) as
the reward, logged at every optimizer step even when it is zero.

By default the policy is a tiny randomly initialised Qwen2 (2 layers, 64 wide) with a byte-level BPE tokenizer
trained on the suite's own text, both built offline in seconds: the recipe runs end to end on a machine with no
network and no GPU, though such a model earns nothing. ``--model`` takes a real one (a folder, or a hub id when
online); its chat template must keep earlier turns as they are when a turn is appended (Qwen's and Llama's do).

Install into a virtualenv of its own (the Makefile's ``train-smoke`` builds ``.venv-train``)::

    python -m venv .venv-train
    .venv-train/bin/pip install torch==2.13.0            # the CPU build
    .venv-train/bin/pip install -e . trl==1.16.0         # TRL brings transformers, datasets, accelerate
    HF_HUB_OFFLINE=1 .venv-train/bin/python -m mantra_env.trainers.grpo --suite operations/starter --steps 3
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mantra_env.answers import final_answer
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError
from mantra_env.oracle import oracle_plan
from mantra_env.registration import make_env
from mantra_env.rewards import REWARD_MODES
from mantra_env.trainers.text import action_from_reply, opening_messages, reply_for_call

Messages = list[dict[str, str]]

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""The tiny model's chat template: ChatML, as Qwen writes turns (prefix-preserving: a turn appended leaves the
earlier text as it was)."""
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


class RolloutError(MantraError, ValueError):
    """The episodes cannot be played as asked (a chat template that rewrites earlier turns, cases that open alike)."""


@dataclass
class Episode:
    """One rollout as TRL takes it: the prompt's tokens, the completion's (the policy's and the env's), the mask
    that keeps the env's tokens out of the loss (1: the policy's), the env's reward and the replies written."""

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    reward: float = 0.0
    replies: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Codec:
    """What an episode needs of a tokenizer: its chat template as text, encoding, decoding, the end of a turn."""

    render: Callable[[Messages, bool], str]
    """``messages`` as the chat template writes them; the flag adds the assistant's generation prompt."""
    encode: Callable[[str], list[int]]
    decode: Callable[[list[int]], str]
    end_of_turn: int
    """The token that ends an assistant turn (generation stops there)."""


def play_episode(
    env: MantraEnv, case_id: str, codec: Codec, generate: Callable[[list[int]], list[int]], max_turns: int
) -> Episode:
    """One episode of ``case_id``: ``generate`` continues a token sequence with one reply (ending at the end of
    turn or at its token budget); each reply is stepped in ``env``, its observation appended as a user turn.

    The env's tokens between two replies are the template's text of the turn that ends the reply (unless the
    policy ended it), the observation's user turn and the next generation prompt: the difference of the
    rendered conversations, so the stream is what the template would write for the whole episode."""
    opening, _ = env.reset(options={"case": case_id})
    messages: Messages = opening_messages(opening)
    before = codec.render(messages, True)
    episode = Episode(prompt_ids=codec.encode(before))
    reward: float | None = None
    for _ in range(max_turns):
        reply_ids = generate(episode.prompt_ids + episode.completion_ids)
        episode.completion_ids += reply_ids
        episode.env_mask += [1] * len(reply_ids)
        ended = bool(reply_ids) and reply_ids[-1] == codec.end_of_turn
        reply = codec.decode(reply_ids[:-1] if ended else reply_ids)
        episode.replies.append(reply)
        observation, paid, terminated, truncated, _ = env.step(action_from_reply(reply))
        if terminated or truncated:
            reward = float(paid)
            break
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": observation}]
        after = codec.render(messages, True)
        between = after[len(before) :]
        if not between.startswith(reply):
            raise RolloutError("the chat template rewrites earlier turns: multi-turn rollouts need one that does not")
        between = between[len(reply) :]
        if ended:  # the policy wrote the end of its turn: the env's text starts after it
            between = between.split(codec.decode([codec.end_of_turn]), 1)[-1]
        env_ids = codec.encode(between)
        episode.completion_ids += env_ids
        episode.env_mask += [0] * len(env_ids)
        before = after
    if reward is None:  # out of turns: the episode ends with an empty answer, graded on the calls made
        reward = float(env.step({"final_answer": ""})[1])
    episode.reward = reward
    return episode


def demonstration_replies(env: MantraEnv, case_id: str) -> list[str]:
    """The oracle's replies on ``case_id`` in :mod:`mantra_env.trainers.text`'s protocol: its plan's calls, one per
    reply, then its final answer over what they returned (:func:`mantra_env.answers.final_answer`)."""
    case = env.suite.case(case_id)
    plan = oracle_plan(case, env.domain.episode_constants.specs)
    env.reset(options={"case": case_id})
    for action in plan:
        env.step(action)
    answer = final_answer([entry.check for entry in case.checks], env.trace.calls)
    return [*(reply_for_call(action["tool"], action.get("arguments", {})) for action in plan), answer]


def demonstration(env: MantraEnv, case_id: str, codec: Codec) -> Episode:
    """The oracle's episode of ``case_id`` as :func:`play_episode` writes a policy's (each reply ending its turn):
    the supervised warm-up's data, tokenized as the rollouts are."""
    replies = demonstration_replies(env, case_id)
    queue = list(replies)

    def generate(ids: list[int]) -> list[int]:
        return [*codec.encode(queue.pop(0)), codec.end_of_turn]

    return play_episode(env, case_id, codec, generate, max_turns=len(replies))


# -- everything below needs the training virtualenv (torch, transformers, trl) -----------------------------------
def tiny_model(texts: Sequence[str], folder: Path, seed: int) -> tuple[Any, Any]:
    """A randomly initialised 2-layer Qwen2 and a byte-level BPE tokenizer (1,024 tokens, trained on ``texts``,
    ChatML template), built offline and saved to ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers import trainers as token_trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = token_trainers.BpeTrainer(vocab_size=1024, special_tokens=list(SPECIAL_TOKENS), initial_alphabet=alphabet)
    bpe.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    tokenizer.chat_template = CHATML
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16384, tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None,
    )  # fmt: skip
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model, tokenizer


def hf_codec(tokenizer: Any) -> Codec:
    """:class:`Codec` over a transformers tokenizer with a chat template."""

    def render(messages: Messages, generation_prompt: bool) -> str:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)
        return str(text)

    return Codec(
        render=render,
        encode=lambda text: list(tokenizer(text, add_special_tokens=False)["input_ids"]),
        decode=lambda ids: str(tokenizer.decode(ids, skip_special_tokens=False)),
        end_of_turn=int(tokenizer.eos_token_id),
    )


class EpisodeRollouts:
    """TRL's ``rollout_func``: each prompt of the batch (GRPO's sampler repeats each case ``num_generations``
    times) played as an :class:`Episode` by the trainer's current policy. The prompts carry no case id, so the case
    is found by its opening messages (distinct per case: checked at construction)."""

    def __init__(self, suite: str, cases: Sequence[str], reward: str, max_turns: int, turn_tokens: int) -> None:
        self.suite, self.reward_mode, self.max_turns, self.turn_tokens = suite, reward, max_turns, turn_tokens
        self.env: MantraEnv = make_env(suite, reward_mode=reward)
        self.cases: dict[str, str] = {}
        self.rows: list[dict[str, Any]] = []
        for case_id in cases:
            opening, _ = self.env.reset(options={"case": case_id})
            prompt = opening_messages(opening)
            key = json.dumps(prompt)
            if key in self.cases:
                raise RolloutError(
                    f"cases {self.cases[key]} and {case_id} of {suite} open alike (same manual, tools and request): "
                    "a rollout sees only the prompt and cannot tell them apart"
                )
            self.cases[key] = case_id
            self.rows.append({"prompt": prompt, "case": case_id})
        self.rewards: list[list[float]] = []  # per optimizer step's generation batch, each episode's reward

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        import torch

        model = trainer.accelerator.unwrap_model(trainer.model)
        codec = hf_codec(trainer.processing_class)

        def generate(ids: list[int]) -> list[int]:
            with torch.no_grad():
                out = model.generate(
                    torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                    max_new_tokens=self.turn_tokens, do_sample=True, temperature=1.0, top_k=0, top_p=1.0,
                    eos_token_id=codec.end_of_turn, pad_token_id=trainer.processing_class.pad_token_id,
                )  # fmt: skip
            return [int(token) for token in out[0, len(ids) :]]

        episodes = [
            play_episode(self.env, self.cases[json.dumps(prompt)], codec, generate, self.max_turns)
            for prompt in prompts
        ]
        self.rewards.append([episode.reward for episode in episodes])
        return {
            "prompt_ids": [episode.prompt_ids for episode in episodes],
            "completion_ids": [episode.completion_ids for episode in episodes],
            "logprobs": None,  # TRL recomputes them (no vLLM sampling to correct for)
            "env_mask": [episode.env_mask for episode in episodes],
            "env_reward": [episode.reward for episode in episodes],
        }


def warm_up(model: Any, episodes: Sequence[Episode], steps: int, learning_rate: float) -> list[float]:
    """``steps`` steps of supervised fine-tuning on ``episodes`` (the oracle's demonstrations, one per step in
    turn), the loss on the policy's tokens only (the env's are masked as in GRPO); returns each step's loss."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    losses = []
    for step in range(steps):
        episode = episodes[step % len(episodes)]
        ids = torch.tensor([episode.prompt_ids + episode.completion_ids])
        masked = [token if keep else -100 for token, keep in zip(episode.completion_ids, episode.env_mask, strict=True)]
        labels = torch.tensor([[-100] * len(episode.prompt_ids) + masked])
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        print(json.dumps({"warmup_step": step + 1, "loss": round(losses[-1], 4)}), flush=True)
    return losses


def mantra_reward(completions: list[Any], env_reward: list[float], **kwargs: Any) -> list[float]:
    """The reward function TRL calls: the env's reward of each episode, computed during its rollout."""
    return [float(value) for value in env_reward]


def train(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run GRPO as ``args`` say; returns the log, one entry per optimizer step."""
    import datasets  # type: ignore[import-untyped]
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from mantra_env.splits import split_suite

    probe = make_env(args.suite)
    cases = [case.id for case in split_suite(probe.suite, args.split).cases]
    rollouts = EpisodeRollouts(args.suite, cases, args.reward, args.max_turns, args.turn_tokens)
    out = Path(args.out or tempfile.mkdtemp(prefix="mantra-grpo-"))
    if args.model:
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        model = AutoModelForCausalLM.from_pretrained(args.model)
    else:
        texts = [json.dumps(row["prompt"], ensure_ascii=False) for row in rollouts.rows]
        texts += [reply for case_id in cases for reply in demonstration_replies(rollouts.env, case_id)]
        model, tokenizer = tiny_model(texts, out / "tiny-model", args.seed)
    if args.warmup_steps:
        codec = hf_codec(tokenizer)
        warm_up(model, [demonstration(rollouts.env, c, codec) for c in cases], args.warmup_steps, args.warmup_rate)
    log: list[dict[str, Any]] = []

    class StepLog(TrainerCallback):  # type: ignore[misc]
        def on_log(self, _args: Any, state: Any, _control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
            if logs is None or "loss" not in logs:
                return
            rewards = rollouts.rewards[-1] if rollouts.rewards else []
            entry = {
                "step": state.global_step, "loss": logs["loss"], "reward_mean": logs.get("reward"),
                "reward_std": logs.get("reward_std"), "episode_rewards": rewards,
                "grad_norm": logs.get("grad_norm"), "learning_rate": logs.get("learning_rate"),
            }  # fmt: skip
            log.append(entry)
            print(json.dumps(entry), flush=True)

    config = GRPOConfig(
        output_dir=str(out), max_steps=args.steps, per_device_train_batch_size=args.generations * args.cases_per_step,
        num_generations=args.generations, learning_rate=args.learning_rate, beta=0.0, logging_steps=1,
        save_strategy="no", report_to=[], use_cpu=True, bf16=False, seed=args.seed, disable_tqdm=True,
        max_completion_length=args.max_turns * 4096,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=model, reward_funcs=[mantra_reward], args=config, train_dataset=datasets.Dataset.from_list(rollouts.rows),
        processing_class=tokenizer, rollout_func=rollouts, callbacks=[StepLog()],
    )  # fmt: skip
    trainer.train()
    if args.log:
        Path(args.log).write_text("".join(json.dumps(entry) + "\n" for entry in log), encoding="utf-8")
    return log


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mantra_env.trainers.grpo",
        description="GRPO (TRL) on a suite's cases with the env's rewards, multi-turn, on the CPU; needs the "
        "training virtualenv (see the module docstring or README, 'Training with GRPO').",
    )
    parser.add_argument("--suite", default="operations/starter", help="suite name or folder (default: %(default)s)")
    parser.add_argument("--split", choices=("train", "test"), default="train", help="the cases trained on")
    parser.add_argument("--reward", choices=REWARD_MODES, default="fraction", help="the env's reward mode")
    parser.add_argument("--steps", type=int, default=3, help="optimizer steps (default: %(default)s)")
    parser.add_argument("--generations", type=int, default=2, help="episodes per case per step (GRPO's group)")
    parser.add_argument("--cases-per-step", type=int, default=2, help="cases per optimizer step")
    parser.add_argument("--max-turns", type=int, default=3, help="policy replies per episode at most")
    parser.add_argument("--turn-tokens", type=int, default=64, help="tokens per reply at most")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument(
        "--warmup-steps",
        type=int,
        default=0,
        help="supervised steps on the oracle's demonstrations of the training cases before GRPO (default: none)",
    )
    parser.add_argument("--warmup-rate", type=float, default=3e-3, help="the warm-up's learning rate")
    parser.add_argument("--model", help="a model folder or hub id (default: a tiny random model, built offline)")
    parser.add_argument("--out", help="output folder (default: a new temporary folder)")
    parser.add_argument("--log", help="write the per-step log here as JSON lines")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        import trl  # noqa: F401
    except ImportError:
        print(
            "mantra_env.trainers.grpo needs torch and trl: see README, 'Training with GRPO' (make train-smoke)",
            file=sys.stderr,
        )
        return 2
    log = train(args)
    print(f"{len(log)} optimizer steps; rewards per step: {[entry['episode_rewards'] for entry in log]}")
    return 0 if len(log) >= args.steps else 1


if __name__ == "__main__":
    sys.exit(main())
