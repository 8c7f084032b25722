"""The conflict corpus (``conflict_*`` entries, issue 14): each entry's expected statuses in both query modes are
those of a brute-force enumeration of every short trace (no Z3), the refusal mode's witnesses replay in a plain
Python simulation, and an encoding without refusal semantics fails the corpus.

The Z3 statuses themselves are compared with the expectations by ``test_corpus.py::test_solver_statuses``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from mantra_env.case import CaseCheck
from mantra_env.smt import CaseSolver, Encoding, Witness
from tests.corpus.brute import Simulator, Step, Verdict, brute_force
from tests.corpus.loader import CONFLICT_KINDS, PENDING_KINDS, CorpusEntry
from tests.corpus.test_corpus import ENTRIES, solve

CONFLICTS = [entry for entry in ENTRIES if entry.conflict_kind is not None]
_BRUTE: dict[str, dict[str, Verdict]] = {}


def brute(entry: CorpusEntry) -> dict[str, Verdict]:
    if entry.name not in _BRUTE:
        _BRUTE[entry.name] = brute_force(entry.model, entry.checks, entry.initial, entry.bound, entry.tools())
    return _BRUTE[entry.name]


def _params() -> Iterator[object]:
    for entry in CONFLICTS:
        yield pytest.param(entry, id=entry.name)


PARAMS = list(_params())


def test_the_conflict_corpus_covers_every_kind() -> None:
    assert len(CONFLICTS) >= 30
    kinds = Counter(entry.conflict_kind for entry in CONFLICTS)
    assert all(kinds[kind] >= 3 for kind in CONFLICT_KINDS if kind not in PENDING_KINDS), kinds
    # The two modes disagree somewhere, and each mode has both forward outcomes.
    assert any(e.statuses("paper") != e.statuses("refusal") for e in CONFLICTS)
    for mode in ("paper", "refusal"):
        assert {e.statuses(mode).forward for e in CONFLICTS} == {"conflict", "consistent"}


def test_refusal_reports_no_conflict_for_refused_extra_calls() -> None:
    """Where the paper's query reports only a refused repeat or junk call, the refusal mode is consistent;
    every conflict it still reports is one the paper's query reports too (it finds every real one)."""
    spurious = [e for e in CONFLICTS if e.statuses("paper").forward == "conflict"]
    extra = [
        e for e in spurious if e.conflict_kind in ("repeated", "junk") and e.statuses("refusal").forward != "conflict"
    ]
    assert len(extra) >= 8
    for entry in CONFLICTS:
        if entry.statuses("refusal").forward == "conflict":
            assert entry.statuses("paper").forward == "conflict", entry.name


@pytest.mark.parametrize("entry", PARAMS)
@pytest.mark.parametrize("mode", ["paper", "refusal"])
def test_brute_force_agrees_with_the_expectation(entry: CorpusEntry, mode: str) -> None:
    expect = entry.statuses(mode)
    assert brute(entry)[mode].statuses == (expect.forward, expect.backward, expect.witness)


def _same(decoded: object, value: object) -> bool:
    """A decoded initial value equals the simulator's (an array variable is a frozenset there)."""
    if isinstance(value, frozenset):
        return isinstance(decoded, list) and frozenset(decoded) == value
    return decoded == value


def _replay(sim: Simulator, witness: Witness | None) -> tuple[list[Step], list[Step], dict[str, object]]:
    """The witness's calls, those the world model accepts, and the final state (refused calls stutter)."""
    assert witness is not None
    (state,) = [s for s in sim.initials if all(_same(witness.initial_state.get(k), v) for k, v in s.items())]
    calls = [Step(call.tool, dict(call.args)) for call in witness.calls]
    accepted = []
    for call in calls:
        assert sim.knows(state, call), f"a witness calls {call.tool} on an identifier nobody could know"
        if all(sim.accepts(state, call)):
            accepted.append(call)
            state = sim.apply(state, call)
    return calls, accepted, state


@pytest.mark.parametrize("entry", PARAMS)
def test_refusal_witnesses_replay_in_python(entry: CorpusEntry) -> None:
    """A forward conflict passes the checks while its accepted calls fail them or miss the goal; a compliant
    witness makes accepted calls only and reaches the goal."""
    sim = Simulator(entry.model, entry.checks, entry.initial, entry.tools())
    solved = solve(entry, "refusal")
    if solved.forward.status == "conflict":
        calls, accepted, state = _replay(sim, solved.forward.witness)
        assert all(sim.passes(calls))
        assert not (all(sim.passes(accepted)) and sim.goal(state))
    if solved.witness.status == "found":
        calls, accepted, state = _replay(sim, solved.witness.witness)
        assert accepted == calls and all(sim.passes(calls)) and sim.goal(state)


class _NoRefusal(Encoding):
    """The mutation the corpus must catch: every call is accepted, whatever its precondition."""

    def acceptance(self, precondition: str) -> str:
        return "true"


def test_dropping_refusal_semantics_fails_the_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mantra_env.smt.queries.Encoding", _NoRefusal)
    wrong = []
    for entry in CONFLICTS:
        checks = [CaseCheck(id=f"c{j}", check=text) for j, text in enumerate(entry.checks)]
        solver = CaseSolver(
            entry.model, checks, entry.bound, entry.initial, entry.tools(), mode="refusal", refuse_invented_ids=True
        )
        expect = entry.statuses("refusal")
        got = (
            solver.forward().status,
            tuple(r.status for r in solver.backward_all()),
            solver.compliant_witness().status,
        )
        if got != (expect.forward, expect.backward, expect.witness):
            wrong.append(entry.name)
    assert "conflict_ordering_fig1" in wrong and len(wrong) >= 5, wrong
