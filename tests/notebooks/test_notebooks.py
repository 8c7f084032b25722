"""Both notebooks execute top to bottom against a rollout database; any cell error fails the build."""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from mantra_env.store import RolloutStore, RunRecord

from ..graders.test_analysis import FORBIDDEN, GOOD, WRITE_FIRST, episode

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Rows of two models on one suite; replaced by a scripted-agent run once the runner exists.
    path = tmp_path_factory.mktemp("db") / "mantra.duckdb"
    with RolloutStore(path) as store:
        for run, model, plan in [("r1", "strong", [GOOD, GOOD, WRITE_FIRST]), ("r2", "weak", [FORBIDDEN, [], GOOD])]:
            store.start_run(RunRecord(run_id=run, suite="ops", model=model, agent="scripted"))
            for case in ("A", "B", "C", "D"):
                for attempt, tools in enumerate(plan):
                    store.record_episode(episode(case, attempt, tools, run=run))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", ["failure_modes.ipynb", "compare_models.ipynb"])
def test_notebook_runs_top_to_bottom(name: str, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MANTRA_DB", str(db))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(NOTEBOOKS.parent), os.environ.get("PYTHONPATH", "")]))
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    outputs = "".join(
        str(output.get("text", "")) for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    )
    assert "run(s)" in outputs
    if name == "compare_models.ipynb":
        assert "strong - weak = +" in outputs
    else:
        assert "ordering_violation" in outputs and "premature_write_pct" in outputs
