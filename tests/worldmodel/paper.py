"""The paper's running example (App. "Example DSL for World Model"), verbatim, and tool specs for it."""

from __future__ import annotations

from mantra_env.tools import ToolSpec

PAPER_MODEL = """\
(model
  (var in_stock        Bool)
  (var legacy_checked  Bool)
  (var picker_assigned Bool)
  (var po_created      Bool)

  (transition check_inventory
    (params (item itm))
    (pre)
    (post (= (next in_stock) in_stock)))

  (transition check_legacy_portal
    (params (item itm))
    (pre)
    (post (= (next legacy_checked) true)))

  (transition assign_warehouse_picker
    (params (item itm))
    (pre  (= in_stock true))
    (post (= (next picker_assigned) true)))

  (transition create_purchase_order
    (params (item itm))
    (pre  (= in_stock false)
          (= legacy_checked true))
    (post (= (next po_created) true))))
"""


def _tool(name: str, kind: str = "read", **params: str) -> ToolSpec:
    return ToolSpec(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        parameters={
            "type": "object",
            "properties": {p: {"type": t} for p, t in params.items()},
            "required": list(params),
            "additionalProperties": False,
        },
    )


PAPER_TOOLS = [
    _tool("check_inventory", item="string"),
    _tool("check_legacy_portal", item="string"),
    _tool("assign_warehouse_picker", "write", item="string", quantity="integer"),
    _tool("create_purchase_order", "write", item="string", quantity="integer"),
]
