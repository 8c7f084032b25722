"""The run directory: every stage's artifacts on disk, so that a pipeline resumes at any stage (paper App.
"Resumability").

Layout::

    RUN_DIR/config.yaml                the config the run last ran with (a resumed run's earlier: config.N.yaml)
    RUN_DIR/graph/graph.json           the document graph (+ toc.txt, graph.png, graph.svg)
    RUN_DIR/samples/samples.json       the samples and the coverage after drawing them
    RUN_DIR/<stage>/<sample>.json      one artifact per sample and stage, written when the sample finishes
    RUN_DIR/<stage>/DONE               the stage finished for every sample
    RUN_DIR/export/suite/              the exported suite (suite.jsonl + manifest.json)
    RUN_DIR/usage.json                 requests, cache hits, tokens and cost per LLM stage
    RUN_DIR/llm_cache/                 the disk cache of LLM answers (unless configured elsewhere)
    RUN_DIR/exchange/                  request and answer files of ``exchange/exchange`` models
    RUN_DIR/solver_memo/               the validation stage's solver results (mantra_env.generators.solver_memo)
    RUN_DIR/recorded.jsonl             an exchange run's answers in the replay format

Every file is written atomically (:func:`mantra_env.files.write_atomic`: a temporary file with a unique name
renamed into place), so a killed run leaves whole artifacts or none, and two processes writing one file leave one
of the two whole. A run holds ``RUN_DIR/run.lock`` (:func:`run_lock`) for its whole life: a second
``mantra_env.generators.run`` on the same directory is refused while the first is alive.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from mantra_env.errors import MantraError
from mantra_env.files import LockHeld, exclusive_lock, write_atomic
from mantra_env.generators.stages import PIPELINE_STAGES

M = TypeVar("M", bound=BaseModel)

STAGE_ORDER = PIPELINE_STAGES
"""Pipeline stages in order (``--from-stage`` takes one of these; :mod:`mantra_env.generators.stages`)."""


class RunDirError(MantraError, ValueError):
    """A run directory is missing, foreign or holds a broken artifact."""


RUN_LOCK = "run.lock"
"""The lock file a run holds for its life (see :func:`run_lock`)."""


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`mantra_env.files.write_atomic`), creating its folder."""
    write_atomic(path, text)


@contextmanager
def run_lock(root: Path) -> Iterator[None]:
    """Hold the run directory ``root`` for the block; another process already holding it is a
    :class:`RunDirError` naming it (two pipelines in one directory would write the same artifacts, cache
    entries and exchange files). The kernel lets go of the lock when the holder ends, however it ends."""
    try:
        with exclusive_lock(root / RUN_LOCK, f"run directory {root}", timeout_s=0):
            yield
    except LockHeld as held:
        by = f"process {held.holder}" if held.holder is not None else "another process"
        raise RunDirError(
            f"{root} is in use by {by} (a mantra_env.generators.run on it is still going); wait for it to end or "
            "stop it, then resume"
        ) from None


class RunDir:
    """Paths and atomic reads and writes of one run's artifacts."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def stage_dir(self, stage: str) -> Path:
        if stage not in STAGE_ORDER:
            raise RunDirError(f"unknown stage {stage!r}; stages: {', '.join(STAGE_ORDER)}")
        return self.root / stage

    def artifact(self, stage: str, name: str) -> Path:
        return self.stage_dir(stage) / f"{name}.json"

    def save(self, stage: str, name: str, value: BaseModel) -> None:
        write_text(self.artifact(stage, name), value.model_dump_json(indent=2) + "\n")

    def load(self, stage: str, name: str, kind: type[M]) -> M | None:
        """The artifact, or None if it was not written yet."""
        path = self.artifact(stage, name)
        if not path.exists():
            return None
        try:
            return kind.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as error:
            raise RunDirError(
                f"{path}: not a valid {kind.__name__} ({error.errors()[0]['msg']}); delete it or rerun with "
                f"--from-stage {stage}"
            ) from None

    def done(self, stage: str) -> bool:
        return (self.stage_dir(stage) / "DONE").exists()

    def mark_done(self, stage: str) -> None:
        write_text(self.stage_dir(stage) / "DONE", "")

    def reset_from(self, stage: str, keep: Sequence[Path] = ()) -> list[str]:
        """Delete the artifacts of ``stage`` and every later stage (they are recomputed; the LLM cache stays).

        ``keep``: folders that hold answers, never deleted though they lie in a stage's folder (an exchange folder
        named like a stage, ``exchange/checks`` = ``RUN_DIR/checks``, holds the checks writer's answers beside the
        checks stage's artifacts: only the stage's own files, those at the folder's top, go)."""
        start = STAGE_ORDER.index(self.stage_dir(stage).name)
        kept = [path.resolve() for path in keep]
        removed = []
        for later in STAGE_ORDER[start:]:
            folder = self.stage_dir(later)
            if folder.exists():
                _remove_keeping(folder.resolve(), kept)
                removed.append(later)
        return removed

    def write_json(self, name: str, value: object) -> None:
        write_text(self.root / name, json.dumps(value, indent=2, sort_keys=True, default=str) + "\n")

    def completed(self, stages: Sequence[str] = STAGE_ORDER) -> list[str]:
        return [stage for stage in stages if self.done(stage)]


def _remove_keeping(folder: Path, keep: Sequence[Path], stage_folder: bool = True) -> None:
    """Remove ``folder`` but the folders of ``keep`` in it, each whole. A stage's folder that is itself kept (an
    exchange folder named like the stage) loses only its top-level files: the stage's artifacts and the
    ``pending.json`` the run rewrites; its subfolders (the requests and answers) stay."""
    inside = [path for path in keep if path.is_relative_to(folder)]
    if not inside:
        shutil.rmtree(folder)
        return
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            if folder in inside:
                continue
            if any(path.is_relative_to(child) for path in inside):
                _remove_keeping(child, inside, stage_folder=False)
            else:
                shutil.rmtree(child)
        elif stage_folder or folder not in inside:
            child.unlink()


def recorded_config(run_dir: Path) -> Path:
    """The config a run was started or last resumed with (its path is kept in ``run.json``)."""
    try:
        recorded = Path(json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["config_path"])
    except (OSError, ValueError, KeyError):
        raise MantraError(f"{run_dir} does not say which config started it; give --config") from None
    if not recorded.is_file():
        raise MantraError(f"{run_dir} was started with {recorded}, which is gone; give --config") from None
    return recorded
