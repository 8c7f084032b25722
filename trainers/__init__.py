"""Adapters that let RL trainers run mantra-env cases (optional extra: ``pip install -e '.[rl]'``).

Each adapter is a thin layer over :class:`mantra_env.env.MantraEnv` and its grader: the reward a trainer sees is
the env's reward, which is the grader's verdict under the chosen reward mode. :mod:`mantra_env.trainers.text` holds what
every text-in/text-out trainer needs (the prompt a model reads, and the parsing of its reply into an action);
:mod:`mantra_env.trainers.skyrl` is SkyRL-gym's text environment; :mod:`mantra_env.trainers.verifiers_env` is a
verifiers environment (native tool calls, the grader as rubric); :mod:`mantra_env.trainers.grpo` is a GRPO recipe on TRL
(multi-turn episodes against the live env; ``make train-smoke``).
"""

from mantra_env.namespace import adopt_legacy_name

adopt_legacy_name(__name__, __file__)  # the old top-level name: see mantra_env/namespace.py
