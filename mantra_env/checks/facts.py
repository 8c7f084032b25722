"""Typed facts for ANSWER checks: a path into a read's JSON result, and each fact kind's canonical form, its
parse from a stored value, its search in free text (the agent's final answer) and its human form.

Canonical forms (two wordings of one fact have the same form; see "Answer facts" in
:mod:`mantra_env.checks.semantics`):

* ``time``: ``HH:MM`` on a 24-hour clock. ``08:15`` = ``8:15 am`` = ``8.15`` = ``8:15:00``; ``20:05`` =
  ``8:05 pm``; a bare hour needs am/pm (``8 pm``). A stored ISO date-time gives its time.
* ``date``: ``YYYY-MM-DD``. ``2024-05-01`` = ``May 1, 2024`` = ``1 May 2024`` = ``1st of May`` =
  ``05/01/2024`` (month first, as the US domains write it) = ``2024/05/01``; a date stated without a year
  matches the expected day of any year.
* ``money``: the amount in cents. ``$57`` = ``57 dollars`` = ``USD 57.00`` = ``57``; ``1,234.5`` =
  ``1234.50``. Any number in the answer counts, with or without a currency (an agent may name it either way).
* ``number``: the numeric value (``3`` = ``3.0``); digits only, not number words.
* ``identifier``: exact, case-sensitive, as a whole token (``HAT001`` is not in ``HAT0012``). An identifier of
  digits only (a card's last four) may also follow a mask, as card numbers are written: ``x7948``,
  ``XXXX-XXXX-XXXX-7948``, ``****7948``, ``•••• 7948`` (but not ``W7948`` or ``ORD-7948``).
* ``enum``: case-insensitive words, ``_`` and ``-`` as spaces: ``in_transit`` = ``In transit``, as whole words,
  the words of a many-word value in order with at most two others between, none a negation (``exchange requested``
  = ``the exchange has been requested``, not ``the exchange was not requested``), a plural ``s`` on any word
  (``pending (items modified)``), British or American spelling (``cancelled`` = ``canceled``), and a payment
  network by its name or short name (``amex`` = ``American Express``). A value negated in its clause is not
  stated: a negation word among the three words before it (``not pending``, ``no longer pending``, ``hasn't been
  delivered``), but ``No, it's delivered`` states it.

Free text (names, addresses, reasons) is out of scope: no kind compares it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

from mantra_env.checks.ast import FactKind
from mantra_env.errors import CheckValueError

_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+|\*)\]")


def resolve_path(result: Any, path: str) -> list[Any]:
    """The values at ``path`` in ``result`` (one per element a ``[*]`` selects, in order). ``[k]`` is the k-th
    element of a list or the value under the key ``"k"`` of a mapping (records keyed by numeric ids, such as a
    product's variants); ``[*]`` is every element of a list or every value of a mapping, in its order.

    Raises:
        CheckValueError: naming the step of the path that the result does not have.
    """
    values = [result]
    where = "result"
    for step in re.split(r"\.", path):
        for match in _STEP.finditer(step):
            name, index = match.group(1), match.group(2)
            following: list[Any] = []
            for value in values:
                if name is not None:
                    if not isinstance(value, dict) or name not in value:
                        raise CheckValueError(f"answer path {path!r}: {where} has no field {name!r}")
                    following.append(value[name])
                elif isinstance(value, dict):  # a mapping keyed by ids (variants by item id): [k] is a key
                    if index == "*":
                        following.extend(value.values())
                    elif index not in value:
                        raise CheckValueError(f"answer path {path!r}: {where} has no key {index!r}")
                    else:
                        following.append(value[index])
                elif not isinstance(value, list):
                    raise CheckValueError(f"answer path {path!r}: {where} is not a list or a mapping")
                elif index == "*":
                    following.extend(value)
                elif int(index) >= len(value):
                    raise CheckValueError(f"answer path {path!r}: {where} has {len(value)} elements, not {index}+1")
                else:
                    following.append(value[int(index)])
            values = following
            where = f"{where}.{name}" if name is not None else f"{where}[{index}]"
    if not values:
        raise CheckValueError(f"answer path {path!r} selects no value ({where} is empty)")
    for value in values:
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise CheckValueError(f"answer path {path!r}: {value!r} is not a fact (a string or a number)")
    return values


def last_field(path: str) -> str:
    """The last field ``path`` names: ``flights[*].scheduled_departure`` -> ``scheduled_departure``,
    ``flights[0]`` -> ``flights``."""
    return path.rsplit(".", 1)[-1].split("[", 1)[0]


# --- canonical forms of stored values -----------------------------------------------------------------------------

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH_NAMES = [""] + [next(n for n, k in _MONTHS.items() if k == m).capitalize() for m in range(1, 13)]
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_ISO_TIME = re.compile(r"(?:\d{4}-\d{2}-\d{2}[T ])?(\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\Z")


_MAX_EXPONENT = 24
"""A number of more than 25 digits before the point is no fact (an order id, a tracking code): a bound that also
keeps money's rounding to cents within the decimal context's 28 digits."""


def _number(text: str) -> Decimal | None:
    """The number ``text`` writes (thousands commas allowed); None for text that is not one, NaN, an infinity, or
    a number past :data:`_MAX_EXPONENT` (an agent's answer may hold any digit run)."""
    try:
        number = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    return number if number.is_finite() and number.adjusted() <= _MAX_EXPONENT else None


def canonical_fact(kind: FactKind, value: Any) -> str:
    """The canonical form of a stored fact ``value`` of ``kind``.

    Raises:
        CheckValueError: if ``value`` is not a fact of that kind (a date that is not ISO, text for a number).
    """
    text = str(value).strip()
    if kind in ("identifier", "enum") and not _words(text):  # an empty fact would be "stated" by every answer
        raise CheckValueError(f"{value!r} is not a {kind}: it has no letters or digits")
    if kind == "identifier":
        return text
    if kind == "enum":
        return _words(text)
    if kind == "date":
        match = _ISO_DATE.match(text)
        if not match:
            raise CheckValueError(f"{value!r} is not an ISO date (YYYY-MM-DD, optionally with a time)")
        return match.group(0)
    if kind == "time":
        match = _ISO_TIME.match(text)
        if not match or int(match.group(1)) > 23 or int(match.group(2)) > 59:
            raise CheckValueError(f"{value!r} is not a time (HH:MM, HH:MM:SS or an ISO date-time)")
        return f"{int(match.group(1)):02d}:{match.group(2)}"
    amount = _number(re.sub(r"^(?:USD|US\$|\$)\s*|\s*(?:USD|dollars?)$", "", text, flags=re.IGNORECASE))
    if amount is None or not isinstance(value, int | float | str) or isinstance(value, bool):
        raise CheckValueError(f"{value!r} is not a {kind} (a number, or an amount such as $57.00)")
    return _cents(amount) if kind == "money" else _plain(amount)


def _cents(amount: Decimal) -> str:
    return str(amount.quantize(Decimal("0.01")))


def _plain(amount: Decimal) -> str:
    return str(amount.normalize()) if amount != amount.to_integral() else str(int(amount))


def _words(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


# --- facts stated in an answer ---------------------------------------------------------------------------------------

_TIME_IN_TEXT = re.compile(
    r"(?<![\d:.])(\d{1,2})(?:[:.](\d{2}))?(?::\d{2})?\s*([ap])\.?\s?m\b\.?|(?<![\d:.])(\d{1,2})[:.](\d{2})(?![\d])",
    re.IGNORECASE,
)
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])-?\d+(?:\.\d+)?")
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATE_FORMS = (
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), ("y", "m", "d")),
    (re.compile(r"(?<!\d)(\d{1,2})/(\d{1,2})/(\d{4})(?!\d)"), ("m", "d", "y")),
    (re.compile(rf"\b({_MONTH})\.?\s+{_DAY}\b(?:,?\s+(\d{{4}}))?", re.IGNORECASE), ("M", "d", "y")),
    (re.compile(rf"\b{_DAY}(?:\s+of)?\s+({_MONTH})\b\.?(?:,?\s+(\d{{4}}))?", re.IGNORECASE), ("d", "M", "y")),
)


