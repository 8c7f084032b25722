"""The online shop's tools. Like a real shop backend, the write tools enforce the database's own invariants (an
order that is not pending cannot be cancelled, an item must belong to the order, a gift card must cover the
amount, a new variant must exist and be available) and refuse a violation with a structured tool error, leaving
the database unchanged (codes ``not_found``, ``illegal_state``, ``invalid_request``, ``unavailable``,
``insufficient_balance``). Rules of the manual that the data cannot show (identity verification, the customer's
confirmation, one change per confirmation) are for the checks to grade, not for the tools to refuse.

Write tools get records from the copy-on-write tables by key (``self.db.orders[order_id]``) and change them in
place; read tools and searches read through :mod:`~mantra_env.domains.overlay`'s ``peek``, ``find`` and ``scan``
without copying.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from mantra_env.domains.kit import calculate, lookup, money, read
from mantra_env.domains.overlay import find, peek, scan
from mantra_env.domains.retail.database import (
    Address,
    CancelReason,
    Order,
    OrderItem,
    Payment,
    PaymentMethod,
    RetailDatabase,
    User,
    Variant,
)
from mantra_env.toolkit import NOT_TARGET, ORDERED, ToolFailure, Toolkit, tool

PENDING = ("pending", "pending_item_modified")


def _email(user: User) -> str:
    return user.email.lower()


def _name_zip(user: User) -> tuple[str, str, str]:
    return user.name.first_name.lower(), user.name.last_name.lower(), user.address.zip


class RetailToolkit(Toolkit):
    domain = "retail"

    def __init__(self, db: RetailDatabase) -> None:
        self.db = db

    # -- lookups and invariants used by several tools ---------------------------------------------------
    def _user(self, user_id: str) -> User:
        return lookup(self.db.users, user_id, "user")

    def _order(self, order_id: str) -> Order:
        return lookup(self.db.orders, order_id, "order")

    def _order_in(self, order_id: str, states: Sequence[str], action: str) -> Order:
        order = self._order(order_id)
        if order.status not in states:
            raise ToolFailure(
                f"order {order_id} is {order.status}; only {' or '.join(states)} orders can be {action}",
                code="illegal_state",
            )
        return order

    def _payment_method(self, user_id: str, payment_method_id: str) -> PaymentMethod:
        method = self._user(user_id).payment_methods.get(payment_method_id)
        if method is None:
            raise ToolFailure(f"user {user_id} has no payment method {payment_method_id!r}", code="not_found")
        return method

    def _items_of(self, order: Order, item_ids: list[str]) -> list[OrderItem]:
        """The order's items named by ``item_ids`` (an id named twice needs two such items in the order)."""
        if not item_ids:
            raise ToolFailure("item_ids is empty: name at least one item of the order", code="invalid_request")
        remaining = list(range(len(order.items)))
        chosen = []
        for item_id in item_ids:
            position = next((i for i in remaining if order.items[i].item_id == item_id), None)
            if position is None:
                raise ToolFailure(f"item {item_id!r} is not in order {order.order_id} (or not that many times)",
                                  code="not_found")  # fmt: skip
            remaining.remove(position)
            chosen.append(order.items[position])
        return chosen

    def _new_variants(self, items: list[OrderItem], new_item_ids: list[str]) -> list[Variant]:
        """The variants replacing ``items``, position by position: same product, another variant, available."""
        if len(new_item_ids) != len(items):
            raise ToolFailure(f"{len(items)} item(s) to replace but {len(new_item_ids)} new item(s): give one new "
                              "item per old item, in the same order", code="invalid_request")  # fmt: skip
        variants = []
        for item, new_id in zip(items, new_item_ids, strict=True):
            product = peek(self.db.products, item.product_id)
            variant = product.variants.get(new_id)
            if variant is None:
                raise ToolFailure(f"{new_id!r} is not a variant of {product.name} ({item.product_id}), the product "
                                  f"of item {item.item_id}: an item can only become another variant of its own "
                                  "product", code="invalid_request")  # fmt: skip
            if new_id == item.item_id:
                raise ToolFailure(f"item {new_id} would be replaced by itself", code="invalid_request")
            if not variant.available:
                raise ToolFailure(f"variant {new_id} of {product.name} is not available", code="unavailable")
            variants.append(variant)
        return variants

    @staticmethod
    def _check_balance(method: PaymentMethod, amount: float) -> None:
        """Refuse charging ``amount`` to a gift card whose balance is smaller (other methods have no balance)."""
        if method.balance is not None and amount > method.balance + 1e-9:
            raise ToolFailure(f"gift card {method.id} has a balance of {method.balance:.2f}, less than "
                              f"{amount:.2f}", code="insufficient_balance")  # fmt: skip

    @classmethod
    def _charge(cls, method: PaymentMethod, amount: float) -> None:
        """Take ``amount`` (a refund if negative) from a gift card's balance; other methods have no balance."""
        cls._check_balance(method, amount)
        if method.balance is not None:
            method.balance = money(method.balance - amount)

    # -- read tools ------------------------------------------------------------------------------------
    @tool(kind="read")
    def find_user_id_by_email(self, email: str) -> str:
        """Find a customer's user id by their email address.

        Args:
            email: The customer's email address, e.g. "mia.garcia7@example.com".
        """
        for user_id in find(self.db.users, _email, email.strip().lower()):
            return user_id
        raise ToolFailure(f"no user with email {email!r}", code="not_found")

    @tool(kind="read")
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Find a customer's user id by their first name, last name and the zip code of their address.

        Args:
            first_name: The customer's first name, e.g. "Mia".
            last_name: The customer's last name, e.g. "Garcia".
            zip: The zip code of the customer's default address, e.g. "80202".
        """
        wanted = (first_name.strip().lower(), last_name.strip().lower(), zip.strip())
        for user_id in find(self.db.users, _name_zip, wanted):
            return user_id
        raise ToolFailure(f"no user named {first_name} {last_name} with zip code {zip!r}", code="not_found")

    @tool(kind="read")
    def get_user_details(self, user_id: str) -> dict[str, Any]:
        """Look up a customer: name, email, default address, payment methods (with gift card balances) and the
        ids of their orders.

        Args:
            user_id: The user id, e.g. "mia_garcia_4516".
        """
        return read(self.db.users, user_id, "user").model_dump(mode="json")

    @tool(kind="read")
    def get_order_details(self, order_id: str) -> dict[str, Any]:
        """Look up an order: status, shipping address, items (item ids, options, prices), fulfillments and
        payment history.

        Args:
            order_id: The order id, starting with '#', e.g. "#W2611340".
        """
        return read(self.db.orders, order_id, "order").model_dump(mode="json")

    @tool(kind="read")
    def get_product_details(self, product_id: str) -> dict[str, Any]:
        """Look up a product type and all its variants (item id, options, price, availability).

        Args:
            product_id: The product id, e.g. "6086499569" (see list_all_product_types).
        """
        return read(self.db.products, product_id, "product").model_dump(mode="json")

    @tool(kind="read")
    def get_item_details(self, item_id: str) -> dict[str, Any]:
        """Look up one item (a variant of a product) by its item id: its product, options, price and availability.

        Args:
            item_id: The item id, e.g. "1008292230".
        """
        for product in scan(self.db.products):
            variant = product.variants.get(item_id)
            if variant is not None:
                return {"product_id": product.product_id, "product_name": product.name,
                        **variant.model_dump(mode="json")}  # fmt: skip
        raise ToolFailure(f"no item {item_id!r}", code="not_found")

    @tool(kind="read")
    def list_all_product_types(self) -> dict[str, str]:
        """List every product type the shop sells: product name -> product id, in name order."""
        return dict(sorted((product.name, product.product_id) for product in scan(self.db.products)))

    @tool(kind="read")
    def calculate(self, expression: str) -> float:
        """Calculate an arithmetic expression (numbers, + - * / and parentheses), rounded to cents.

        Args:
            expression: The expression, e.g. "(120.5 + 33.99) * 2 - 10".
        """
        return calculate(expression)

    @tool(kind="read")
    def think(self, thought: str) -> str:
        """Write down a thought (reasoning, a plan); it obtains no information and changes nothing.

        Args:
            thought: The thought.
        """
        return ""

    # -- write tools -----------------------------------------------------------------------------------
    @tool(kind="write")
    def cancel_pending_order(self, order_id: str, reason: CancelReason) -> dict[str, Any]:
        """Cancel a pending order. What was paid goes back to the payment methods it came from (at once for a
        gift card, in 5 to 7 business days otherwise).

        Args:
            order_id: The order id, e.g. "#W2611340".
            reason: Why the customer cancels: "no longer needed" or "ordered by mistake".
        """
        order = self._order_in(order_id, PENDING, "cancelled")
        paid: dict[str, float] = {}
        for entry in order.payment_history:
            sign = 1 if entry.transaction_type == "payment" else -1
            paid[entry.payment_method_id] = paid.get(entry.payment_method_id, 0.0) + sign * entry.amount
        for method_id, amount in paid.items():
            if money(amount) > 0:
                order.payment_history.append(Payment(transaction_type="refund", amount=money(amount),
                                                     payment_method_id=method_id))  # fmt: skip
                method = self._user(order.user_id).payment_methods.get(method_id)
                if method is not None and method.balance is not None:
                    method.balance = money(method.balance + amount)
        order.status, order.cancel_reason = "cancelled", reason
        return order.model_dump(mode="json")

    @tool(kind="write")
    def modify_pending_order_items(
        self,
        order_id: str,
        item_ids: Annotated[list[str], ORDERED],
        new_item_ids: Annotated[list[str], ORDERED],
        payment_method_id: Annotated[str, NOT_TARGET],
    ) -> dict[str, Any]:
        """Change items of a pending order into other variants of the same products, all in this one call (an
        order's items can be modified only once). The price difference is charged to, or refunded to, the given
        payment method.

        Args:
            order_id: The order id, e.g. "#W2611340".
            item_ids: The order's item ids to change, e.g. ["1008292230"].
            new_item_ids: The new item ids, one per item in item_ids and in the same order; each a variant of the
                same product as the item it replaces.
            payment_method_id: The customer's payment method that pays or receives the price difference, e.g.
                "gift_card_0000000" or "credit_card_4421486".
        """
        order = self._order_in(order_id, ("pending",), "modified (items of an order are modified only once)")
        items = self._items_of(order, item_ids)
        variants = self._new_variants(items, new_item_ids)
        method = self._payment_method(order.user_id, payment_method_id)
        difference = money(sum(v.price for v in variants) - sum(item.price for item in items))
        self._charge(method, difference)
        if difference:
            order.payment_history.append(Payment(
                transaction_type="payment" if difference > 0 else "refund", amount=abs(difference),
                payment_method_id=payment_method_id,
            ))  # fmt: skip
        for item, variant in zip(items, variants, strict=True):
            item.item_id, item.options, item.price = variant.item_id, dict(variant.options), variant.price
        order.status = "pending_item_modified"
        return order.model_dump(mode="json")

    @tool(kind="write")
    def modify_pending_order_address(
        self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> dict[str, Any]:
        """Change the shipping address of a pending order.

        Args:
            order_id: The order id, e.g. "#W2611340".
            address1: First address line, e.g. "45 Elm Street".
            address2: Second address line (apartment, suite), or "" if none.
            city: City, e.g. "Denver".
            state: State code, e.g. "CO".
            country: Country, e.g. "USA".
            zip: Zip code, e.g. "80202".
        """
        order = self._order_in(order_id, PENDING, "given a new address")
        order.address = _address(address1, address2, city, state, country, zip)
        return order.model_dump(mode="json")

    @tool(kind="write")
    def modify_pending_order_payment(
        self, order_id: str, payment_method_id: Annotated[str, NOT_TARGET]
    ) -> dict[str, Any]:
        """Pay a pending order with another of the customer's payment methods: the new method is charged the
        order's amount and the original one refunded.

        Args:
            order_id: The order id, e.g. "#W2611340".
            payment_method_id: The new payment method, e.g. "paypal_7732922".
        """
        order = self._order_in(order_id, PENDING, "paid another way")
        if len(order.payment_history) != 1 or order.payment_history[0].transaction_type != "payment":
            raise ToolFailure(f"order {order_id} has {len(order.payment_history)} payment records; only an order "
                              "paid once, with no refund yet, can change its payment method",
                              code="illegal_state")  # fmt: skip
        old = order.payment_history[0]
        if old.payment_method_id == payment_method_id:
            raise ToolFailure(f"order {order_id} is already paid with {payment_method_id}", code="invalid_request")
        new_method = self._payment_method(order.user_id, payment_method_id)
        self._charge(new_method, old.amount)
        old_method = self._user(order.user_id).payment_methods.get(old.payment_method_id)
        if old_method is not None:
            self._charge(old_method, -old.amount)
        order.payment_history += [
            Payment(transaction_type="payment", amount=old.amount, payment_method_id=payment_method_id),
            Payment(transaction_type="refund", amount=old.amount, payment_method_id=old.payment_method_id),
        ]
        return order.model_dump(mode="json")

    @tool(kind="write")
    def modify_user_address(
        self, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> dict[str, Any]:
        """Change a customer's default address (orders already placed keep their own shipping address).

        Args:
            user_id: The user id, e.g. "mia_garcia_4516".
            address1: First address line, e.g. "45 Elm Street".
            address2: Second address line (apartment, suite), or "" if none.
            city: City, e.g. "Denver".
            state: State code, e.g. "CO".
            country: Country, e.g. "USA".
            zip: Zip code, e.g. "80202".
        """
        user = self._user(user_id)
        user.address = _address(address1, address2, city, state, country, zip)
        return user.model_dump(mode="json")

    @tool(kind="write")
    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: Annotated[str, NOT_TARGET]
    ) -> dict[str, Any]:
        """Request the return of items of a delivered order, all in this one call. The refund goes to the
        original payment method or to one of the customer's gift cards; the customer receives return
        instructions by email.

        Args:
            order_id: The order id, e.g. "#W2611340".
            item_ids: The order's item ids to return, e.g. ["1008292230", "4983901480"].
            payment_method_id: Where the refund goes: the order's original payment method or a gift card of the
                customer.
        """
        order = self._order_in(order_id, ("delivered",), "returned")
        self._items_of(order, item_ids)
        method = self._payment_method(order.user_id, payment_method_id)
        original = order.payment_history[0].payment_method_id
        if payment_method_id != original and method.source != "gift_card":
            raise ToolFailure(f"a refund goes to the original payment method ({original}) or to a gift card, not "
                              f"to {payment_method_id}", code="invalid_request")  # fmt: skip
        order.status = "return_requested"
        order.return_items, order.return_payment_method_id = sorted(item_ids), payment_method_id
        return order.model_dump(mode="json")

    @tool(kind="write")
    def exchange_delivered_order_items(
        self,
        order_id: str,
        item_ids: Annotated[list[str], ORDERED],
        new_item_ids: Annotated[list[str], ORDERED],
        payment_method_id: Annotated[str, NOT_TARGET],
    ) -> dict[str, Any]:
        """Request the exchange of items of a delivered order for other variants of the same products, all in
        this one call. The price difference is settled with the given payment method when the returned items
        arrive.

        Args:
            order_id: The order id, e.g. "#W2611340".
            item_ids: The order's item ids to exchange, e.g. ["1008292230"].
            new_item_ids: The new item ids, one per item in item_ids and in the same order; each a variant of the
                same product as the item it replaces.
            payment_method_id: The customer's payment method that pays or receives the price difference.
        """
        order = self._order_in(order_id, ("delivered",), "exchanged")
        items = self._items_of(order, item_ids)
        variants = self._new_variants(items, new_item_ids)
        method = self._payment_method(order.user_id, payment_method_id)
        difference = money(sum(v.price for v in variants) - sum(item.price for item in items))
        self._check_balance(method, difference)
        order.status = "exchange_requested"
        order.exchange_items, order.exchange_new_items = list(item_ids), list(new_item_ids)
        order.exchange_payment_method_id, order.exchange_price_difference = payment_method_id, difference
        return order.model_dump(mode="json")

    @tool(kind="write")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human agent, with a summary of the customer's problem. Use it only when the
        manual says so.

        Args:
            summary: What the customer needs and what was done so far.
        """
        if not summary.strip():
            raise ToolFailure("the summary is empty: say what the customer needs", code="invalid_request")
        return "transfer successful"


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> Address:
    fields = {"address1": address1, "city": city, "state": state, "country": country, "zip": zip}
    missing = [name for name, value in fields.items() if not value.strip()]
    if missing:
        raise ToolFailure(f"the address needs {', '.join(missing)}", code="invalid_request")
    return Address(address1=address1.strip(), address2=address2.strip(), city=city.strip(), state=state.strip(),
                   country=country.strip(), zip=zip.strip())  # fmt: skip
