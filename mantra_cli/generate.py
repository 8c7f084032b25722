"""``mantra generate``: the generation pipeline (:mod:`mantra_env.generators.run`, same options and output), whose
validation stage can also solve on Ray's workers (``--ray``: :mod:`mantra_env.mantra_cli.ray_pool`). Only the solver's
queries go there; every model request, the LLM cache, exchange files, recordings, the solver memo and the run
directory stay in this process, which writes them as a run without ``--ray`` does."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mantra_env.cli import run_command
from mantra_env.generators import run as generation
from mantra_env.mantra_cli.ray_pool import add_ray_option, offload
from mantra_env.offload import in_thread


def main(argv: Sequence[str] | None = None) -> int:
    parser = generation.parser("mantra_env.mantra_cli.generate")
    add_ray_option(
        parser,
        "solve the validation stage's queries",
        "Model requests, caches and the run folder stay here; same suite",
    )
    args = parser.parse_args(argv)

    def body() -> int:
        with offload(args.ray) as workers:
            return generation.run(args, workers or in_thread)

    return run_command(body, generation.INTERRUPTED)


if __name__ == "__main__":
    sys.exit(main())
