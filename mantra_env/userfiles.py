"""Reading the user's files: one place that turns bad paths, non-UTF-8 bytes, broken YAML and duplicate keys
into one clear error naming the file and the line, raised as the caller's own :class:`MantraError` subclass.

YAML is read with a loader that refuses a key given twice in one mapping (PyYAML keeps the last one silently;
``<<`` merges stay allowed and explicit keys still override merged ones). ``${VAR}`` and ``${VAR:-default}``
are expanded inside scalar values *after* parsing, so a variable's value can never change the structure of the
file (a newline in it stays a newline in a string); a plain scalar is typed after expansion
(``port: ${PORT:-8080}`` is an int).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from mantra_env.errors import MantraError

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_env(text: str, env: Mapping[str, str] | None = None) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}``; an unset (or empty) variable without default expands to ''."""
    values = os.environ if env is None else env

    def replace(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        return value if value else (match.group(2) or "")

    return _VAR.sub(replace, text)


def read_text(path: Path, what: str, error: type[MantraError]) -> str:
    """The UTF-8 text of ``path``, or ``error`` naming the file, what it was read as, and the problem.

    Args:
        path: the file.
        what: what the file is, for the message (``"suite manifest"``).
        error: the caller's error class.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = "it is a folder" if path.is_dir() else (exc.strerror or str(exc))
        raise error(f"{path}: cannot read {what}: {reason}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(
            f"{path}:{line}:{column}: {what} is not UTF-8 text (byte 0x{data[exc.start]:02x} here); "
            "save the file as UTF-8"
        ) from None


class _StrictLoader(yaml.SafeLoader):
    """A safe loader that refuses duplicate keys (with both places) and can expand ``${VAR}`` in scalars."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: SafeConstructor reports it
                continue
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key!r} is given twice (first on line {first.start_mark.line + 1}); keep one",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def _expand_nodes(loader: _StrictLoader, root: yaml.Node, env: Mapping[str, str]) -> None:
    """Expand ``${VAR}`` in every scalar of ``root`` in place (iteratively: YAML nests as deep as it likes)."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # aliases share nodes
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if "${" in node.value:
                node.value = expand_env(node.value, env)
                if node.style is None:  # plain: typed by its expanded text, as if written so
                    node.tag = loader.resolve(yaml.ScalarNode, node.value, (True, False))  # type: ignore[no-untyped-call]
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))


def load_yaml(text: str, origin: str, error: type[MantraError], env: Mapping[str, str] | None = None) -> Any:
    """Parse one YAML document, refusing duplicate keys; with ``env``, expand ``${VAR}`` in its scalars.

    Raises:
        error: naming ``origin``, the line and column, and the problem.
    """
    loader = _StrictLoader(text)
    loader.name = origin
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if env is not None:
            _expand_nodes(loader, node, env)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{origin}:{mark.line + 1}:{mark.column + 1}" if mark is not None else origin
        problem = exc.problem or exc.context or "not valid YAML"
        raise error(f"{where}: not valid YAML: {problem}") from None
    except (yaml.YAMLError, RecursionError) as exc:
        reason = "it nests too deep" if isinstance(exc, RecursionError) else str(exc)
        raise error(f"{origin}: not valid YAML: {reason}") from None
    finally:
        loader.dispose()
