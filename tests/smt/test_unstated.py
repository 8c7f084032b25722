"""Facts a scenario does not state are unknown to the agent in the refusal mode (the env's view), free in the
paper's formulas (``mantra_env/smt/encode.py``; the corpus entry ``conflict_overrestrictive_unstated_zip``)."""

from __future__ import annotations

import pytest

from mantra_env.checks import parse_check
from mantra_env.smt import CaseSolver

# A customer is identified by zip code only; whether the scenario states the zip decides whether the case can
# be solved. The profile record's String field is unstated as a whole when the scenario leaves the record out.
MODEL = """
(model
  (var zip String)
  (var profile (Record (owner String) (visits Int)))
  (var verified Bool)
  (transition find_user_by_zip
    (params (zip z))
    (pre  true)
    (post (= (next verified) (or verified (= (param z) zip)))))
  (transition greet
    (params (name n))
    (pre  verified (= (param n) (field profile owner)))
    (post))
  (goal verified))
"""
CHECKS = [parse_check("CALL find_user_by_zip()")]


def test_an_unstated_string_fact_cannot_be_guessed_in_the_refusal_mode() -> None:
    witness = CaseSolver(MODEL, CHECKS, 3, {"verified": False}).compliant_witness()
    assert witness.status == "infeasible"


def test_the_paper_mode_lets_the_solver_choose_an_unstated_fact() -> None:
    witness = CaseSolver(MODEL, CHECKS, 3, {"verified": False}, mode="paper").compliant_witness()
    assert witness.status == "found" and witness.witness is not None
    (call,) = witness.witness.calls
    assert call.args["zip"] == witness.witness.initial_state["zip"]


def test_a_stated_fact_is_used_and_unstated_ones_are_shown_as_such() -> None:
    witness = CaseSolver(MODEL, CHECKS, 3, {"verified": False, "zip": "02139"}).compliant_witness()
    assert witness.status == "found" and witness.witness is not None
    assert [(c.tool, c.args) for c in witness.witness.calls] == [("find_user_by_zip", {"zip": "02139"})]
    profile = witness.witness.initial_state["profile"]
    assert isinstance(profile, dict) and profile["owner"] == "<unstated #0>"


@pytest.mark.parametrize("mode", ["refusal", "paper"])
def test_two_unstated_facts_are_not_equal_to_each_other(mode: str) -> None:
    """Each unstated fact has a sentinel of its own: an owner nobody stated is not the unstated zip."""
    model = MODEL.replace("(goal verified)", "(goal (= zip (field profile owner)))")
    result = CaseSolver(model, [], 1, {"verified": False}, mode=mode).compliant_witness()  # type: ignore[arg-type]
    assert result.status == ("infeasible" if mode == "refusal" else "found")
