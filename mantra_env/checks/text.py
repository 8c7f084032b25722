"""The canonical text form of checks: a parser with precise errors and a printer that round-trips.

Grammar (keywords are upper case; values are JSON)::

    check     ::= ordered ( "OR" ordered )*                 -- left-associative
    ordered   ::= primary [ ("AFTER" | "BEFORE" | "FOLLOWS" | "PRECEDES") atom ]
    primary   ::= atom | "(" check ")"
    atom      ::= [ "CALL" | "NO-CALL" ] TOOL [ "(" [ arg ( "," arg )* ] ")" ]
    arg       ::= NAME "=" JSON-VALUE [ "PAIRED" ]         -- PAIRED: lists compared together (semantics.py)
    answer    ::= "ANSWER" atom "." PATH "AS" KIND [ "=" JSON-VALUE ]   -- a whole check on its own

An ANSWER check names a read, a path into its result (``flights[0].date``, ``flights[*].date``) and a fact kind
(``date``, ``time``, ``money``, ``number``, ``identifier``, ``enum``); the value after ``=`` is the expected
fact (a JSON list of them when the path has ``[*]``), e.g.::

    ANSWER CALL get_reservation_details(reservation_id="ZFA04Y").flights[*].date AS date = ["2024-05-20", "2024-05-22"]

A bare ``TOOL`` or ``TOOL(...)`` means ``CALL TOOL(...)`` (the paper writes ``check_inventory PRECEDES
assign_warehouse_picker``). The printer always writes the canonical form: explicit ``CALL`` / ``NO-CALL``,
parentheses after every tool, JSON values, and parentheses only where needed, e.g.::

    CALL check_inventory(item_name="Dell UltraSharp U2723QE") PRECEDES CALL assign_warehouse_picker(item_id="HWM2741", quantity=1)
"""  # noqa: E501

from __future__ import annotations

import json
import re

from pydantic import ValidationError

from mantra_env.checks.ast import (
    FACT_KINDS,
    After,
    Answer,
    Before,
    Call,
    Check,
    Follows,
    NoCall,
    Or,
    Precedes,
)
from mantra_env.errors import CheckSyntaxError, CheckValueError
from mantra_env.limits import MAX_DEPTH

