"""Bad input gets one clear error naming the place and the problem."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mantra_env.case import load_cases, load_manifest, load_suite
from mantra_env.checks import MAX_CHECK_JSON_DEPTH, Call, check_from_json, check_to_json, format_check, parse_check
from mantra_env.errors import CaseFileError, CheckSyntaxError, CheckValueError, GradingError, MantraError
from mantra_env.graders import grade
from mantra_env.limits import MAX_CHECK_ATOMS, MAX_DEPTH
from mantra_env.trace import ToolCall, Trace


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("CALL", 5, "expected a tool name after CALL, found end of text"),
        ("CALL a(x=1", 11, "expected ',' or ')' after the value of 'x', found end of text"),
        ("(CALL a() OR CALL b()", 22, "expected ')' to close the parenthesised check"),
        ("CALL a() CALL b()", 10, "expected OR, AFTER, BEFORE, FOLLOWS, PRECEDES or end of text, found 'CALL'"),
        ("CALL a() after CALL b()", 10, "keywords are upper case: write AFTER"),
        ("CALL a() UNTIL CALL b()", 10, "found 'UNTIL'"),
        ("call a()", 1, "unknown keyword 'call': write CALL or NO-CALL"),
        ("CALL a(x=foo)", 10, "argument 'x' needs a JSON value"),
        ("CALL a(x='s')", 10, "(strings need double quotes)"),
        ("CALL a(x=NaN)", 10, "NaN is not a JSON value"),
        ("CALL a(x=1e400)", 6, "inf is not a JSON number"),
        ("CALL a(x=1, x=2)", 13, "argument 'x' is given twice"),
        ("CALL a() AFTER NO-CALL b()", 16, "the anchor of AFTER must be a CALL atom, not NO-CALL"),
        ("(CALL a() OR CALL b()) AFTER CALL c()", 1, "the left side of AFTER must be a single CALL or NO-CALL atom"),
        ("NO-CALL a() FOLLOWS CALL b()", 1, "FOLLOWS is a positive obligation"),
        ("CALL a() PRECEDES (CALL b())", 19, "the anchor of PRECEDES must be a single CALL atom"),
        ("CALL a(=1)", 8, "expected an argument name in the arguments of a"),
        ("", 1, "expected CALL, NO-CALL or a tool name, found end of text"),
    ],
)
def test_malformed_check_text(text: str, column: int, message: str) -> None:
    with pytest.raises(CheckSyntaxError) as info:
        parse_check(text)
    error = info.value
    assert message in str(error)
    assert f"column {column}:" in str(error)
    assert error.position == column - 1
    assert error.expected
    assert str(error).endswith("^")
    assert isinstance(error, MantraError) and isinstance(error, ValueError)


def test_multiline_error_points_at_the_line() -> None:
    with pytest.raises(CheckSyntaxError, match=r"line 2, column 1: .*found 'BOGUS'"):
        parse_check("CALL a()\nBOGUS")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"x": math.nan}, "argument 'x': nan is not a JSON number"),
        ({"x": (1, 2)}, "argument 'x': (1, 2) (a tuple) is not a JSON value"),
        ({"x": {1, 2}}, "(a set) is not a JSON value"),
        ({"x": [1, b"raw"]}, "argument 'x'[1]: b'raw' (a bytes) is not a JSON value"),
        ({"x": {"k": math.inf}}, "argument 'x'.k: inf is not a JSON number"),
        ({"not an identifier": 1}, "argument name 'not an identifier' is not an identifier"),
    ],
)
def test_non_json_argument_values_are_rejected(args: dict[str, object], message: str) -> None:
    with pytest.raises(CheckValueError, match="invalid check JSON") as info:
        check_from_json({"op": "call", "tool": "t", "args": args})
    assert message in str(info.value)


def test_unknown_operator_in_json_form() -> None:
    with pytest.raises(CheckValueError, match=r"invalid check JSON: .*'until'.*does not match"):
        check_from_json({"op": "until", "tool": "t"})


def test_missing_field_in_json_form_names_it() -> None:
    with pytest.raises(CheckValueError, match=r"precedes\.anchor: Field required"):
        check_from_json({"op": "precedes", "call": {"op": "call", "tool": "a"}})


def _case(**overrides: object) -> dict[str, object]:
    case: dict[str, object] = {
        "id": "c1",
        "domain": "operations",
        "scenario": {"prompt": "Get a monitor."},
        "checks": [{"id": "k1", "check": "CALL check_inventory()"}],
    }
    case.update(overrides)
    return case


def _write(tmp_path: Path, *cases: object) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("\n".join(c if isinstance(c, str) else json.dumps(c) for c in cases) + "\n")
    return path


def test_valid_case_file_loads_checks_from_text(tmp_path: Path) -> None:
    (case,) = load_cases(_write(tmp_path, _case()))
    assert case.checks[0].check == Call(tool="check_inventory")
    assert case.checks[0].text == "CALL check_inventory()"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "c1"', "suite.jsonl:2: not valid JSON"),
        (
            {k: v for k, v in _case().items() if k != "scenario"},
            "suite.jsonl:2: invalid case: scenario: Field required",
        ),
        (_case(checks=[]), "checks: List should have at least 1 item"),
        (_case(checks=[{"id": "k1", "check": "CALL a() FOO"}]), "checks.0.check: check text, line 1, column 10"),
        (
            _case(checks=[{"id": "k", "check": "CALL a()"}, {"id": "k", "check": "CALL b()"}]),
            "check id 'k' appears twice",
        ),
        (_case(extra_field=1), "extra_field: Extra inputs are not permitted"),
        (_case(id="c0"), "suite.jsonl:2: case id 'c0' appears twice"),
    ],
)
def test_bad_case_files_name_file_line_and_field(tmp_path: Path, line: object, message: str) -> None:
    path = _write(tmp_path, _case(id="c0"), line)
    with pytest.raises(CaseFileError) as info:
        load_cases(path)
    assert message in str(info.value)


def test_manifest_case_count_mismatch(tmp_path: Path) -> None:
    _write(tmp_path, _case())
    (tmp_path / "manifest.json").write_text(json.dumps({"name": "ops", "domain": "operations", "case_count": 2}))
    with pytest.raises(CaseFileError, match=r"case_count is 2 but .* holds 1 cases"):
        load_suite(tmp_path)


def test_missing_suite_files(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match="cannot read suite manifest"):
        load_suite(tmp_path)


def test_trace_steps_must_be_positions() -> None:
    with pytest.raises(ValueError, match=r"calls\[1\] has step 5; steps must be 0, 1, 2"):
        Trace(calls=(ToolCall(step=0, tool="a"), ToolCall(step=5, tool="b")))


def test_grading_without_checks_is_an_error() -> None:
    with pytest.raises(GradingError, match="empty check list"):
        grade(Trace(), [])


# -- nesting and size guards (issue 13, D13) ----------------------------------------------------------------


def _or_chain(count: int) -> str:
    return " OR ".join(f"CALL t{i}()" for i in range(count))


def _nested_or_json(count: int) -> dict[str, object]:
    check: dict[str, object] = {"op": "call", "tool": "t0"}
    for i in range(1, count):
        check = {"op": "or", "left": check, "right": {"op": "call", "tool": f"t{i}"}}
    return check


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(" * 330 + "CALL a()" + ")" * 330, f"parentheses nest more than {MAX_DEPTH} levels"),
        ("(" * 100_000, f"parentheses nest more than {MAX_DEPTH} levels"),
        ("CALL a(x=" + "[" * 600 + "]" * 600 + ")", f"nests more than {MAX_DEPTH} levels"),
        ("CALL a(x=" + "[" * 100_000 + "]" * 100_000 + ")", f"nests more than {MAX_DEPTH} levels"),
        (_or_chain(3000), f"at most {MAX_CHECK_ATOMS} atoms"),
        ("(" + _or_chain(100) + ") OR (" + _or_chain(100) + ")", f"at most {MAX_CHECK_ATOMS} atoms"),
    ],
)
def test_d13_deep_or_huge_check_texts_are_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(CheckSyntaxError, match=re.escape(message)):
        parse_check(text)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_nested_or_json(3000), "nests more than"),
        (_nested_or_json(MAX_CHECK_ATOMS + 1), f"at most {MAX_CHECK_ATOMS} atoms"),
        ({"op": "call", "tool": "a", "args": {"x": json.loads("[" * 100 + "]" * 100)}}, "nests more than 64"),
        (
            {"op": "call", "tool": "a", "args": {"x": json.loads("[" * 900 + "]" * 900)}},
            f"nests more than {MAX_CHECK_JSON_DEPTH} levels",
        ),
    ],
)
def test_d13_deep_or_huge_check_json_is_refused(data: dict[str, object], message: str) -> None:
    with pytest.raises(CheckValueError, match=message):
        check_from_json(data)


def test_d13_checks_within_the_limits_grade_print_and_round_trip() -> None:
    check = parse_check(_or_chain(MAX_CHECK_ATOMS))
    assert parse_check(format_check(check)) == check
    assert check_from_json(check_to_json(check)) == check
    deep = "CALL a(x=" + "[" * MAX_DEPTH + "]" * MAX_DEPTH + ")"
    assert parse_check(format_check(parse_check(deep))) == parse_check(deep)
    trace = Trace.of(*[(f"t{i}", {}) for i in range(0, MAX_CHECK_ATOMS, 7)])
    assert grade(trace, [check]).passed
    assert check_from_json(_nested_or_json(MAX_CHECK_ATOMS)) == check


def _nested_or_text(count: int) -> str:
    right = ', "right": {"op": "call", "tool": "t"}}'
    return '{"op": "or", "left": ' * (count - 1) + '{"op": "call", "tool": "t"}' + right * (count - 1)


@pytest.mark.parametrize(
    "check",
    [
        json.dumps(_or_chain(3000)),
        _nested_or_text(500),
        _nested_or_text(100_000),
        json.dumps("(" * 3000 + "CALL a()" + ")" * 3000),
        '{"op": "call", "tool": "a", "args": {"x": ' + "[" * 900 + "]" * 900 + "}}",
        json.dumps("CALL a(x=" + '{"k": ' * 5000 + "1" + "}" * 5000 + ")"),
    ],
)
def test_d13_a_suite_line_with_a_deep_check_is_refused_at_load(tmp_path: Path, check: str) -> None:
    line = json.dumps(_case(checks=[{"id": "k1", "check": "CHECK"}])).replace('"CHECK"', check)
    path = _write(tmp_path, line)
    with pytest.raises(CaseFileError, match=r"suite.jsonl:1: (invalid case: checks.0.check|not usable JSON)"):
        load_cases(path)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["(", ")", "CALL a()", " OR ", "NO-CALL b(x=", "[", "]", "1", ")", " AFTER CALL c()"]),
                max_size=400), st.integers(min_value=0, max_value=2000))  # fmt: skip
def test_random_deep_check_texts_parse_or_raise_check_syntax_error(pieces: list[str], depth: int) -> None:
    text = "(" * depth + "".join(pieces) + ")" * depth
    try:
        check = parse_check(text)
    except CheckSyntaxError:
        return
    assert parse_check(format_check(check)) == check
    grade(Trace.of(("a", {})), [check])


@pytest.mark.parametrize("digits", ["٣٤", "３", "²"])
def test_d17_digits_outside_ascii_are_not_numbers_in_checks(digits: str) -> None:
    with pytest.raises(CheckSyntaxError, match="needs a JSON value"):
        parse_check(f"CALL a(x={digits})")


# -- files (issue 13, D12) ------------------------------------------------------------------------------------


def test_d12_non_utf8_suite_files_name_the_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _case())
    with path.open("ab") as handle:
        handle.write(b'{"id": "\xff"}\n')
    with pytest.raises(CaseFileError, match=r"suite.jsonl:2:9: case file is not UTF-8 text \(byte 0xff"):
        load_cases(path)
    (tmp_path / "manifest.json").write_bytes(b'{"name": "\xfe"}')
    with pytest.raises(CaseFileError, match=r"manifest.json:1:11: suite manifest is not UTF-8"):
        load_suite(tmp_path)
    with pytest.raises(CaseFileError, match=r"manifest.json:1:11: suite manifest is not UTF-8"):
        load_manifest(tmp_path)


def test_d12_bad_suite_paths_are_clear(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match="nope: no such suite folder or file"):
        load_suite(tmp_path / "nope")
    (tmp_path / "manifest.json").mkdir()
    with pytest.raises(CaseFileError, match=r"manifest.json: cannot read suite manifest: it is a folder"):
        load_suite(tmp_path)


def test_d12_huge_numbers_in_a_suite_line_name_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _case(), '{"id": ' + "9" * 5000 + "}")
    with pytest.raises(CaseFileError, match=r"suite.jsonl:2: not usable JSON"):
        load_cases(path)


def test_d13_a_check_set_naming_thousands_of_tools_grades() -> None:
    checks = [parse_check(f"CALL t{i}()") for i in range(5000)]  # the matcher once nested an elif per tool
    verdict = grade(Trace.of(("t3", {}), ("t4999", {})), checks)
    assert [c.passed for c in verdict.checks].count(True) == 2