_MASKED = re.compile(r"(?:\A|[^\w*•])[xX*•]+(?:[-\s]?[xX*•]+)*[-\s]?\Z")
"""A mask of a card number's hidden digits, ending where a digits-only identifier starts (``x``, ``XXXX-XXXX-``,
``**** ``), after a start or a character that is no letter or digit."""


def _times(text: str) -> Iterator[str]:
    for match in _TIME_IN_TEXT.finditer(text):
        if match.group(3) is not None:  # with am/pm
            hour, minute = int(match.group(1)), int(match.group(2) or 0)
            if not 1 <= hour <= 12:
                continue
            hour = hour % 12 + (12 if match.group(3).lower() == "p" else 0)
        else:
            hour, minute = int(match.group(4)), int(match.group(5))
        if hour <= 23 and minute <= 59:
            yield f"{hour:02d}:{minute:02d}"


def _dates(text: str) -> Iterator[tuple[int | None, int, int]]:
    for pattern, order in _DATE_FORMS:
        for match in pattern.finditer(text):
            parts = dict(zip(order, match.groups(), strict=True))
            month = _MONTHS[parts["M"].lower()] if "M" in parts else int(parts["m"])
            year = int(parts["y"]) if parts.get("y") else None
            yield year, month, int(parts["d"])


