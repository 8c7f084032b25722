"""What `make` installs into the project's virtualenv, read from the Makefile (the tests that an extra is there)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def extras_make_installs() -> set[str]:
    """The extras of every `pip install ... -e '.[...]'` line of the Makefile (pip's or uv's)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lines = re.findall(r"pip install --quiet (?:--python \S+ )?-e '\.\[([a-z0-9_,-]+)\]'", makefile)
    return {extra for line in lines for extra in line.split(",")}
