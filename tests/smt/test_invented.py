"""Identifiers nobody could know are left out of the refusal mode's traces (``refuse_invented_ids``), as the env
answers them "not found" (``mantra_env/smt/encode.py``, ``Encoding._known_ids``; the corpus entries
``conflict_insensitive_*``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mantra_env.checks import Check, parse_check
from mantra_env.smt import CaseSolver, Mode
from mantra_env.smt.encode import returning_vars
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import parse_model

# create_ticket returns a fresh id (any string but "none"); close_ticket needs that id. The scenario states no
# ticket (an unstated String: no argument can name it), so only the created id can be closed.
CREATED = """
(model
  (var ticket String)
  (var closed Bool)
  (transition create_ticket
    (pre)
    (post (not (= (next ticket) "none"))))
  (transition close_ticket
    (params (ticket_id tid))
    (pre  (= (param tid) ticket))
    (post (= (next closed) true)))
  (goal closed))
"""

# order_bed_rest ignores which patient it is for; only P1 is named anywhere.
IGNORED = """
(model
  (var ordered Bool)
  (transition order_bed_rest
    (params (patient_id pid))
    (pre  (= ordered false))
    (post (= (next ordered) true)))
  (goal ordered))
"""

# write_note stores its text; the task is any note at all.
NOTE = """
(model
  (var note String)
  (transition write_note
    (params (text t))
    (pre)
    (post (= (next note) (param t))))
  (goal (not (= note "none"))))
"""


def _solver(
    model: str, checks: Sequence[Check], bound: int, initial: dict[str, Any], tools: Sequence[ToolSpec] = (),
    mode: Mode = "refusal", refuse: bool = True,
) -> CaseSolver:  # fmt: skip
    return CaseSolver(model, checks, bound, initial, tools or None, mode=mode, refuse_invented_ids=refuse)


def _note_tool(param: str, free_text: bool) -> ToolSpec:
    schema: dict[str, object] = {"type": "string"}
    if free_text:
        schema["x-free-text"] = True
    return ToolSpec(
        name="write_note",
        kind="write",
        parameters={"type": "object", "properties": {param: schema}, "required": [param]},
    )


def test_an_id_an_earlier_call_returned_is_known() -> None:
    checks = [parse_check("CALL close_ticket()")]
    result = _solver(CREATED, checks, 3, {"closed": False}).compliant_witness()
    assert result.status == "found" and result.witness is not None
    assert [call.tool for call in result.witness.calls] == ["create_ticket", "close_ticket"]
    assert result.witness.calls[1].args["ticket_id"] not in ("none", None)


def test_an_invented_id_is_refused_so_an_id_blind_write_makes_no_conflict() -> None:
    checks = [parse_check('CALL order_bed_rest(patient_id="P1")')]
    refusal = _solver(IGNORED, checks, 3, {"ordered": False})
    assert refusal.forward().status == "consistent"
    assert refusal.backward(0).status == "consistent"
    # Every call names a stated value (the intern table holds only "P1"); acceptance stays the precondition.
    text = refusal.smtlib()
    assert "(=> (= t_0 0) (and (<= 0 a_0_S0) (< a_0_S0 1)))" in text  # one clause per slot, over its tools
    assert "(=> (= t_0 0) (= A_0 (= s_0_0 false)))" in text
    paper = _solver(IGNORED, checks, 3, {"ordered": False}, mode="paper")
    assert paper.forward().status == "conflict" and paper.backward(0).status == "conflict"


def test_a_stated_second_patient_keeps_the_real_conflict() -> None:
    model = IGNORED.replace("(var ordered Bool)", '(var ordered Bool) (const other String "P2")')
    checks = [parse_check('CALL order_bed_rest(patient_id="P1")')]
    result = _solver(model, checks, 3, {"ordered": False}).forward(shortest=True)
    assert result.status == "conflict" and result.witness is not None
    assert result.witness.calls[0].args == {"patient_id": "P2"}


def test_without_the_option_an_invented_id_makes_the_old_conflict() -> None:
    checks = [parse_check('CALL order_bed_rest(patient_id="P1")')]
    today = _solver(IGNORED, checks, 3, {"ordered": False}, refuse=False)
    assert today.forward().status == "conflict" and today.backward(0).status == "conflict"
    assert "a_0_S0 1" not in today.smtlib()


def test_data_and_free_text_are_no_identifiers() -> None:
    checks = [parse_check("CALL write_note()")]
    # A parameter not named like an id is data the agent may compose: any note reaches the goal.
    assert _solver(NOTE, checks, 2, {"note": "none"}).compliant_witness().status == "found"
    # Named like an id, it must name a stated record: "none" is the only one, and it misses the goal ...
    as_id = NOTE.replace("(text t)", "(note_id t)")
    tool = _note_tool("note_id", free_text=False)
    assert _solver(as_id, checks, 2, {"note": "none"}, [tool]).compliant_witness().status == "infeasible"
    # ... unless the schema marks it free text.
    tool = _note_tool("note_id", free_text=True)
    assert _solver(as_id, checks, 2, {"note": "none"}, [tool]).compliant_witness().status == "found"


def test_only_variables_a_call_can_return_a_value_through_are_consulted() -> None:
    model = parse_model(
        CREATED.replace("(var closed Bool)", "(var closed Bool) (var last String) (var seen (Array String))").replace(
            "(post (= (next closed) true))",
            "(post (= (next closed) true) (= (next last) (param tid)) (= (next seen) (union seen (list (param tid)))))",
        )
    )
    assert returning_vars(model) == {"ticket"}  # last and seen only hold what the calls passed


# A booking stores what the call passed, the airline re-audit's way: the fields of a list argument's records,
# under "this user's booking, else unchanged" (issue 32 item 2: read as returning, the six such arrays of those
# models put an array read per identifier slot and step into every query, past the solver's budget).
BOOKING = """
(model
  (var user_id String)
  (var booked_names (Array String))
  (var booked_count Int)
  (var last_user String)
  (var checked Bool)
  (transition book
    (params (user_id uid) (passengers pax))
    (pre)
    (post (=> (= (param uid) user_id)
              (and (= (next booked_names) (union booked_names (field (param pax) name)))
                   (= (next booked_count) (+ booked_count 1))
                   (= (next last_user) (param uid))))
          (=> (not (= (param uid) user_id))
              (and (= (next booked_names) booked_names) (= (next last_user) last_user)))))
  (transition get_user
    (params (user_id uid))
    (pre)
    (post (= (next checked) (or checked (= (param uid) user_id)))))
  (goal checked))
