"""The command line of a domain's seeded database generator (``make_db.py``): write ``db.json``, or with
``--check`` fail if the committed file differs from what the generator writes."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def write_or_check(
    argv: list[str] | None, prog: str, description: str | None, path: Path, render: Callable[[], str]
) -> int:
    """Run the generator's command: 0 when written or up to date, 1 when ``--check`` finds the file stale."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--check", action="store_true", help="fail if db.json differs from what would be written")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is out of date: run `{prog}` and commit it")
            return 1
        print(f"{path} is up to date")
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path} ({len(text) / 1e6:.1f} MB)")
    return 0
