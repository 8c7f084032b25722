"""Two review processes on one run directory (N1): every save of a revision either lands whole in the file or is
refused as stale, never both "saved" and lost; a process killed while holding a sample's lock does not keep it."""

from __future__ import annotations

import multiprocessing
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mantra_env.generators.review.run import ReviewRun
from mantra_env.generators.review.state import SampleReview, decide, load_review, review_path, save_review
from tests.generators.review.two_reviewers import review_rounds

ROUNDS = 15


def test_n1_two_processes_saving_one_revision_give_one_save_and_one_stale(run_dir: Path) -> None:
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2, timeout=120), context.Queue()
    reviewers = [
        context.Process(target=review_rounds, args=(str(run_dir), who, ROUNDS, barrier, results))
        for who in ("alice", "bob")
    ]
    [reviewer.start() for reviewer in reviewers]
    outcomes = dict(results.get(timeout=600) for _ in reviewers)
    [reviewer.join(timeout=60) for reviewer in reviewers]
    alice, bob = outcomes["alice"], outcomes["bob"]
    assert len(alice) == len(bob) == ROUNDS, (alice[-1][1], bob[-1][1])  # a reviewer crashed: its error
    for number, (first, second) in enumerate(zip(alice, bob, strict=True)):
        assert sorted((first[1], second[1])) == ["saved", "stale"], f"round {number}: {first[1]} / {second[1]}"
    stored = SampleReview.model_validate_json(review_path(run_dir, "s000").read_text(encoding="utf-8"))
    saved = [reason for reason, outcome in alice + bob if outcome == "saved"]
    assert sorted(action.reason for action in stored.actions) == sorted(saved)  # no saved action lost
    assert stored.revision == ROUNDS


HOLDER = """
import sys, time
from pathlib import Path
from mantra_env.generators.review.state import review_lock
from mantra_env.files import exclusive_lock
with exclusive_lock(review_lock(Path(sys.argv[1]), "s000"), "the review of s000"):
    print("held", flush=True)
    time.sleep(600)
"""


def test_n1_a_review_save_goes_on_after_the_lock_holder_is_killed(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mantra_env.files import LockHeld, exclusive_lock
    from mantra_env.generators.review import state
    from mantra_env.generators.review.state import ReviewBusy, review_lock

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[3]
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        try:
            with exclusive_lock(review_lock(run_dir, "s000"), "the review of s000", timeout_s=0):
                raise AssertionError("the lock was free while its holder lived")
        except LockHeld as held:
            assert held.holder == holder.pid
        monkeypatch.setattr(state, "SAVE_LOCK_WAIT_S", 0.05)  # a save waiting on a live holder gives up: busy
        review = ReviewRun(run_dir).review("s000")
        with pytest.raises(ReviewBusy, match="nothing was changed: try again"):
            save_review(run_dir, decide(review, "s000-3", "accepted", "alice", "fine"), review.revision)
        monkeypatch.undo()
        holder.send_signal(signal.SIGKILL)
        assert holder.wait(timeout=60) == -signal.SIGKILL
        review = ReviewRun(run_dir).review("s000")
        save_review(run_dir, decide(review, "s000-3", "accepted", "alice", "fine"), review.revision)
    finally:
        holder.kill()
        holder.wait(timeout=60)
    stored = load_review(run_dir, "s000")
    assert stored is not None and [a.kind for a in stored.actions] == ["accept"]
