"""``mantra suites``: the suites shipped with mantra-env, per domain, with their case counts and gymnasium ids."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from mantra_env.case import load_suite
from mantra_env.cli import command_parser, run_command
from mantra_env.registration import env_id, shipped_suites


class ShippedSuite(NamedTuple):
    domain: str
    name: str
    cases: int
    env_id: str
    folder: Path

    @property
    def run_name(self) -> str:
        """What ``mantra run --suite`` takes."""
        return f"{self.domain}/{self.name}"


def list_suites() -> list[ShippedSuite]:
    """Every shipped suite, loaded (so a broken one is an error here, not at run time), by domain and name."""
    found = []
    for registered, folder in shipped_suites().items():
        suite = load_suite(folder)
        manifest = suite.manifest
        found.append(ShippedSuite(manifest.domain, manifest.name, len(suite.cases), env_id(registered), folder))
    return sorted(found, key=lambda item: (item.domain, item.name))


def render(suites: Sequence[ShippedSuite]) -> str:
    """A table: domain, suite (as ``--suite`` takes it), cases, gymnasium id."""
    rows = [("domain", "suite", "cases", "gymnasium id")]
    rows += [(item.domain, item.run_name, str(item.cases), item.env_id) for item in suites]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    return "\n".join(
        f"{domain:<{widths[0]}}  {suite:<{widths[1]}}  {cases:>{widths[2]}}  {identifier}".rstrip()
        for domain, suite, cases, identifier in rows
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(
        "mantra_cli.suites",
        __doc__,
        "                        # a table",
        "--json                  # one JSON object per suite (domain, suite, cases, env_id, folder)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    args = parser.parse_args(argv)

    def body() -> int:
        suites = list_suites()
        if args.json:
            for item in suites:
                record = {"domain": item.domain, "suite": item.run_name, "cases": item.cases, "env_id": item.env_id}
                print(json.dumps({**record, "folder": str(item.folder)}))
        else:
            print(render(suites))
        return 0

    return run_command(body)


if __name__ == "__main__":
    sys.exit(main())
