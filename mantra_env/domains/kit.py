"""What every domain package uses the same way: record lookups that become the agent's not-found tool error,
money rounding, and the command of a seeded ``make_db.py`` (write ``db.json``, or ``--check`` it)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from mantra_env.domains.overlay import peek
from mantra_env.toolkit import ToolFailure

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


def lookup(table: Mapping[str, T], key: str, label: str) -> T:
    """``table[key]`` (a copy-on-write copy, to change), or the not-found tool error the agent sees."""
    if key not in table:
        raise ToolFailure(f"no {label} {key!r}", code="not_found")
    return table[key]


def read(table: Mapping[str, R], key: str, label: str) -> R:
    """A record to read (no copy), or the not-found tool error the agent sees."""
    if key not in table:
        raise ToolFailure(f"no {label} {key!r}", code="not_found")
    return peek(table, key)


def money(amount: float) -> float:
    """Dollars rounded to cents (``+ 0.0``: no "-0.0" in results)."""
    return round(amount, 2) + 0.0


def make_db_main(argv: list[str] | None, module: str, doc: str | None, path: Path, render: Callable[[], str]) -> int:
    """The command line of a domain's seeded database generator ``module``: write ``path`` from ``render()``, or
    with ``--check`` fail (exit 1) if the committed file differs."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc)
    parser.add_argument("--check", action="store_true", help="fail if db.json differs from what would be written")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is out of date: run `python -m {module}` and commit it")
            return 1
        print(f"{path} is up to date")
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path} ({len(text) / 1e6:.1f} MB)")
    return 0
