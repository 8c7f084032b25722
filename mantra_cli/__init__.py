"""The ``mantra`` command: one verb per ``python -m`` entry point of mantra-env (the top layer; the core
``mantra_env`` never imports it)."""

import importlib.util
from pathlib import Path


def _check_agents_package() -> None:
    """openai-agents (which some RL libraries depend on) installs a top-level package ``agents`` too. Where it
    wins the import, every command fails with an obscure ImportError; say what happened and how to fix it."""
    spec = importlib.util.find_spec("agents")
    ours = Path(__file__).resolve().parent.parent / "agents"
    if spec is None or spec.origin is None or Path(spec.origin).resolve().parent == ours:
        return
    raise SystemExit(
        f"mantra: the package `agents` resolves to {Path(spec.origin).parent}, not to mantra-env's {ours}: "
        "another distribution (openai-agents) installed a package of the same name. Remove it with "
        "`pip uninstall openai-agents`; verifiers, which depends on it, works without it "
        "(`pip install --no-deps verifiers==0.1.14`, as the Makefile does)."
    )


_check_agents_package()

from mantra_cli.main import VERBS, main  # noqa: E402  (after the check: main's verbs import agents)

__all__ = ["VERBS", "main"]
