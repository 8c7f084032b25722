"""Report tables defined by their columns: each column is its label, how to get its value from a row, and how to
format that value, in one place; Markdown, HTML and notebook display are all produced from the same
:class:`Table`, so a column cannot be added to one form and forgotten in another."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mantra_env.graders.intervals import format_estimate
from mantra_env.graders.metrics import Estimate

Row = TypeVar("Row")


def percent(value: float) -> str:
    """A share in % with one decimal (n/a for NaN)."""
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}"


def ci(estimate: Estimate) -> str:
    """An estimate in % with its 95 % interval, as everywhere (:func:`mantra_env.graders.intervals.format_estimate`)."""
    return format_estimate(estimate)


def number(digits: int) -> Callable[[float], str]:
    """A number with ``digits`` decimals (n/a for NaN)."""
    return lambda value: "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def count(value: int | None) -> str:
    """A count (n/a for None: not recorded)."""
    return "n/a" if value is None else str(value)


def text(value: object) -> str:
    return str(value)


@dataclass(frozen=True)
class Column(Generic[Row]):
    """One column: its header, its value for a row, and the value's format (the default shows it as text)."""

    label: str
    value: Callable[[Row], Any]
    format: Callable[[Any], str] = text

    def cell(self, row: Row) -> str:
        return self.format(self.value(row))


@dataclass(frozen=True, repr=False)
class Table:
    """A titled table of formatted cells; a notebook displays it as HTML (as in report.html) or plain text."""

    title: str
    header: list[str]
    rows: list[list[str]]

    def _repr_html_(self) -> str:
        return table_html(self)

    def __repr__(self) -> str:  # the plain-text form a notebook or console shows
        return str(self)

    def __str__(self) -> str:
        widths = [max(len(cell) for cell in column) for column in zip(self.header, *self.rows, strict=True)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in [self.header, *self.rows]]
        return "\n".join([self.title, *lines])


def make_table(title: str, columns: Sequence[Column[Row]], rows: Iterable[Row]) -> Table:
    return Table(title, [c.label for c in columns], [[c.cell(row) for c in columns] for row in rows])


_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]|])")


def markdown_text(value: str) -> str:
    """``value`` as literal Markdown: HTML escaped, the characters that make tables, links or code escaped, and
    line breaks (which would end a table row) as spaces; model names and suite paths come from the database."""
    escaped = html.escape(" ".join(value.splitlines()), quote=False)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", escaped)


def table_markdown(table: Table) -> list[str]:
    lines = [f"## {table.title}", "", "| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    lines += ["| " + " | ".join(map(markdown_text, row)) + " |" for row in table.rows] or [
        "| " + " | ".join("" for _ in table.header) + " |"
    ]
    return [*lines, ""]


_NUMBER = re.compile(r"^(n/a|\[?[-+]?\d[\d.,]*)")


def _numeric_columns(table: Table) -> list[bool]:
    """Columns whose every cell is a number (or n/a): right-aligned in the HTML, the others left-aligned."""
    return [bool(table.rows) and all(_NUMBER.match(row[i]) for row in table.rows) for i in range(len(table.header))]


_BREAK_AFTER = re.compile(r"([/_:-])")


def _breakable(value: str) -> str:
    """``value`` escaped, with a line-break opportunity after each ``/ _ : -``: a model name or a run id (one long
    word) may then wrap at its parts instead of widening the table past the page."""
    return _BREAK_AFTER.sub(r"\1<wbr>", html.escape(value))


def table_html(table: Table) -> str:
    numeric = _numeric_columns(table)
    cls = [" class='num'" if n else "" for n in numeric]
    parts = [f"<h2>{html.escape(table.title)}</h2><div class='table'><table><tr>"]
    parts.append("".join(f"<th{c}>{html.escape(h)}</th>" for c, h in zip(cls, table.header, strict=True)) + "</tr>")
    for row in table.rows:
        cells = (html.escape(v) if n else _breakable(v) for n, v in zip(numeric, row, strict=True))
        parts.append("<tr>" + "".join(f"<td{c}>{v}</td>" for c, v in zip(cls, cells, strict=True)) + "</tr>")
    parts.append("</table></div>")
    return "\n".join(parts)
