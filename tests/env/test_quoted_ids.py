"""Every gymnasium id the README and the docs quote exists: an env version bump that forgot a quote fails here."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym

import mantra_env  # noqa: F401 - registers the shipped suites

ROOT = Path(__file__).parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
GYM_ID = re.compile(r"\b(?:mantra|[a-z][a-z0-9_-]*)/[a-z0-9_-]+-v[0-9]+\b")
# The docs' example of a user's own domain (docs/domains.md walks through making it): not shipped, not registered.
EXAMPLE_DOMAINS = ("mydesk",)


def quoted_ids() -> dict[str, list[str]]:
    """Each quoted gymnasium id (of a shipped domain) and the files:lines quoting it."""
    found: dict[str, list[str]] = {}
    for document in DOCUMENTS:
        for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), 1):
            for identifier in GYM_ID.findall(line):
                if any(f"{name}-v" in identifier or identifier.startswith(f"{name}/") for name in EXAMPLE_DOMAINS):
                    continue
                found.setdefault(identifier, []).append(f"{document.name}:{number}")
    return found


def test_the_documents_quote_gymnasium_ids() -> None:
    assert "mantra/operations-v2" in quoted_ids()  # the pattern finds what the README shows


def test_every_quoted_gymnasium_id_is_registered() -> None:
    missing = {identifier: where for identifier, where in quoted_ids().items() if identifier not in gym.registry}
    assert not missing, f"quoted gymnasium ids that are not registered (bump the quotes too): {missing}"
