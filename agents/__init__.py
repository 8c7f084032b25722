"""Agents that drive the environment: strands-agents over litellm, and scripted agents."""

from mantra_env.namespace import adopt_legacy_name

adopt_legacy_name(__name__, __file__)  # the old top-level name: see mantra_env/namespace.py