_ORDER_WORDS = ("AFTER", "BEFORE", "FOLLOWS", "PRECEDES")
_KEYWORDS = {"CALL", "NO-CALL", "OR", "ANSWER", "AS", *_ORDER_WORDS}
_PATH_TEXT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[(?:\d+|\*)\])*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[(?:\d+|\*)\])*)*")
_WORD = re.compile(r"NO-CALL|[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"\s*")
_DECODER = json.JSONDecoder(parse_constant=lambda name: _reject_constant(name))


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON value")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0  # open parentheses: the parser recurses on them

    # -- scanning -------------------------------------------------------------------------------------
    def skip(self) -> None:
        match = _SPACE.match(self.text, self.pos)
        assert match is not None
        self.pos = match.end()

    def error(self, message: str, expected: str, position: int | None = None) -> CheckSyntaxError:
        return CheckSyntaxError(
            message, text=self.text, position=self.pos if position is None else position, expected=expected
        )

    def found(self) -> str:
        if self.pos >= len(self.text):
            return "end of text"
        word = _WORD.match(self.text, self.pos)
        return repr(word.group(0)) if word else repr(self.text[self.pos])

    def peek_word(self) -> str | None:
        self.skip()
        word = _WORD.match(self.text, self.pos)
        return word.group(0) if word else None

    def take_word(self) -> str:
        word = self.peek_word()
        assert word is not None
        self.pos += len(word)
        return word

    def take_char(self, char: str) -> bool:
        self.skip()
        if self.text.startswith(char, self.pos):
            self.pos += 1
            return True
        return False

    def expect_char(self, char: str, context: str) -> None:
        if not self.take_char(char):
            raise self.error(f"expected {char!r} {context}, found {self.found()}", repr(char))

    # -- grammar --------------------------------------------------------------------------------------
    def parse(self) -> Check:
        check = self.answer() if self.peek_word() == "ANSWER" else self.check()
        self.skip()
        if self.pos < len(self.text):
            word = self.peek_word()
            hint = ""
            if word and word.upper() in _KEYWORDS and word not in _KEYWORDS:
                hint = f"; keywords are upper case: write {word.upper()}"
            raise self.error(
                f"expected OR, AFTER, BEFORE, FOLLOWS, PRECEDES or end of text, found {self.found()}{hint}",
                "OR | AFTER | BEFORE | FOLLOWS | PRECEDES | end",
            )
        return check

    def answer(self) -> Answer:
        start = self.pos
        self.take_word()
        read = self.atom()
        if not isinstance(read, Call):
            raise self.error("the read of ANSWER is a CALL atom, not NO-CALL", "CALL atom", start)
        self.expect_char(".", f"and a path into the result of {read.tool}, e.g. .flights[0].date")
        self.skip()
        path = _PATH_TEXT.match(self.text, self.pos)
        if path is None:
            raise self.error(f"expected a path into the result of {read.tool}, found {self.found()}", "path")
        self.pos = path.end()
        if self.peek_word() != "AS":
            raise self.error(f"expected AS and a fact kind after the path, found {self.found()}", "AS")
        self.take_word()
        kind_pos = self.pos
        kind = self.peek_word()
        if kind not in FACT_KINDS:
            raise self.error(
                f"expected a fact kind ({', '.join(FACT_KINDS)}), found {self.found()}", "fact kind", kind_pos
            )
        self.take_word()
        expected: object = None
        if self.take_char("="):
            value = self.value("expected")
            expected = value if isinstance(value, list) else [value]
        try:
            return Answer(read=read, path=path.group(0), kind=kind, expected=expected)
        except ValidationError as exc:
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise self.error(message, "a valid ANSWER check", start) from None

    def check(self) -> Check:
        left = self.ordered()
        while self.peek_word() == "OR":
            position = self.pos
            self.take_word()
            right = self.ordered()
            try:
                left = Or(left=left, right=right)
            except ValidationError as exc:  # too many atoms
                message = exc.errors()[0]["msg"].removeprefix("Value error, ")
                raise self.error(message, "fewer atoms", position) from None
        return left

    def ordered(self) -> Check:
        start = self.pos
        self.skip()
        first = self.primary()
        word = self.peek_word()
        if word not in _ORDER_WORDS:
            return first
        assert word is not None
        self.take_word()
        self.skip()
        anchor_pos = self.pos
        if self.take_char("("):
            raise self.error(
                f"the anchor of {word} must be a single CALL atom, not a parenthesised check",
                "CALL atom",
                anchor_pos,
            )
        anchor = self.atom()
        if not isinstance(anchor, Call):
            raise self.error(f"the anchor of {word} must be a CALL atom, not NO-CALL", "CALL atom", anchor_pos)
        if not isinstance(first, Call | NoCall):
            raise self.error(f"the left side of {word} must be a single CALL or NO-CALL atom", "atom", start)
        if word in ("FOLLOWS", "PRECEDES"):
            if not isinstance(first, Call):
                raise self.error(
                    f"{word} is a positive obligation: its left side must be a CALL atom "
                    f"(for a forbidden call use NO-CALL ... {'AFTER' if word == 'FOLLOWS' else 'BEFORE'})",
                    "CALL atom",
                    start,
                )
            return Follows(call=first, anchor=anchor) if word == "FOLLOWS" else Precedes(call=first, anchor=anchor)
        return After(target=first, anchor=anchor) if word == "AFTER" else Before(target=first, anchor=anchor)

    def primary(self) -> Check:
        if self.take_char("("):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.error(f"parentheses nest more than {MAX_DEPTH} levels", "an atom", self.pos - 1)
            inner = self.check()
            self.expect_char(")", "to close the parenthesised check")
            self.depth -= 1
            return inner
        return self.atom()

    def atom(self) -> Call | NoCall:
        self.skip()
        start = self.pos
        word = self.peek_word()
        if word is None:
            raise self.error(f"expected CALL, NO-CALL or a tool name, found {self.found()}", "atom")
        node: type[Call] | type[NoCall] = Call
        if word in ("CALL", "NO-CALL"):
            self.take_word()
            node = NoCall if word == "NO-CALL" else Call
            self.skip()
            start = self.pos
            word = self.peek_word()
            if word is None or word in _KEYWORDS:
                raise self.error(
                    f"expected a tool name after {'NO-CALL' if node is NoCall else 'CALL'}, found {self.found()}",
                    "tool name",
                )
        elif word == "ANSWER":
            raise self.error("an ANSWER check stands alone: write it as a check of its own", "atom")
        elif word in _KEYWORDS:
            raise self.error(f"expected CALL, NO-CALL or a tool name, found {word!r}", "atom")
        elif word.upper() in ("CALL", "NO_CALL", "NOCALL", "NO"):
            raise self.error(f"unknown keyword {word!r}: write CALL or NO-CALL (upper case)", "CALL | NO-CALL")
        tool = self.take_word()
        ordered: list[str] = []
        args = self.arguments(tool, ordered) if self.take_char("(") else {}
        try:
            return node(tool=tool, args=args, ordered=tuple(ordered))
        except ValidationError as exc:  # a value the canonicaliser rejects, e.g. 1e400 overflowing to inf
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise self.error(message, "a finite JSON value", start) from None

    def arguments(self, tool: str, ordered: list[str]) -> dict[str, object]:
        args: dict[str, object] = {}
        if self.take_char(")"):
            return args
        while True:
            self.skip()
            name_pos = self.pos
            name = self.peek_word()
            if name is None or name == "NO-CALL":
                raise self.error(
                    f"expected an argument name in the arguments of {tool}, found {self.found()}",
                    "argument name",
                )
            self.take_word()
            if name in args:
                raise self.error(
                    f"argument {name!r} is given twice in the arguments of {tool}",
                    "a new argument name",
                    name_pos,
                )
            self.expect_char("=", f"after argument name {name!r}")
            args[name] = self.value(name)
            self.skip()
            paired = _PAIRED.match(self.text, self.pos)
            if paired:
                ordered.append(name)
                self.pos = paired.end()
            if self.take_char(")"):
                return args
            self.expect_char(",", f"or ')' after the value of {name!r}")

    def value(self, name: str) -> object:
        self.skip()
        start = self.pos
        try:
            value, end = _DECODER.raw_decode(self.text, self.pos)
        except json.JSONDecodeError:
            hint = " (strings need double quotes)" if self.text[start : start + 1] == "'" else ""
            raise self.error(
                f"argument {name!r} needs a JSON value (a string in double quotes, number, true, false, null, "
                f"list or object), found {self.found()}{hint}",
                "JSON value",
                start,
            ) from None
        except ValueError as exc:
            raise self.error(f"argument {name!r}: {exc}", "JSON value", start) from None
        except RecursionError:
            raise self.error(
                f"argument {name!r}: the value nests more than {MAX_DEPTH} levels deep", "JSON value", start
            ) from None
        self.pos = end
        return value


def parse_check(text: str) -> Check:
    """Parse the text form of one check.

    Raises:
        CheckSyntaxError: with the position, what was expected and what was found.
    """
    if not isinstance(text, str):
        raise CheckValueError(f"a check's text form must be a string, not {type(text).__name__}")
    parser = _Parser(text)
    try:
        return parser.parse()
    except CheckValueError as exc:
        raise parser.error(str(exc), "valid value") from None


_PAIRED = re.compile(r"PAIRED\b")


def _atom_text(atom: Call | NoCall) -> str:
    args = ", ".join(
        f"{name}={json.dumps(value, ensure_ascii=False)}{' PAIRED' if name in atom.ordered else ''}"
        for name, value in atom.args.items()
    )
    return f"{'CALL' if isinstance(atom, Call) else 'NO-CALL'} {atom.tool}({args})"


def format_check(check: Check) -> str:
    """Print ``check`` in canonical text form; ``parse_check(format_check(c)) == c``."""
    if isinstance(check, Call | NoCall):
        return _atom_text(check)
    if isinstance(check, Answer):
        text = f"ANSWER {_atom_text(check.read)}.{check.path} AS {check.kind}"
        if check.expected is None:
            return text
        value = list(check.expected) if "[*]" in check.path else check.expected[0]
        return f"{text} = {json.dumps(value, ensure_ascii=False)}"
    if isinstance(check, Or):
        left = format_check(check.left)
        right = format_check(check.right)
        return f"{left} OR ({right})" if isinstance(check.right, Or) else f"{left} OR {right}"
    if isinstance(check, After | Before):
        word = "AFTER" if isinstance(check, After) else "BEFORE"
        return f"{_atom_text(check.target)} {word} {_atom_text(check.anchor)}"
    word = "FOLLOWS" if isinstance(check, Follows) else "PRECEDES"
    return f"{_atom_text(check.call)} {word} {_atom_text(check.anchor)}"
