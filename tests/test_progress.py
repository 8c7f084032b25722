"""Progress on stderr: a redrawn bar on a terminal; elsewhere (CI logs) a line per unit or per 5 %."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from mantra_env.progress import STEP_PERCENT, Progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def report(total: int, interactive: bool = False) -> tuple[Progress, io.StringIO, Clock]:
    stream, clock = io.StringIO(), Clock()
    return Progress("episodes", total, stream, interactive=interactive, clock=clock), stream, clock


def test_a_log_gets_a_line_per_episode_when_there_are_few() -> None:
    progress, stream, clock = report(3)
    for done in (1, 2, 3):
        clock.now += 1.5
        progress.update(done, f"passed {done} errors 0")
    progress.close()
    assert stream.getvalue().splitlines() == [
        "episodes: 1/3 (33%) passed 1 errors 0     2s",
        "episodes: 2/3 (66%) passed 2 errors 0     3s",
        "episodes: 3/3 (100%) passed 3 errors 0     4s",
    ]


def test_a_log_gets_a_line_per_five_percent_when_there_are_many() -> None:
    progress, stream, _ = report(1000)
    for done in range(1, 1001):
        progress.update(done)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("episodes: 1/1000 (0%)")
    assert [line.split()[1] for line in lines[1:]] == [f"{n}/1000" for n in range(50, 1001, 50)]


@given(st.integers(1, 400), st.data())
def test_lines_are_at_most_one_per_unit_and_per_step_and_the_last_is_always_shown(
    total: int, data: st.DataObject
) -> None:
    progress, stream, _ = report(total)
    done_values = [*sorted(set(data.draw(st.lists(st.integers(1, total), max_size=50)))), total]
    for done in done_values:
        progress.update(done)
        progress.update(done)  # a repeated count adds nothing
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith(f"episodes: {total}/{total} (100%)")
    assert len(lines) <= min(len(set(done_values)), 100 // STEP_PERCENT + 2)


def test_a_terminal_gets_one_redrawn_bar_and_its_line_ended() -> None:
    progress, stream, _ = report(4, interactive=True)
    for done in range(1, 5):
        progress.update(done, "passed 0 errors 0")
    progress.close()
    text = stream.getvalue()
    assert text.count("\r") == 4 and text.endswith("\n") and text.count("\n") == 1
    assert "[" + "#" * 30 + "] 4/4 episodes passed 0 errors 0" in text
