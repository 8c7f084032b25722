"""Both notebooks execute top to bottom against the scripted agents' rollout database (``scripted_db`` in
``tests/conftest.py``: oracle, no-op, random and write-first through the real runner); any cell error fails. An
executed notebook shows its figures (image outputs) and its tables."""

import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"


def execute(name: str, parameters: str = "") -> Any:
    """The notebook after execution, with ``parameters`` appended to its parameters cell."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    if parameters:
        notebook.cells[1].source += "\n" + parameters
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    return notebook


def outputs_of(notebook: Any, kind: str) -> list[str]:
    """Every output's text (streams) or ``kind`` data (``text/plain``, ``image/png``, ...) of the code cells."""
    found = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if kind == "text" and "text" in output:
                found.append(str(output["text"]))
            elif kind in output.get("data", {}):
                found.append(str(output["data"][kind]))
    return found


@pytest.fixture
def environment(scripted_db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MANTRA_DB", str(scripted_db))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(NOTEBOOKS.parent), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's own (inline) backend, as for a user
    return scripted_db


@pytest.mark.slow
def test_compare_models_shows_tables_and_figures(environment: Path) -> None:
    notebook = execute("compare_models.ipynb")
    text = "".join(outputs_of(notebook, "text"))
    html = "".join(outputs_of(notebook, "text/html"))
    assert f"{environment}: 4 run(s), k = 3" in text
    assert "<h2>Leaderboard</h2>" in html and "Pass@3 (%)" in html and "Pass^3 (%)" in html
    assert "<h2>Pass@1 (%) by domain</h2>" in html
    assert "<td>starter-<wbr>scripted_<wbr>oracle</td>" in html  # a run id may wrap at its parts
    assert "<h2>Overall per model" in html and "<h2>Pass^3 (%) by domain</h2>" in html
    assert "[78.5, 100.0] Wilson" in html and "±" not in html + text  # the one interval format
    assert "operations/starter: scripted:oracle - scripted:" in text
    assert "no generated suite" in text
    assert len(outputs_of(notebook, "image/png")) == 1  # the Pass@k / Pass^k curves, displayed inline


@pytest.mark.slow
def test_compare_models_shows_generation_records(environment: Path, tmp_path: Path) -> None:
    from ..helpers_rollouts import generated_suite

    folder = generated_suite(tmp_path / "generated")
    notebook = execute("compare_models.ipynb", f"SUITES = [{str(folder)!r}]")
    html = "".join(outputs_of(notebook, "text/html"))
    assert "Generated suites (paper Table 2" in html and "Validated cases by round" in html


@pytest.mark.slow
def test_failure_modes_shows_figures_and_drills_into_the_model_and_case(environment: Path) -> None:
    notebook = execute("failure_modes.ipynb", 'MODEL = "scripted:random"\nCASE = "fig1-case1"')
    text = "".join(outputs_of(notebook, "text"))
    assert f"{environment}: 1 run(s) of scripted:random" in text
    assert "scripted:noop" not in text and "scripted:write-first" not in text  # every cell reads MODEL's runs only
    assert "missing_required_call" in text and "premature_write_pct" in text
    assert "case fig1-case1, attempt " in text and ", model scripted:random: " in text
    assert "unrequested writes: not graded for writes" in text  # the starter suite stores no oracle plans
    assert len(outputs_of(notebook, "image/png")) == 2  # category bars and premature-write heatmap
