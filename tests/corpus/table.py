"""The conflict corpus as a table: expected statuses, what Z3 answers in each mode, what brute force answers.

Run: ``.venv/bin/python -m tests.corpus.table``. Statuses read ``forward/backward/witness``, one letter each:
``X`` conflict, ``.`` consistent, ``F`` found, ``I`` infeasible (one backward letter per check). A ``!`` marks a
cell that disagrees with the expectation of its mode; the exit status is 1 if there is one.
"""

from __future__ import annotations

import sys
import time

from mantra_env.case import CaseCheck
from mantra_env.smt import CaseSolver, Mode
from tests.corpus.brute import brute_force
from tests.corpus.loader import CorpusEntry, load_entries

_LETTER = {"conflict": "X", "consistent": ".", "found": "F", "infeasible": "I", "unknown": "?"}


def letters(forward: str, backward: tuple[str, ...], witness: str) -> str:
    return f"{_LETTER[forward]}/{''.join(_LETTER[b] for b in backward)}/{_LETTER[witness]}"


def solve(entry: CorpusEntry, mode: Mode) -> tuple[str, float]:
    started = time.perf_counter()
    checks = [CaseCheck(id=f"c{j}", check=text) for j, text in enumerate(entry.checks)]
    solver = CaseSolver(
        entry.model, checks, entry.bound, entry.initial, entry.tools(), mode=mode, refuse_invented_ids=True
    )
    forward = solver.forward().status
    backward = tuple(r.status for r in solver.backward_all())
    witness = solver.compliant_witness().status
    return letters(forward, backward, witness), time.perf_counter() - started


def main() -> int:
    entries = [entry for entry in load_entries() if entry.conflict_kind is not None]
    header = (
        f"{'entry':<44} {'kind':<15} {'expected p | r':<16} {'paper':<9} {'refusal':<9} {'brute r':<9} {'ms p/r/brute'}"
    )
    print(header)
    bad = 0
    for entry in entries:
        expected = {mode: letters(*_statuses(entry, mode)) for mode in ("paper", "refusal")}
        paper, paper_s = solve(entry, "paper")
        refusal, refusal_s = solve(entry, "refusal")
        started = time.perf_counter()
        brute = brute_force(entry.model, entry.checks, entry.initial, entry.bound, entry.tools())
        brute_s = time.perf_counter() - started
        brute_r = letters(*brute["refusal"].statuses)
        marks = [
            got + ("!" if got != expected[mode] else "")
            for got, mode in ((paper, "paper"), (refusal, "refusal"), (brute_r, "refusal"))
        ]
        bad += sum(mark.endswith("!") for mark in marks) + (letters(*brute["paper"].statuses) != expected["paper"])
        both = f"{expected['paper']} | {expected['refusal']}"
        times = f"{paper_s * 1000:.0f}/{refusal_s * 1000:.0f}/{brute_s * 1000:.0f}"
        print(
            f"{entry.name:<44} {entry.conflict_kind:<15} {both:<16} {marks[0]:<9} {marks[1]:<9} {marks[2]:<9} {times}"
        )
    forward = {mode: sum(_statuses(e, mode)[0] == "conflict" for e in entries) for mode in ("paper", "refusal")}
    print(
        f"\n{len(entries)} entries; forward conflicts: paper {forward['paper']}, refusal {forward['refusal']}; "
        f"disagreements with the expectations (both modes, Z3 and brute force): {bad}"
    )
    return 1 if bad else 0


def _statuses(entry: CorpusEntry, mode: str) -> tuple[str, tuple[str, ...], str]:
    expect = entry.statuses(mode)
    return expect.forward, expect.backward, expect.witness


if __name__ == "__main__":
    sys.exit(main())
