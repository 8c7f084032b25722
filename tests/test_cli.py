"""``mantra_env.cli.run_command``: errors, Ctrl-C and termination signals become exit codes after the cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from mantra_env.cli import Terminated, invoked_as, program_name, run_command
from mantra_env.errors import MantraError


def test_a_deliberate_error_is_one_line_and_exit_code_2(capsys: pytest.CaptureFixture[str]) -> None:
    def body() -> int:
        raise MantraError("the suite 'x' does not exist")

    assert run_command(body) == 2
    assert capsys.readouterr().err == "error: the suite 'x' does not exist\n"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_d8_a_termination_signal_runs_the_cleanup(signum: signal.Signals, capsys: pytest.CaptureFixture[str]) -> None:
    cleaned: list[str] = []
    # From the default disposition: under nohup (SIGHUP ignored) the command rightly keeps it ignored (next test).
    inherited = signal.signal(signum, signal.SIG_DFL)
    before = signal.getsignal(signum)

    def body() -> int:
        try:
            os.kill(os.getpid(), signum)  # delivered to this (the main) thread: the handler raises right here
            return 0
        finally:
            cleaned.append("stopped the server")

    try:
        assert run_command(body, "interrupted: finished episodes are stored") == 128 + signum
        assert cleaned == ["stopped the server"]
        assert "interrupted: finished episodes are stored" in capsys.readouterr().err
        assert signal.getsignal(signum) == before  # the handler is the command's only while it runs
    finally:
        signal.signal(signum, inherited)


def test_d8_an_ignored_termination_signal_stays_ignored() -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:

        def body() -> int:
            os.kill(os.getpid(), signal.SIGHUP)
            return 0

        assert run_command(body) == 0
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_ctrl_c_is_exit_code_130(capsys: pytest.CaptureFixture[str]) -> None:
    def body() -> int:
        raise KeyboardInterrupt

    assert run_command(body, "interrupted: kept") == 130
    assert "interrupted: kept" in capsys.readouterr().err


def test_terminated_is_a_keyboard_interrupt() -> None:
    """So that everything that cleans up after Ctrl-C (asyncio.run, the runner) does it after SIGTERM too."""
    assert isinstance(Terminated(signal.SIGTERM), KeyboardInterrupt)


def test_the_program_name_follows_the_command_that_runs_it() -> None:
    assert program_name("mantra_env.graders.report") == "python -m mantra_env.graders.report"
    with invoked_as("mantra report"):
        assert program_name("mantra_env.graders.report") == "mantra report"
    assert program_name("mantra_env.graders.report") == "python -m mantra_env.graders.report"


def test_output_piped_into_a_reader_that_stops_early_ends_quietly() -> None:
    """``mantra ... | head``: the reader closes the pipe after one line; the command stops without a traceback."""
    program = (
        "import sys\n"
        "from mantra_env.cli import run_command\n"
        "def body():\n"
        "    for n in range(1_000_000):\n"
        "        print(n)\n"
        "    return 0\n"
        "sys.exit(run_command(body))\n"
    )
    producer = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert producer.stdout is not None and producer.stderr is not None
    assert producer.stdout.readline() == b"0\n"
    producer.stdout.close()  # the reader stops, as head does after its lines
    errors = producer.stderr.read().decode()
    assert producer.wait() == 141
    assert "Traceback" not in errors and errors == ""
