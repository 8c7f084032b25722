"""Atomic writes and exclusive locks (mantra_env.files): two writers of one path leave one whole file, a failed
write leaves nothing behind, and a lock dies with its holder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mantra_env.errors import MantraError
from mantra_env.files import LockHeld, exclusive_lock, write_atomic

HOLDER = """
import sys, time
from pathlib import Path
from mantra_env.files import exclusive_lock
with exclusive_lock(Path(sys.argv[1]), "the test's lock"):
    print("held", flush=True)
    time.sleep(600)
"""


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_n1_two_writers_of_one_path_leave_one_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "review.json"
    texts = {name: f'{{"who": "{name}", "pad": "{name * 200_000}"}}\n' for name in ("a", "b")}
    start = threading.Barrier(2)

    def writer(name: str) -> None:
        for _ in range(20):
            start.wait()
            write_atomic(target, texts[name])

    threads = [threading.Thread(target=writer, args=(name,)) for name in texts]
    [thread.start() for thread in threads]
    [thread.join() for thread in threads]
    assert target.read_text(encoding="utf-8") in texts.values()
    assert _leftovers(tmp_path) == []


def test_n1_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a" / "answer.json"
    write_atomic(target, "old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "lone \ud800 surrogate")
    folder = tmp_path / "b" / "answer.json"
    folder.mkdir(parents=True)
    with pytest.raises(IsADirectoryError):
        write_atomic(folder, "x")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert _leftovers(target.parent) == [] and _leftovers(folder.parent) == []


def test_written_files_get_the_usual_permissions(tmp_path: Path) -> None:
    write_atomic(tmp_path / "x.json", b"{}")
    umask = os.umask(0o022)
    os.umask(umask)
    assert (tmp_path / "x.json").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_taken_lock_names_its_holder(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    with (
        exclusive_lock(lock, "the thing"),
        pytest.raises(LockHeld) as held,
        exclusive_lock(lock, "the thing", timeout_s=0),
    ):
        pass
    assert held.value.holder == os.getpid() and isinstance(held.value, MantraError)
    assert str(held.value) == f"the thing is in use by process {os.getpid()} (lock {lock}); wait for it to finish"
    with exclusive_lock(lock, "the thing", timeout_s=0):  # released on leaving the block
        pass


def test_n1_a_lock_whose_holder_is_killed_is_free(tmp_path: Path) -> None:
    lock = tmp_path / "review" / "s000.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[1]
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(LockHeld) as held, exclusive_lock(lock, "the test's lock", timeout_s=0):
            pass
        assert held.value.holder == holder.pid
        holder.send_signal(signal.SIGKILL)
        assert holder.wait(timeout=60) == -signal.SIGKILL
        with exclusive_lock(lock, "the test's lock", timeout_s=0):  # the kernel let go of it
            assert lock.read_text(encoding="ascii") == f"{os.getpid()}\n"
    finally:
        holder.kill()
        holder.wait(timeout=60)
