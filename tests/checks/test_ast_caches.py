"""Cached properties of check nodes (text, atoms, match_key...) never outlive a copy with changed fields."""

from __future__ import annotations

from mantra_env.checks import parse_check
from mantra_env.domains import load_domain
from mantra_env.tools import with_list_order


def test_a_copy_with_new_fields_recomputes_what_the_original_cached() -> None:
    check = parse_check('CALL t(a=["x"], b=["y"])')
    assert (check.atoms[0].ordered, check.text, check.match_key) == ((), 'CALL t(a=["x"], b=["y"])', check.match_key)
    paired = check.model_copy(update={"ordered": ("a", "b")})
    assert paired.atoms == (paired,) and paired.atoms[0].ordered == ("a", "b")
    assert paired.text == 'CALL t(a=["x"] PAIRED, b=["y"] PAIRED)'
    assert paired.match_key.endswith("~a,b") and paired.match_key != check.match_key


def test_list_order_stamps_a_check_whose_atoms_were_already_read() -> None:
    # The pipeline reads a parsed check's atoms (to name unknown tools) before stamping PAIRED from the schema;
    # the stamped check must not keep the unstamped atoms (a one-process run then failed every exchange case).
    specs = {spec.name: spec for spec in load_domain("retail").tool_specs()}
    check = parse_check('CALL exchange_delivered_order_items(order_id="#W1", item_ids=["1"], new_item_ids=["2"])')
    assert [atom.ordered for atom in check.atoms] == [()]
    stamped = with_list_order(check, specs)
    assert [atom.ordered for atom in stamped.atoms] == [("item_ids", "new_item_ids")]
