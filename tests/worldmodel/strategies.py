"""Hypothesis strategies for the world-model DSL.

* :func:`typed_models`: random *well-typed* models, built directly as AST nodes, with the tool specs their
  parameters are typed by (constants and state variables of every type, including nested records and arrays of
  scalars and enums; transitions with parameters, pre- and postconditions using every expression form; a goal).
* :data:`dsl_texts`: random DSL-ish text: token soup (keywords, names, literals, parentheses, comments, junk),
  balanced ``(model (clause ...))`` forms with random insides, arbitrary text, nesting past the parser's limit.
* :func:`mutated_texts`: model texts (the paper's, random well-typed ones, texts of mutated JSON forms) with
  atoms replaced or swapped, tokens deleted, inserted, swapped or duplicated, and stray parentheses, quotes,
  backslashes and semicolons.
* :data:`json_values` / :func:`mutated_json`: random JSON, and JSON forms of well-typed models with parts
  deleted, replaced, retagged or transplanted.
"""

from __future__ import annotations

import copy
import re
import string
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import (
    ArrayType,
    ConstDecl,
    Contains,
    DslSyntaxError,
    DslType,
    EnumType,
    Expr,
    FieldAccess,
    FieldDecl,
    Lit,
    NextRef,
    OpApp,
    ParamBind,
    ParamRef,
    RecordType,
    ScalarType,
    Transition,
    VarDecl,
    VarRef,
    WorldModel,
    format_model,
    model_from_json,
    model_to_json,
)
from mantra_env.worldmodel.ast import BOOL, INT, OPERATORS, REAL, RESERVED, STRING
from tests.worldmodel.paper import PAPER_MODEL

EXPR_DEPTH = 3  # operator nesting of generated expressions below a top-level condition

# --- names, types and values -------------------------------------------------------------------------------------

_NAME_START = string.ascii_letters + "_"
_NAME_REST = _NAME_START + string.digits

names: st.SearchStrategy[str] = st.builds(
    str.__add__, st.sampled_from(_NAME_START), st.text(_NAME_REST, max_size=6)
).filter(lambda name: name not in RESERVED and name not in OPERATORS)


def unique_names(min_size: int = 0, max_size: int = 4) -> st.SearchStrategy[list[str]]:
    return st.lists(names, min_size=min_size, max_size=max_size, unique=True)


# Strings with the characters that need escaping (quotes, backslashes, control characters, non-ASCII).
texts: st.SearchStrategy[str] = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["", "NONE", 'say "hi"', "back\\slash", "new\nline", "tab\t", "ünïcødé", "\u2028", "; (x)"]),
)
ints: st.SearchStrategy[int] = st.one_of(
    st.integers(-1000, 1000), st.integers(), st.sampled_from([10**40, -(10**60), 2**63, -(2**63)])
)
reals: st.SearchStrategy[float] = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 0.5, -2.5, 1e16, 1e-7, 1.7976931348623157e308, 5e-324]),
)

SCALAR_TYPES: list[DslType] = [INT, REAL, BOOL, STRING]
_SCALAR_VALUES: dict[str, st.SearchStrategy[Any]] = {"Int": ints, "Real": reals, "Bool": st.booleans(), "String": texts}
_enum_values = st.lists(texts, min_size=1, max_size=4, unique=True)

# Types, values and expressions are drawn by plain recursive functions rather than built as nested strategies:
# building a strategy tree per scope makes hypothesis spend most of its time validating strategies.


def _pick(draw: st.DrawFn, options: list[Any]) -> Any:
    return options[draw(st.integers(0, len(options) - 1))]


def draw_type(draw: st.DrawFn, depth: int = 2, element: bool = False) -> DslType:
    """A supported type: a scalar, an enum, an array of scalars or enums, or a record nesting ``depth`` levels."""
    kinds = ["scalar", "enum"] if element else ["scalar", "enum", "array", "record"][: 4 if depth > 0 else 3]
    kind = _pick(draw, kinds)
    if kind == "scalar":
        scalar: DslType = _pick(draw, SCALAR_TYPES)
        return scalar
    if kind == "enum":
        return EnumType(tuple(draw(_enum_values)))
    if kind == "array":
        return ArrayType(draw_type(draw, element=True))
    field_names = draw(unique_names(1, 3))
    return RecordType(tuple(FieldDecl(name, draw_type(draw, depth - 1)) for name in field_names))


