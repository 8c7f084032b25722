"""``mantra validate``: re-check a suite's cases with the solver (forward, every backward audit, the compliant
witness, each at the case's own bound and in the solver modes its validation record names: ``refuse_invented_ids``,
``canonical_lists``, ``array_relevancy``), as building or generating the suite did, and say per case whether it
still validates (the compliant witness is found at its own length whatever the record says: only whether there is
one counts). For a suite of your own after editing its cases, or the shipped suites after a change to the engine.

Each case ends as one of: ``valid``; ``accepted`` (the solver does not validate it, but a reviewer accepted it in
the review app: its validation record names them); ``unknown`` (a query ran out of its work budget, or needs a
longer list than the list bound); ``invalid`` (it no longer validates: a conflict or no compliant trace, shown
with the solver's witness). Exit codes: 0 every case valid or accepted, 1 some case invalid, 3 some case unknown
and none invalid, 2 a usage or input error.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mantra_env.authoring import DEFAULT_BOUND, AuthoringError, explain, validate_case
from mantra_env.case import Case, Suite, ValidationRecord
from mantra_env.cli import command_parser, run_command
from mantra_env.domains import Domain, find_suite, load_domain
from mantra_env.errors import MantraError, did_you_mean
from mantra_env.mantra_cli.ray_pool import RayWorkers, add_ray_option, ray_workers
from mantra_env.progress import Progress
from mantra_env.registration import catalog
from mantra_env.smt import QueryResult

EXIT_INVALID = 1
EXIT_UNKNOWN = 3

Verdict = Literal["valid", "accepted", "unknown", "invalid"]


class CaseOutcome(BaseModel):
    """How one case fared when validated again."""

    model_config = ConfigDict(frozen=True)

    suite: str
    case_id: str
    verdict: Verdict
    bound: int
    why: str = ""
    """For anything but ``valid``: the failing queries (with witnesses), or the reviewer's name."""


def recheck(suite: str, case: Case, domain: Domain, timings: dict[str, float] | None = None) -> CaseOutcome:
    """Validate ``case`` again at its recorded bound (``timings`` as for :func:`validate_case`)."""
    bound = case.validation.trace_bound or DEFAULT_BOUND
    try:
        record, results = validate_case(case, domain.tool_specs(), bound, timings)
    except MantraError as error:  # the case's model or checks no longer fit the engine or the tools
        verdict: Verdict = "accepted" if case.validation.reviewer else "invalid"
        return CaseOutcome(suite=suite, case_id=case.id, verdict=verdict, bound=bound, why=str(error))
    return judge(suite, case, record, results)


def judge(suite: str, case: Case, record: ValidationRecord, results: Sequence[QueryResult]) -> CaseOutcome:
    """The verdict on ``case`` from its new validation ``record`` and query ``results``."""
    bound = record.trace_bound or DEFAULT_BOUND
    if record.status == "validated":
        return CaseOutcome(suite=suite, case_id=case.id, verdict="valid", bound=bound)
    why = explain(list(results))
    verdict: Verdict
    if case.validation.reviewer:
        why = f"accepted by {case.validation.reviewer}; the solver says:\n{why}"
        verdict = "accepted"
    elif any(result.status in ("conflict", "infeasible") for result in results):
        verdict = "invalid"
    else:
        verdict = "unknown"
    return CaseOutcome(suite=suite, case_id=case.id, verdict=verdict, bound=bound, why=why)


def selected(suites: Sequence[str], case_ids: Sequence[str]) -> list[tuple[str, Domain, Case]]:
    """The cases to check: every case of the named suites (``all``: every suite ``mantra suites`` lists), or the
    ones named in ``case_ids`` (an id no selected suite holds is an error)."""
    names = suite_names(suites)
    found = suites_named(names)
    chosen: list[tuple[str, Domain, Case]] = []
    for domain, suite in found:
        label = f"{suite.manifest.domain}/{suite.manifest.name}"
        chosen += [(label, domain, case) for case in suite.cases if not case_ids or case.id in case_ids]
    missing = sorted(set(case_ids) - {case.id for _, _, case in chosen})
    if missing:
        known = [case.id for _, suite in found for case in suite.cases]
        hint = did_you_mean(missing[0], known) or ""
        raise AuthoringError(f"no case {', '.join(missing)} in {', '.join(names)}{'; ' + hint if hint else ''}")
    return chosen


def suite_names(suites: Sequence[str]) -> list[str]:
    """``suites`` as given, or every suite ``mantra suites`` lists for ``all``."""
    return [entry.folder.as_posix() for entry in catalog()[0]] if list(suites) == ["all"] else list(suites)


