"""A reviewer process for tests/generators/review/test_two_processes.py: each round it reads the review of a sample,
waits until the other reviewer has read it too, and saves a rejection of its own (imported by spawned processes)."""

from __future__ import annotations

from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from mantra_env.generators.artifacts import SampleValidation
from mantra_env.generators.review.state import StaleReview, decide, load_review, save_review, start_review


def review_rounds(run_dir: str, who: str, rounds: int, barrier: Barrier, results: Queue[Any]) -> None:
    """Puts ``(who, [(reason, "saved" | "stale" | error) of each round's save])`` on ``results``."""
    try:
        results.put((who, _rounds(Path(run_dir), who, rounds, barrier)))
    except BaseException as error:  # say so at once instead of leaving the test waiting for a result
        results.put((who, [("", f"the reviewer crashed: {error!r}")]))
        raise


def _rounds(root: Path, who: str, rounds: int, barrier: Barrier) -> list[tuple[str, str]]:
    validation = SampleValidation.model_validate_json((root / "validation" / "s000.json").read_text("utf-8"))
    outcomes = []
    for number in range(rounds):
        barrier.wait()  # the other reviewer's save of the last round is done
        review = load_review(root, "s000") or start_review(validation)
        barrier.wait()  # both have read the same revision
        reason = f"round {number} by {who} " + who * 2000
        changed = decide(review, "s000-3", "rejected", who, reason)
        try:
            save_review(root, changed, review.revision)
            outcomes.append((reason, "saved"))
        except StaleReview:
            outcomes.append((reason, "stale"))
        except Exception as error:  # the defect: a torn write or a lost temporary file
            outcomes.append((reason, f"{type(error).__name__}: {error}"))
    return outcomes
