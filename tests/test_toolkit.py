from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from mantra_env.toolkit import MAX_STRING_CHARS, ToolDefinitionError, ToolFailure, Toolkit, parse_docstring, tool


class Shop(Toolkit):
    def __init__(self) -> None:
        self.stock = {"HWM2741": 4}

    @tool(kind="read")
    def check_inventory(self, item_id: str) -> dict[str, int]:
        """Look up how many units of an item are in stock.

        Args:
            item_id: The catalog id, e.g. "HWM2741".
        """
        if item_id not in self.stock:
            raise ToolFailure(f"unknown item {item_id!r}", code="not_found")
        return {"in_stock": self.stock[item_id]}

    @tool(kind="write")
    def create_purchase_order(
        self, item_id: str, quantity: int, priority: Literal["standard", "priority"] = "standard",
        unit_price: float | None = None, tags: list[str] | None = None,
    ) -> str:  # fmt: skip
        """Order an item from a supplier.

        Args:
            item_id: The catalog id.
            quantity: How many units (at least 1).
            priority: Standard or priority shipping.
            unit_price: Quoted price per unit in USD,
                if known.
            tags: Free-form labels.

        Returns:
            The purchase order id.
        """
        return f"PO-{item_id}-{quantity}-{priority}"


def test_schema_is_derived_from_signature_and_docstring() -> None:
    specs = {spec.name: spec for spec in Shop.tool_specs()}
    assert list(specs) == ["check_inventory", "create_purchase_order"]
    po = specs["create_purchase_order"]
    assert po.kind == "write" and specs["check_inventory"].kind == "read"
    assert po.description == "Order an item from a supplier."
    assert po.required == ["item_id", "quantity"]
    assert po.parameters["additionalProperties"] is False
    assert po.properties["quantity"] == {"type": "integer", "description": "How many units (at least 1)."}
    assert po.properties["priority"]["enum"] == ["standard", "priority"]
    assert po.properties["unit_price"]["description"] == "Quoted price per unit in USD, if known."
    assert {"type": "null"} in po.properties["tags"]["anyOf"]
    assert "title" not in str(po.parameters)


def test_execute_happy_path_and_domain_error() -> None:
    shop = Shop()
    assert shop.execute("check_inventory", {"item_id": "HWM2741"}) == ({"in_stock": 4}, None)
    assert shop.execute("create_purchase_order", {"item_id": "X", "quantity": 2})[0] == "PO-X-2-standard"
    result, error = shop.execute("check_inventory", {"item_id": "NOPE"})
    assert result is None and error is not None
    assert (error.code, error.message) == ("not_found", "unknown item 'NOPE'")


@pytest.mark.parametrize(
    ("name", "args", "code", "message"),
    [
        ("fly", {}, "unknown_tool", "there is no tool 'fly'; the tools are: check_inventory, create_purchase_order"),
        ("check_inventory", {}, "invalid_arguments", "item_id: Field required"),
        ("check_inventory", {"item_id": 7}, "invalid_arguments", "item_id: Input should be a valid string"),
        ("check_inventory", {"item_id": "a", "x": 1}, "invalid_arguments", "x: Extra inputs are not permitted"),
        ("create_purchase_order", {"item_id": "a", "quantity": "2"}, "invalid_arguments", "quantity: Input should be"),
        ("create_purchase_order", {"item_id": "a", "quantity": 1, "priority": "rush"}, "invalid_arguments", "priority"),
        ("check_inventory", {"item_id": "x" * (MAX_STRING_CHARS + 1)}, "invalid_arguments", "longer than"),
    ],
)
def test_bad_calls_are_structured_errors(name: str, args: dict[str, object], code: str, message: str) -> None:
    result, error = Shop().execute(name, args)
    assert result is None and error is not None and error.code == code
    assert message in error.message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@given(st.text(max_size=12), st.dictionaries(st.sampled_from(["item_id", "quantity", "priority", "x"]), json_values))
def test_execute_never_raises(name: str, args: dict[str, object]) -> None:
    shop = Shop()
    for tool_name in (name, "check_inventory", "create_purchase_order"):
        result, error = shop.execute(tool_name, args)
        assert error is None or result is None


def test_float_parameter_accepts_ints() -> None:
    assert Shop().execute("create_purchase_order", {"item_id": "a", "quantity": 1, "unit_price": 2150})[1] is None


def test_definition_errors_name_the_method_and_the_fix() -> None:
    class Undocumented(Toolkit):
        @tool(kind="read")
        def look(self, item: str) -> None:
            """Look.

            Args:
                other: Not a parameter.
            """

    with pytest.raises(ToolDefinitionError, match=r"Undocumented.look: argument 'item' is not described"):
        Undocumented.tool_specs()

    class Untyped(Toolkit):
        @tool(kind="read")
        def look(self, item) -> None:  # type: ignore[no-untyped-def]
            """Look.

            Args:
                item: The item.
            """

    with pytest.raises(ToolDefinitionError, match="argument 'item' has no type hint"):
        Untyped.tool_specs()
    with pytest.raises(ToolDefinitionError, match="kind must be 'read' or 'write'"):
        tool(kind="delete")  # type: ignore[arg-type]


def test_parse_docstring_sections() -> None:
    summary, args = parse_docstring(
        "Do it.\n\nMore words.\n\nArgs:\n    a (int): First.\n    b: Second\n        line.\nReturns:\n    x"
    )
    assert summary == "Do it. More words."
    assert args == {"a": "First.", "b": "Second line."}


class Passenger(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    seat: int


class Airline(Toolkit):
    @tool(kind="write")
    def book(self, flight_ids: list[str], passengers: list[Passenger]) -> str:
        """Book flights for passengers.

        Args:
            flight_ids: The flights, in travel order.
            passengers: Who travels.
        """
        return ",".join(flight_ids) + ":" + ",".join(f"{p.name}/{p.seat}" for p in passengers)


def test_lists_of_scalars_and_of_flat_records_are_described_inline_and_validated() -> None:
    spec = Airline.tool_specs()[0]
    assert spec.properties["flight_ids"] == {"type": "array", "items": {"type": "string"},
                                             "description": "The flights, in travel order."}  # fmt: skip
    record = spec.properties["passengers"]["items"]
    assert record["type"] == "object" and record["properties"]["seat"] == {"type": "integer"}
    assert record["required"] == ["name", "seat"] and record["additionalProperties"] is False
    assert "$ref" not in str(spec.parameters) and "$defs" not in spec.parameters
    airline = Airline()
    assert airline.execute("book", {"flight_ids": ["F1", "F2"], "passengers": [{"name": "Ann", "seat": 3}]}) == (
        "F1,F2:Ann/3",
        None,
    )
    _, error = airline.execute("book", {"flight_ids": "F1", "passengers": [{"name": "Ann", "seat": 3, "x": 1}]})
    assert error is not None and error.code == "invalid_arguments"
    assert "flight_ids" in error.message and "passengers.0.x" in error.message


def test_a_parameter_named_title_or_properties_is_kept_while_schema_titles_are_dropped() -> None:
    class Library(Toolkit):
        @tool(kind="read")
        def find_book(self, title: str, properties: int = 0) -> str:
            """Find a book.

            Args:
                title: The book's title.
                properties: How many copies.
            """
            return title

    (spec,) = Library.tool_specs()
    assert spec.required == ["title"] and list(spec.properties) == ["title", "properties"]
    assert spec.properties["title"] == {"type": "string", "description": "The book's title."}
    assert "title" not in spec.properties["properties"] and "title" not in spec.parameters
    assert Library().execute("find_book", {"title": "Dune"}) == ("Dune", None)
