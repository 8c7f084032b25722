"""A run holds its directory (N1): a second ``mantra_env.generators.run`` on a directory a live run holds is refused in
one line, and once the live run is killed (SIGKILL: no clean-up) the directory resumes."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mantra_env.generators.run import PENDING_EXIT, main

FIXTURE = Path(__file__).parent / "fixtures" / "ops-mini"
ROOT = Path(__file__).parents[2]


def _exchange_config(tmp_path: Path) -> Path:
    """The ops-mini config with every stage answered through ``RUN_DIR/exchange`` (nobody answers here)."""
    text = (FIXTURE / "config.yaml").read_text(encoding="utf-8")
    text = text.replace("replay/ops-mini", "exchange/exchange").replace("  replay:\n    path: responses.yaml\n", "")
    text = text.replace("document_path: manual.md", f"document_path: {FIXTURE / 'manual.md'}")
    text = text.replace("run_dir_base: runs", f"run_dir_base: {tmp_path / 'runs'}")
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow  # a real run in a subprocess (importing litellm dominates)
def test_n1_a_second_run_on_a_live_run_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _exchange_config(tmp_path)
    live = subprocess.Popen(
        [sys.executable, "-m", "mantra_env.generators.run", "--config", str(config), "--wait", "--poll", "0.2"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert live.stderr is not None
        first = live.stderr.readline()  # printed once the run holds its directory
        assert first.startswith("run directory: "), first
        run_dir = Path(first.removeprefix("run directory: ").split(" (log: ")[0])
        assert main(["--resume", str(run_dir)]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"error: {run_dir} is in use by process {live.pid} (a mantra_env.generators.run on it is still going); "
            "wait for it to end or stop it, then resume\n"
        )
        live.send_signal(signal.SIGKILL)
        assert live.wait(timeout=60) == -signal.SIGKILL
    finally:
        live.kill()
        live.wait(timeout=60)
    assert main(["--resume", str(run_dir)]) == PENDING_EXIT  # the kernel let go: the run goes on
