"""Both notebooks execute top to bottom against the scripted agents' rollout database (``scripted_db`` in
``tests/conftest.py``: oracle, no-op, random and write-first through the real runner); any cell error fails."""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["failure_modes.ipynb", "compare_models.ipynb"])
def test_notebook_runs_top_to_bottom(name: str, scripted_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MANTRA_DB", str(scripted_db))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(NOTEBOOKS.parent), os.environ.get("PYTHONPATH", "")]))
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    outputs = "".join(
        str(output.get("text", "")) for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    )
    assert f"{scripted_db}: 4 run(s)" in outputs
    if name == "compare_models.ipynb":
        assert ", k = 3" in outputs and "Pass@3 (%)" in outputs  # k follows the 3 attempts stored
        assert "scripted:oracle" in outputs and "operations/starter: scripted:oracle - scripted:" in outputs
    else:
        assert "missing_required_call" in outputs and "premature_write_pct" in outputs
