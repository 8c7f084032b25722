"""The exception root of mantra-env.

Every error the library raises on bad input derives from :class:`MantraError` and from the matching builtin,
so callers can catch either. The CLI prints these as one line (``str(error)``) instead of a traceback, so each
message says what is wrong, where, and how to fix it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, options: Iterable[str], *, quote: bool = True) -> str:
    """``"did you mean 'x'?"`` for the option closest to a mistyped ``name``, or ``""`` if none is close."""
    close = difflib.get_close_matches(name, list(options), n=1)
    if not close:
        return ""
    return f"did you mean {close[0]!r}?" if quote else f"did you mean {close[0]}?"


def error_path(loc: Iterable[object], whole: str = "") -> str:
    """Where a pydantic validation error is: its ``loc`` as a dotted path, or ``whole`` if it is about the whole
    value (an empty ``loc``)."""
    return ".".join(str(part) for part in loc) or whole


class MantraError(Exception):
    """Root of every error mantra-env raises on purpose."""


class CheckSyntaxError(MantraError, ValueError):
    """A check's text form could not be parsed.

    Attributes:
        text: the text that was parsed.
        position: 0-based character offset of the problem.
        expected: what the parser expected at ``position``.
    """

    def __init__(self, message: str, *, text: str, position: int, expected: str = "") -> None:
        self.text = text
        self.position = position
        self.expected = expected
        self.reason = message
        line_start = text.rfind("\n", 0, position) + 1
        line_end = text.find("\n", position)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        column = position - line_start
        lineno = text.count("\n", 0, position) + 1
        super().__init__(f"check text, line {lineno}, column {column + 1}: {message}\n  {line}\n  {' ' * column}^")


class CheckValueError(MantraError, ValueError):
    """A check is well-formed text but not a valid check (e.g. an argument value that is not JSON)."""


class CaseFileError(MantraError, ValueError):
    """A case or suite file is malformed; the message names the file, line and field."""


class GradingError(MantraError, ValueError):
    """The grader was given input it cannot grade (e.g. no checks)."""


class DomainError(MantraError, LookupError):
    """A domain, suite or database patch is unknown or malformed."""