def suites_named(names: Sequence[str]) -> list[tuple[Domain, Suite]]:
    """Each named suite (a name or a folder) with the domain whose tools it needs.

    Raises:
        MantraError: a suite cannot be found, or its domain is not one mantra-env can load.
    """
    found = []
    for name in names:
        domain, suite = find_suite(name)
        if domain is None:
            raise AuthoringError(
                f"{name}: its domain {suite.manifest.domain!r} is not one mantra-env can load, so its tools are "
                "unknown (put the domain's folder on MANTRA_DOMAINS_PATH)"
            )
        found.append((domain, suite))
    return found


@cache
def _domain(name: str) -> Domain:
    return load_domain(name)


def _recheck_in_worker(suite: str, case: Case) -> CaseOutcome:
    return recheck(suite, case, _domain(case.domain))


def recheck_item(item: tuple[str, Case]) -> CaseOutcome:
    """:func:`recheck` of a (suite label, case) pair, its domain loaded by name: what a Ray worker runs."""
    return _recheck_in_worker(*item)


def outcomes(
    chosen: Sequence[tuple[str, Domain, Case]], jobs: int, workers: RayWorkers | None = None
) -> Iterator[CaseOutcome]:
    """Each case's outcome, in order (on Ray's ``workers``; else ``jobs`` worker processes; 1: in this process)."""
    if workers is not None:
        yield from workers.map(recheck_item, [(suite, case) for suite, _, case in chosen])
        return
    if jobs <= 1:
        for suite, domain, case in chosen:
            yield recheck(suite, case, domain)
        return
    pool = ProcessPoolExecutor(jobs)
    try:
        futures = [pool.submit(_recheck_in_worker, suite, case) for suite, _, case in chosen]
        for future in futures:
            yield future.result()
    finally:  # interrupted: cases not started yet are dropped, not solved
        pool.shutdown(cancel_futures=True)


def exit_code(counts: Mapping[str, int]) -> int:
    """The command's exit code from the count of cases per verdict."""
    return EXIT_INVALID if counts.get("invalid") else EXIT_UNKNOWN if counts.get("unknown") else 0


def render(outcome: CaseOutcome) -> str:
    """One line per case; the reason, indented, below a case that is not plainly valid."""
    head = f"{outcome.verdict:<8} {outcome.suite} {outcome.case_id} (h={outcome.bound})"
    return head + "".join(f"\n    {line}" for line in outcome.why.splitlines())


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.mantra_cli.validate",
        __doc__,
        "--suite operations/starter                 # a shipped suite",
        "--suite path/to/my-suite                   # a folder with suite.jsonl and manifest.json",
        "--suite all --jobs 2                       # every suite `mantra suites` lists, two processes",
        "--suite airline --cases generated-s004-1 generated-s004-2   # two cases of a domain's default suite",
        "--suite retail --ray                      # on a local Ray (every core); --ray auto: the running cluster",
    )
    parser.add_argument(
        "--suite", action="append", required=True, metavar="NAME|PATH",
        help="a suite (DOMAIN, DOMAIN/SUITE or a folder; `all`: every suite); repeat for more",
    )  # fmt: skip
    parser.add_argument("--cases", nargs="+", default=[], metavar="ID", help="only these case ids")
    parser.add_argument(
        "--jobs", type=int, default=1, help="worker processes (default 1; with --ray: the local Ray's CPUs)"
    )
    add_ray_option(parser, "solve the cases", "The same output, in the same order; --jobs N: a local Ray of N CPUs")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")

    def body() -> int:
        chosen = selected(args.suite, args.cases)
        if args.ray is None:
            return report(chosen, outcomes(chosen, args.jobs))
        cpus = args.jobs if args.jobs > 1 else None
        with ray_workers(args.ray, num_cpus=cpus) as workers:
            return report(chosen, outcomes(chosen, args.jobs, workers))

    def report(chosen: Sequence[tuple[str, Domain, Case]], found: Iterator[CaseOutcome]) -> int:
        progress = Progress("cases", len(chosen))
        counts = dict.fromkeys(("valid", "accepted", "unknown", "invalid"), 0)
        for done, outcome in enumerate(found, 1):
            counts[outcome.verdict] += 1
            if progress.interactive:  # the case's line where the bar was; the bar is drawn again below it
                print("\r\033[K", end="", file=progress.stream, flush=True)
            print(render(outcome), flush=True)
            progress.update(done, " ".join(f"{name} {count}" for name, count in counts.items() if count))
        progress.close()
        print(", ".join(f"{count} {name}" for name, count in counts.items()))
        return exit_code(counts)

    return run_command(body)


if __name__ == "__main__":
    sys.exit(main())
