"""Errors of the world-model DSL: what went wrong, where (line, column, the line with a caret), and how to fix
it. The same text is shown to a person at the CLI and to an LLM in the repair loop."""

from __future__ import annotations

from dataclasses import dataclass

from mantra_env.errors import MantraError
from mantra_env.worldmodel.ast import Span


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem. ``code`` is stable (tests and the repair loop key on it); ``span`` is ``None`` for nodes
    that were not parsed from text."""

    code: str
    message: str
    span: Span | None = None
    hint: str = ""

    def render(self, source: str | None = None, origin: str = "world model") -> str:
        """``origin:line:col: error[code]: message``, then the source line with a caret and the hint."""
        where = f"{origin}:{self.span.line}:{self.span.column}" if self.span else origin
        lines = [f"{where}: error[{self.code}]: {self.message}"]
        if self.span is not None and source is not None:
            start = source.rfind("\n", 0, self.span.start) + 1
            stop = source.find("\n", self.span.start)
            text = source[start : stop if stop >= 0 else len(source)]
            width = max(1, min(self.span.end, start + len(text)) - self.span.start)
            lines.append(f"  {text}")
            indent = "".join("\t" if ch == "\t" else " " for ch in text[: self.span.start - start])  # tabs align
            indent += " " * (self.span.start - start - len(indent))
            lines.append("  " + indent + "^" * width)
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)


class DslError(MantraError):
    """Root of the DSL's errors. ``diagnostics`` lists every problem found (at least one)."""

    def __init__(self, diagnostics: list[Diagnostic], source: str | None = None, origin: str = "world model"):
        self.diagnostics = diagnostics
        self.source = source
        self.origin = origin
        rendered = [d.render(source, origin) for d in diagnostics]
        more = f"\n({len(diagnostics)} problems)" if len(diagnostics) > 1 else ""
        super().__init__("\n".join(rendered) + more)

    @property
    def code(self) -> str:
        """The code of the first problem."""
        return self.diagnostics[0].code

    @property
    def span(self) -> Span | None:
        """The span of the first problem."""
        return self.diagnostics[0].span


class DslSyntaxError(DslError, ValueError):
    """The text is not a well-formed model (tokens, parentheses, clause shapes)."""


class DslTypeError(DslError, TypeError):
    """The model parses but is ill-typed or names things that do not exist."""