_ENUM_GAP = 2
"""Words allowed between two consecutive words of a many-word enum value (``exchange has been requested``)."""

_NEGATION_REACH = 3
_NEGATORS = frozenset({"not", "no", "never", "t", "cannot", "nor", "neither", "without"})
"""Words that negate a value up to :data:`_NEGATION_REACH` words after them in one clause (``t`` is what remains of
``isn't`` or ``hasn't`` once the apostrophe splits it)."""

_CLAUSE = re.compile(r"[.,;:!?\n]|\s[-\u2013\u2014]\s|\u2014|([^\W_]+)")

_SPELLINGS = ("cancel", "travel", "label", "fuel", "signal", "model", "level", "channel", "total")
"""Stems that British English writes with a doubled ``l`` before ``ed``/``ing`` (``cancelled``, ``travelling``)."""
_BRITISH = re.compile(rf"^({'|'.join(_SPELLINGS)})l(ed|ing|er)$")

_ENUM_NAMES = (("amex", "american express"), ("mastercard", "master card"), ("paypal", "pay pal"))
"""Names an enum value is also stated by: payment networks and services by their full or split names."""


def _enum_word(word: str) -> str:
    """One word in the form both sides are compared in: British doubled ``l`` as American, no plural ``s``."""
    word = _BRITISH.sub(r"\1\2", word)
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _enum_forms(fact: str) -> list[tuple[str, ...]]:
    """Each sequence of compared words that states the canonical enum ``fact``."""
    names = [fact] + [name for group in _ENUM_NAMES if fact in group for name in group if name != fact]
    return [tuple(_enum_word(word) for word in name.split()) for name in names]


def _clause_words(answer: str) -> list[tuple[str, int]]:
    """The answer's words, in the compared form, each with the number of the clause it is in."""
    words: list[tuple[str, int]] = []
    clause = 0
    for match in _CLAUSE.finditer(answer.casefold()):
        if match.group(1) is None:
            clause += 1
        else:
            words.append((_enum_word(match.group(1)), clause))
    return words


def _states_enum(fact: str, answer: str) -> bool:
    words = _clause_words(answer)

    def negated(at: int) -> bool:
        clause = words[at][1]
        before = words[max(0, at - _NEGATION_REACH) : at]
        return any(word in _NEGATORS and in_clause == clause for word, in_clause in before)

    def rest_follows(form: tuple[str, ...], after: int) -> bool:
        if not form:
            return True
        reach = words[after + 1 : after + 2 + _ENUM_GAP]
        for k, (word, _) in enumerate(reach):
            if word == form[0] and rest_follows(form[1:], after + 1 + k):
                return True
            if word in _NEGATORS:  # "an exchange was not requested" does not state "exchange requested"
                return False
        return False

    return any(
        word == form[0] and not negated(at) and rest_follows(form[1:], at)
        for form in _enum_forms(fact)
        for at, (word, _) in enumerate(words)
    )


def stated(kind: FactKind, fact: str, answer: str) -> bool:
    """Whether the canonical ``fact`` of ``kind`` is stated in ``answer`` (see the module docstring)."""
    if kind == "identifier":
        if re.search(rf"(?<![\w-]){re.escape(fact)}(?![\w-])", answer):
            return True
        return fact.isdigit() and any(
            _MASKED.search(answer, 0, found.start()) for found in re.finditer(rf"{fact}(?![\w-])", answer)
        )
    if kind == "enum":
        return _states_enum(fact, answer)
    if kind == "time":
        return fact in set(_times(answer))
    if kind == "date":
        year, month, day = (int(part) for part in fact.split("-"))
        return any(m == month and d == day and y in (None, year) for y, m, d in _dates(answer))
    numbers = (_number(token) for token in _NUMBER_IN_TEXT.findall(answer))
    render = _cents if kind == "money" else _plain
    return fact in {render(number) for number in numbers if number is not None}


def human_fact(kind: FactKind, fact: str) -> str:
    """A canonical ``fact`` in the form a person would say it (the oracle's final answer states these)."""
    if kind == "date":
        year, month, day = (int(part) for part in fact.split("-"))
        return f"{_MONTH_NAMES[month]} {day}, {year}"
    if kind == "time":
        hour, minute = (int(part) for part in fact.split(":"))
        return f"{hour % 12 or 12}:{minute:02d} {'pm' if hour >= 12 else 'am'}"
    if kind == "money":
        return f"${fact}"
    return fact