def draw_value(draw: st.DrawFn, dsl_type: DslType) -> Any:
    """A constant value of ``dsl_type`` (a Real may be given as an integer)."""
    if isinstance(dsl_type, EnumType):
        return _pick(draw, list(dsl_type.values))
    if isinstance(dsl_type, ArrayType):
        return [draw_value(draw, dsl_type.element) for _ in range(draw(st.integers(0, 3)))]
    if isinstance(dsl_type, RecordType):
        return {f.name: draw_value(draw, f.field_type) for f in dsl_type.fields}
    if dsl_type == REAL and draw(st.booleans()):
        return draw(st.integers(-5, 5))
    return draw(_SCALAR_VALUES[dsl_type.type])


# --- expressions ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """What an expression may refer to: leaf expressions (state variables, constants, bound parameters, next
    values) with their types, and every record field path below them."""

    atoms: tuple[tuple[Expr, DslType], ...]

    @staticmethod
    def of(leaves: list[tuple[Expr, DslType]]) -> Scope:
        atoms: list[tuple[Expr, DslType]] = []
        todo = list(leaves)
        while todo:
            expr, dsl_type = todo.pop()
            atoms.append((expr, dsl_type))
            if isinstance(dsl_type, RecordType):
                todo += [(FieldAccess(expr, f.name), f.field_type) for f in dsl_type.fields]
        return Scope(tuple(atoms))

    def of_type(self, dsl_type: DslType) -> list[Expr]:
        return [expr for expr, t in self.atoms if t == dsl_type]

    def comparable_types(self) -> list[DslType]:
        """Types ``=`` can compare here: the scalars (literals exist) and the types of the atoms."""
        found = list(SCALAR_TYPES)
        for _, t in self.atoms:
            if t not in found:
                found.append(t)
        return found

    def arrays(self) -> list[tuple[Expr, ArrayType]]:
        return [(expr, t) for expr, t in self.atoms if isinstance(t, ArrayType)]


def draw_expr(draw: st.DrawFn, scope: Scope, dsl_type: DslType, depth: int = EXPR_DEPTH) -> Expr:
    """An expression whose type is exactly ``dsl_type`` (an enum value may be a string literal: it only appears
    where it meets the enum, as an operand of ``=`` or the element of ``contains``)."""
    options = []
    if scope.of_type(dsl_type):
        options += ["atom", "atom"]
    if isinstance(dsl_type, ScalarType | EnumType):
        options.append("literal")
    if depth > 0 and dsl_type in (BOOL, INT, REAL):
        options += ["op", "op"]
    choice = _pick(draw, options)
    if choice == "atom":
        atom: Expr = _pick(draw, scope.of_type(dsl_type))
        return atom
    if choice == "literal":
        if isinstance(dsl_type, EnumType):
            return Lit(_pick(draw, list(dsl_type.values)))
        assert isinstance(dsl_type, ScalarType)
        return Lit(draw(_SCALAR_VALUES[dsl_type.type]))
    if dsl_type == BOOL:
        return _draw_condition(draw, scope, depth - 1)
    return _draw_arithmetic(draw, scope, dsl_type, depth - 1)


def _draw_operands(draw: st.DrawFn, scope: Scope, types: list[DslType], depth: int) -> tuple[Expr, ...]:
    return tuple(draw_expr(draw, scope, t, depth) for t in types)


def _draw_arithmetic(draw: st.DrawFn, scope: Scope, dsl_type: DslType, depth: int) -> Expr:
    symbol = _pick(draw, ["+", "-", "*", "/"])
    count = 2 if symbol == "/" else draw(st.integers(1, 3))
    types = [dsl_type] * count
    if dsl_type == REAL:  # one Real operand makes the result Real; the others may be Int
        types = [REAL] + [_pick(draw, [INT, REAL]) for _ in range(count - 1)]
        types = draw(st.permutations(types))
    return OpApp(symbol, _draw_operands(draw, scope, types, depth))


def _draw_condition(draw: st.DrawFn, scope: Scope, depth: int) -> Expr:
    arrays = scope.arrays()
    symbol = _pick(draw, ["=", "=", "<", "<=", ">", ">=", "and", "or", "not", "=>"] + ["contains"] * bool(arrays))
    if symbol == "=":
        compared = _pick(draw, scope.comparable_types())
        return OpApp("=", _draw_operands(draw, scope, [compared, compared], depth))
    if symbol in ("<", "<=", ">", ">="):
        return OpApp(symbol, _draw_operands(draw, scope, [_pick(draw, [INT, REAL]) for _ in range(2)], depth))
    if symbol == "contains":
        array, array_type = _pick(draw, arrays)
        return Contains(array, draw_expr(draw, scope, array_type.element, depth))
    count = {"not": 1, "=>": 2}.get(symbol) or draw(st.integers(1, 3))
    return OpApp(symbol, _draw_operands(draw, scope, [BOOL] * count, depth))


def draw_conditions(draw: st.DrawFn, scope: Scope, max_size: int = 3) -> tuple[Expr, ...]:
    return tuple(draw_expr(draw, scope, BOOL) for _ in range(draw(st.integers(0, max_size))))


# --- models --------------------------------------------------------------------------------------------------------

PARAM_SCHEMAS: list[tuple[DslType, dict[str, Any]]] = [
    (INT, {"type": "integer"}),
    (REAL, {"type": "number"}),
    (BOOL, {"type": "boolean"}),
    (STRING, {"type": "string"}),
    (EnumType(("NONE", "BOOKED", 'say "x"')), {"type": "string", "enum": ["NONE", "BOOKED", 'say "x"']}),
]
_UNBOUND = {"notes": {"type": "array", "items": {"type": "string"}}}  # a parameter the DSL cannot bind


@st.composite
def typed_models(draw: st.DrawFn, max_decls: int = 4, max_transitions: int = 3) -> tuple[WorldModel, list[ToolSpec]]:
    """A well-typed model and the tool specs of its transitions."""
    decl_names = draw(unique_names(max_size=2 * max_decls))
    split = draw(st.integers(0, len(decl_names)))
    consts = []
    for name in decl_names[:split]:
        const_type = draw_type(draw)
        consts.append(ConstDecl(name, const_type, draw_value(draw, const_type)))
    variables = [VarDecl(name, draw_type(draw)) for name in decl_names[split:]]
    state: list[tuple[Expr, DslType]] = [(VarRef(d.name), d.const_type) for d in consts]
    state += [(VarRef(d.name), d.var_type) for d in variables]
    nexts: list[tuple[Expr, DslType]] = [(NextRef(d.name), d.var_type) for d in variables]

    transitions, tools = [], []
    for tool in draw(unique_names(max_size=max_transitions)):
        tool_params = draw(unique_names(max_size=3))
        locals_ = draw(st.lists(names, min_size=len(tool_params), max_size=len(tool_params), unique=True))
        kinds = [draw(st.sampled_from(PARAM_SCHEMAS)) for _ in tool_params]
        properties = {p: schema for p, (_, schema) in zip(tool_params, kinds, strict=True)}
        if draw(st.booleans()):
            properties = {**_UNBOUND, **properties}
        tools.append(
            ToolSpec(
                name=tool,
                kind=draw(st.sampled_from(["read", "write"])),
                parameters={"type": "object", "properties": properties, "required": [], "additionalProperties": False},
            )
        )
        params: list[tuple[Expr, DslType]] = [
            (ParamRef(local), t) for local, (t, _) in zip(locals_, kinds, strict=True)
        ]
        binds = tuple(ParamBind(p, local) for p, local in zip(tool_params, locals_, strict=True))
        pre = draw_conditions(draw, Scope.of(state + params))
        post = draw_conditions(draw, Scope.of(state + params + nexts))
        transitions.append(Transition(tool, binds, pre, post))
    goal = draw_conditions(draw, Scope.of(state), max_size=2)
    return WorldModel(tuple(consts), tuple(variables), tuple(transitions), goal), tools


models: st.SearchStrategy[WorldModel] = typed_models().map(lambda pair: pair[0])

# --- text ----------------------------------------------------------------------------------------------------------

VOCABULARY = [
    *sorted(RESERVED),
    *sorted(OPERATORS),
    "(",
    ")",
    "()",
    "(model",
    "(transition",
    "(params",
    "(pre",
    "(post",
    "(goal",
    "(var",
    "(const",
    '"',
    '""',
    '"a"',
    '"NONE"',
    '"\\q"',
    '"\\u12"',
    '"\\ud800"',
    '"tab\tin"',
    "\\",
    ";",
    "; comment\n",
    "\n",
    " ",
    "\t",
    "0",
    "-1",
    "+7",
    "1.5",
    "-.5",
    "1e400",
    "1e",
    "1e-3",
    ".",
    "-",
    "9" * 5000,
    "١٢",
    "x",
    "in_stock",
    "status",
    "_",
    "9lives",
    "a.b",
    "é",
    "\u00a0",
    "'",
    "#",
]
_SEPARATORS = st.sampled_from([" ", " ", "\n", "", "\t"])


@st.composite
def _token_soup(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(st.one_of(st.sampled_from(VOCABULARY), names, st.text(max_size=3)), max_size=30))
    text = "".join(token + draw(_SEPARATORS) for token in tokens)
    if draw(st.booleans()):
        text = f"(model {text})"
    return text


def _nested(depth: int) -> st.SearchStrategy[str]:
    return st.sampled_from(["(", "(not ", "(field ", "((", "(model "]).map(
        lambda opener: opener * depth + "x" + ")" * depth
    )


_ATOMS = [token for token in VOCABULARY if "(" not in token and ")" not in token and token.strip()]
_POOL = st.sampled_from(["x", "y", "status", "in_stock", "itm", "true", "1", "2.5", '"NONE"'])  # names that recur
_atoms = st.one_of(st.sampled_from(_ATOMS), names, _POOL, _POOL)
_HEADS = [*sorted(OPERATORS), "param", "next", "field", "contains", "Enum", "Record", "Array"]
_sexprs: st.SearchStrategy[str] = st.recursive(
    _atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda items: "(" + " ".join(items) + ")"),
        st.builds(
            lambda head, items: "(" + " ".join([head, *items]) + ")",
            st.sampled_from(_HEADS),
            st.lists(inner, max_size=3),
        ),
    ),
    max_leaves=12,
)


@st.composite
def _clause(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(["goal", "goal", "transition", "transition", "var", "const", "params", "pre"]))
    if head == "transition":
        sections = [
            "(" + " ".join([section, *draw(st.lists(_sexprs, max_size=3))]) + ")"
            for section in draw(st.lists(st.sampled_from(["params", "pre", "post"]), max_size=4))
        ]
        return "(" + " ".join(["transition", draw(st.one_of(names, _atoms)), *sections]) + ")"
    if head in ("var", "const"):
        parts = [draw(_POOL), draw(st.one_of(st.sampled_from(["Int", "Real", "Bool", "String"]), _sexprs))]
        return "(" + " ".join([head, *parts, *draw(st.lists(_sexprs, max_size=1 if head == "const" else 0))]) + ")"
    return "(" + " ".join([head, *draw(st.lists(_sexprs, max_size=4))]) + ")"


# Balanced (model (clause ...) ...) text with random insides: gets past the reader into the converter and the
# type checker.
_models_of_sexprs = st.lists(_clause(), max_size=5).map(lambda clauses: "(model " + "\n  ".join(clauses) + ")")

dsl_texts: st.SearchStrategy[str] = st.one_of(
    _token_soup(),
    _models_of_sexprs,
    _models_of_sexprs,
    st.text(max_size=40),
    st.integers(60, 300).flatmap(_nested),
    st.just(""),
)

_TEXT_TOKEN = re.compile(r'\s+|;[^\n]*|[()]|"(?:[^"\\\n]|\\.)*"|[^\s()";]+|.', re.DOTALL)
_STRAYS = ["(", ")", '"', "\\", ";", "\n", "()", '"x"', "(param", "(next", "next", "param", "1", "-", ""]
# Atom-level mutations keep the parentheses balanced and reach the type checker; the others test the reader.
_MUTATIONS = ["replace_atom"] * 4 + ["swap_atoms"] * 2 + ["delete", "insert", "swap", "duplicate", "replace", "split"]


@st.composite
def mutated_texts(draw: st.DrawFn) -> str:
    """A model text with up to four token mutations: the paper's, a random well-typed model's, or the text of a
    mutated JSON form (well-formed, often ill-typed)."""
    base = draw(st.one_of(st.just(PAPER_MODEL), models.map(format_model), mutated_json().map(_text_of_json)))
    tokens = _TEXT_TOKEN.findall(base)
    for _ in range(draw(st.integers(0, 4))):
        atoms = [k for k, token in enumerate(tokens) if token not in "()" and not token.isspace()]
        if not tokens or not atoms:
            break
        i = draw(st.integers(0, len(tokens) - 1))
        j = draw(st.integers(0, len(tokens) - 1))
        a = atoms[draw(st.integers(0, len(atoms) - 1))]
        b = atoms[draw(st.integers(0, len(atoms) - 1))]
        action = draw(st.sampled_from(_MUTATIONS))
        if action == "replace_atom":
            tokens[a] = draw(st.one_of(st.just(tokens[b]), st.just(tokens[b]), st.sampled_from(_ATOMS), names))
        elif action == "swap_atoms":
            tokens[a], tokens[b] = tokens[b], tokens[a]
        elif action == "delete":
            del tokens[i]
        elif action == "insert":
            tokens.insert(i, draw(st.sampled_from(_STRAYS + VOCABULARY)))
        elif action == "swap":
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif action == "duplicate":
            tokens.insert(i, tokens[j])
        elif action == "replace":
            tokens[i] = draw(st.sampled_from(_STRAYS))
        else:  # cut a token in two with a stray character
            cut = draw(st.integers(0, len(tokens[i])))
            tokens[i] = tokens[i][:cut] + draw(st.sampled_from(_STRAYS)) + tokens[i][cut:]
    return "".join(tokens)


def _text_of_json(data: dict[str, Any]) -> str:
    try:
        return format_model(model_from_json(data))
    except DslSyntaxError:
        return PAPER_MODEL


# --- JSON ----------------------------------------------------------------------------------------------------------

JSON_KEYS = [
    "consts",
    "vars",
    "transitions",
    "goal",
    "name",
    "const_type",
    "var_type",
    "value",
    "type",
    "values",
    "fields",
    "field_type",
    "element",
    "node",
    "symbol",
    "args",
    "record",
    "array",
    "tool",
    "params",
    "pre",
    "post",
    "tool_param",
    "local",
    "span",
]
JSON_TAGS = ["Int", "Real", "Bool", "String", "Enum", "Record", "Array", "literal", "var_ref", "param_ref"]
JSON_TAGS += ["next_ref", "op", "field", "contains", *sorted(OPERATORS)]

json_scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    ints,
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([float("inf"), float("-inf")]),
    texts,
    st.sampled_from(JSON_TAGS),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(JSON_KEYS), inner, max_size=4)
    ),
    max_leaves=12,
)


def _parts(data: Any) -> list[Any]:
    """``data`` and everything inside it (iteratively)."""
    found, todo = [], [data]
    while todo:
        item = todo.pop()
        found.append(item)
        if isinstance(item, dict | list):
            todo.extend(item.values() if isinstance(item, dict) else item)
    return found


@st.composite
def mutated_json(draw: st.DrawFn) -> dict[str, Any]:
    """The JSON form of a random well-typed model with one to four parts deleted, replaced, retagged or
    transplanted (a copy of another part of the same model put in its place: still valid JSON form, often
    ill-typed)."""
    data: dict[str, Any] = copy.deepcopy(model_to_json(draw(models)))
    for _ in range(draw(st.integers(1, 4))):
        parts = _parts(data)
        container = draw(st.sampled_from([part for part in parts if isinstance(part, dict | list)]))
        transplant = copy.deepcopy(draw(st.sampled_from(parts)))
        if isinstance(container, dict):
            if not container:
                container[draw(st.sampled_from(JSON_KEYS))] = draw(json_values)
                continue
            key = draw(st.sampled_from(sorted(container)))
            action = draw(st.sampled_from(["delete", "replace", "retag", "rename", "transplant", "transplant"]))
            if action == "delete":
                del container[key]
            elif action == "replace":
                container[key] = draw(json_values)
            elif action == "retag":
                container[key] = draw(st.sampled_from(JSON_TAGS))
            elif action == "rename":
                container[draw(st.sampled_from(JSON_KEYS))] = container.pop(key)
            else:
                container[key] = transplant
        elif container:
            i = draw(st.integers(0, len(container) - 1))
            action = draw(st.sampled_from(["delete", "replace", "duplicate", "transplant", "transplant"]))
            if action == "delete":
                del container[i]
            elif action == "replace":
                container[i] = draw(json_values)
            elif action == "duplicate":
                container.insert(i, copy.deepcopy(container[i]))
            else:
                container[i] = transplant
        else:
            container.append(draw(json_values))
    return data