"""


BOOKING_TOOLS = [
    ToolSpec(
        name="book",
        kind="write",
        parameters={
            "type": "object",
            "properties": {
                "user_id": {"type": "string"},
                "passengers": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                },
            },
            "required": ["user_id", "passengers"],
        },
    ),
    ToolSpec(
        name="get_user",
        kind="read",
        parameters={"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]},
    ),
]


def test_values_a_call_passed_under_covering_conditions_return_nothing() -> None:
    model = parse_model(BOOKING)
    assert returning_vars(model) == set()
    checks = [parse_check('CALL get_user(user_id="u1")')]
    initial = {"user_id": "u1", "booked_names": [], "last_user": "none", "checked": False, "booked_count": 0}
    solver = _solver(BOOKING, checks, 3, initial, BOOKING_TOOLS)
    assert "(select s_" not in solver.smtlib()  # no identifier slot consults the booked names
    assert solver.forward().status == "consistent" and solver.compliant_witness().status == "found"


def test_an_assignment_under_one_branch_leaves_the_variable_free_in_the_other() -> None:
    # Without the (not c) branch, a call on another user leaves booked_names and last_user free: any new value.
    one_branch = BOOKING.replace(
        """          (=> (not (= (param uid) user_id))
              (and (= (next booked_names) booked_names) (= (next last_user) last_user)))))""",
        "))",
    )
    assert returning_vars(parse_model(one_branch)) == {"booked_names", "last_user"}
    # Written inside a condition, or beside another value, the variable stays returning too.
    computed = BOOKING.replace("(= (next last_user) (param uid))", '(not (= (next last_user) "none"))')
    assert returning_vars(parse_model(computed)) == {"last_user"}
