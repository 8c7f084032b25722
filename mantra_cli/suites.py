"""``mantra suites``: every suite mantra-env can run, per domain (shipped, installed, or on MANTRA_DOMAINS_PATH),
with its version, case count and gymnasium ids; the default suite of a domain (what ``--suite DOMAIN`` runs) is
marked with ``*``, and a domain with no suite yet says so."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from mantra_env.case import load_suite
from mantra_env.cli import command_parser, run_command
from mantra_env.registration import catalog


class ShippedSuite(NamedTuple):
    domain: str
    name: str
    version: int
    cases: int
    default: bool
    env_ids: list[str]
    folder: Path

    @property
    def run_name(self) -> str:
        """What ``mantra run --suite`` takes."""
        return f"{self.domain}/{self.name}"


def list_suites() -> tuple[list[ShippedSuite], list[str]]:
    """Every suite, loaded (so a broken one is an error here, not at run time), by domain, default first; and the
    domains with no suite yet."""
    entries, without = catalog()
    found = [
        ShippedSuite(
            entry.domain,
            entry.name,
            entry.version,
            len(load_suite(entry.folder).cases),
            entry.default,
            entry.env_ids,
            entry.folder,
        )
        for entry in entries
    ]
    return sorted(found, key=lambda item: (item.domain, not item.default, item.name)), without


def render(suites: Sequence[ShippedSuite], without: Sequence[str]) -> str:
    """A table: domain, suite (as ``--suite`` takes it; ``*`` the domain's default), version, cases, gymnasium ids."""
    rows = [("domain", "suite", "version", "cases", "gymnasium ids")]
    rows += [
        (
            item.domain,
            item.run_name + (" *" if item.default else ""),
            str(item.version),
            str(item.cases),
            ", ".join(item.env_ids),
        )
        for item in suites
    ]
    rows += [(name, "(no suite yet)", "", "", "") for name in without]
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    lines = [
        f"{domain:<{widths[0]}}  {suite:<{widths[1]}}  {version:>{widths[2]}}  {cases:>{widths[3]}}  {ids}".rstrip()
        for domain, suite, version, cases, ids in rows
    ]
    return "\n".join([*lines, "", "* the domain's default suite: `--suite DOMAIN` and mantra/DOMAIN-vN run it"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.mantra_cli.suites",
        __doc__,
        "                        # a table",
        "--json                  # one JSON object per suite (domain, suite, version, cases, default, env_ids, folder)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    args = parser.parse_args(argv)

    def body() -> int:
        suites, without = list_suites()
        if args.json:
            for item in suites:
                record = {"domain": item.domain, "suite": item.run_name, "version": item.version}
                record |= {"cases": item.cases, "default": item.default, "env_ids": item.env_ids}
                print(json.dumps({**record, "folder": str(item.folder)}))
            for name in without:
                print(json.dumps({"domain": name, "suite": None, "cases": 0, "env_ids": []}))
        else:
            print(render(suites, without))
        return 0

    return run_command(body)


if __name__ == "__main__":
    sys.exit(main())
