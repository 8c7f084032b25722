"""``python -m mantra_env.domains [--check]``: export (or verify) each domain's ``tools.json`` (the user's domains
on ``MANTRA_DOMAINS_PATH`` or installed included).

The file is derived from the toolkit's signatures and docstrings; it is checked in so that readers and other
tools can see the schema without importing Python, and ``--check`` (run by ``make test``) fails if it is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mantra_env.cli import command_parser
from mantra_env.domains import domain_names, load_domain
from mantra_env.domains.discovery import domain_source
from mantra_env.files import write_atomic


def rendered(name: str) -> tuple[Path, str]:
    domain = load_domain(name)
    source = domain_source(name)
    assert source is not None  # load_domain found it
    folder = source.folder
    specs = [spec.model_dump(mode="json") for spec in domain.toolkit(domain.fresh_database()).tool_specs()]
    return folder / "tools.json", json.dumps(specs, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.domains",
        __doc__,
        "          # write every domain's tools.json",
        "--check  # fail if one is missing or stale",
    )
    parser.add_argument("--check", action="store_true", help="fail if a tools.json is missing or out of date")
    args = parser.parse_args(argv)
    stale = []
    for name in domain_names():
        path, text = rendered(name)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            write_atomic(path, text)
            print(f"wrote {path}")
    if stale:
        print(f"out-of-date tool schemas: {', '.join(stale)}; run `python -m mantra_env.domains` and commit them")
        return 1
    if args.check:
        print("tool schemas are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
