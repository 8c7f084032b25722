"""``python -m mantra_env.schemas [--check]``: export or verify the versioned JSON schemas."""

from __future__ import annotations

import sys

from mantra_env.cli import command_parser
from mantra_env.schemas import export_schemas, schema_path, stale_schemas


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.schemas",
        __doc__,
        "          # write mantra_env/schemas/*.json",
        "--check  # fail if one is missing or stale",
    )
    parser.add_argument("--check", action="store_true", help="fail if a schema file is missing or out of date")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_schemas()
        if stale:
            files = ", ".join(str(schema_path(name)) for name in stale)
            print(f"out-of-date JSON schema files: {files}; run `python -m mantra_env.schemas` and commit them")
            return 1
        print("JSON schemas are up to date")
        return 0
    for path in export_schemas():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
