"""Reading the user's files: bad bytes, bad paths, broken YAML and duplicate keys give one clear error (D12, D14)."""

from pathlib import Path

import pytest

from mantra_env.authoring import AuthoringError, load_source
from mantra_env.errors import MantraError
from mantra_env.userfiles import load_yaml, read_text

STARTER_SOURCE = Path(__file__).parents[1] / "mantra_env/domains/operations/suites/starter/source.yaml"


class FileError(MantraError, ValueError):
    pass


def test_d12_non_utf8_bytes_are_named_by_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(FileError, match=r"f.yaml:2:7: config is not UTF-8 text \(byte 0xe9 here\); save the file"):
        read_text(path, "config", FileError)


def test_d12_bad_paths_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileError, match=r"nope.yaml: cannot read config: No such file or directory"):
        read_text(tmp_path / "nope.yaml", "config", FileError)
    with pytest.raises(FileError, match="cannot read config: it is a folder"):
        read_text(tmp_path, "config", FileError)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1\nb: 2\na: 3\n", r"f.yaml:3:1: not valid YAML: the key 'a' is given twice \(first on line 1\)"),
        ("top:\n  x: 1\n  y: 2\n  x: 3\n", r"f.yaml:4:3: .* the key 'x' is given twice \(first on line 2\)"),
        ("a: [1,\n", r"f.yaml:2:1: not valid YAML"),
        ("[" * 5000, "f.yaml"),
    ],
)
def test_d14_duplicate_keys_and_broken_yaml_name_the_line(text: str, message: str) -> None:
    with pytest.raises(FileError, match=message):
        load_yaml(text, "f.yaml", FileError)


def test_merge_keys_may_be_overridden() -> None:
    text = "base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n"
    assert load_yaml(text, "f", FileError) == {"base": {"x": 1, "y": 2}, "use": {"x": 1, "y": 3}}


def test_d17_an_environment_value_cannot_change_the_structure() -> None:
    text = "url: ${URL}\nport: ${PORT:-8080}\nname: '${NAME:-x}'\nflag: ${FLAG:-true}\n"
    env = {"URL": "http://x\n  max_concurrency: 0", "PORT": ""}
    data = load_yaml(text, "f", FileError, env)
    assert data == {"url": "http://x\n  max_concurrency: 0", "port": 8080, "name": "x", "flag": True}
    assert load_yaml(text, "f", FileError) == {"url": "${URL}", "port": "${PORT:-8080}", "name": "${NAME:-x}",
                                                 "flag": "${FLAG:-true}"}  # fmt: skip


def _source(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "source.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_d14_a_case_listed_twice_in_a_source_is_refused(tmp_path: Path) -> None:
    text = STARTER_SOURCE.read_text(encoding="utf-8")
    first = text.index("  - id: fig1-case1")
    end = text.index("  - id: hw-in-stock-fulfil")
    path = _source(tmp_path, text + "\n" + text[first:end])
    with pytest.raises(AuthoringError, match=r"cases\.\d+: case id 'fig1-case1' is also the id of cases.0"):
        load_source(path)


def test_d14_a_check_id_given_twice_in_a_source_is_refused(tmp_path: Path) -> None:
    text = STARTER_SOURCE.read_text(encoding="utf-8")
    no_po = "      no_po: NO-CALL create_purchase_order()\n"
    doubled = text.replace(no_po, no_po + "      picker: NO-CALL reject_request()\n", 1)
    assert doubled != text
    line = doubled[: doubled.index("      picker: NO-CALL reject_request()")].count("\n") + 1
    with pytest.raises(AuthoringError, match=rf"source.yaml:{line}:7: not valid YAML: the key 'picker' is given twice"):
        load_source(_source(tmp_path, doubled))


def test_d12_a_non_utf8_source_is_named(tmp_path: Path) -> None:
    path = tmp_path / "source.yaml"
    path.write_bytes(b"name: x\ndomain: \xff\n")
    with pytest.raises(AuthoringError, match=r"source.yaml:2:9: suite source is not UTF-8"):
        load_source(path)
