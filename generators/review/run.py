"""What the review app reads from a run directory: its config, tools, excerpts, scenarios and validations."""

from __future__ import annotations

import dataclasses
from functools import cached_property
from pathlib import Path

from mantra_env.case import SolverModes
from mantra_env.domains import load_domain
from mantra_env.errors import MantraError
from mantra_env.generators.artifacts import (
    SamplesArtifact,
    SampleValidation,
    Scenario,
    ScenarioOutcome,
    ScenarioSet,
    ToolRelevance,
)
from mantra_env.generators.config import GenerationConfig, domain_tools, load_config
from mantra_env.generators.document import DocumentGraph
from mantra_env.generators.review.state import SampleReview, load_review, start_review
from mantra_env.generators.rundir import RunDir, recorded_config
from mantra_env.tools import ToolSpec


class ReviewRunError(MantraError, ValueError):
    """The folder is not a run directory the review can open (the message says what is missing)."""


@dataclasses.dataclass
class ReviewRun:
    """A run directory opened for review (``config_path``: the config it was started with, by default the one
    its ``run.json`` names, or ``given_config``)."""

    root: Path
    config_path: Path | None = None
    given_config: GenerationConfig | None = None
    """The config itself (a domain's recording run: its ``generation.yaml`` answered from the recording)."""

    def __post_init__(self) -> None:
        if not self.root.is_dir():
            raise ReviewRunError(
                f"{self.root}: no such run directory (give the folder mantra_env.generators.run printed)"
            )
        if not RunDir(self.root).stage_dir("validation").is_dir():
            raise ReviewRunError(
                f"{self.root} has no validation results yet: run "
                f"`python -m mantra_env.generators.run --resume {self.root}` until its validation stage is done"
            )

    @cached_property
    def config(self) -> GenerationConfig:
        if self.given_config is not None:
            return self.given_config
        try:
            path = self.config_path or recorded_config(self.root)
        except MantraError as error:
            raise ReviewRunError(
                f"{error}; a domain's recording run (what `mantra_env.generators.regenerate DOMAIN --keep DIR` "
                "leaves in DIR/run) opens with `mantra review DOMAIN --keep DIR`"
            ) from None
        return load_config(path)

    @cached_property
    def tools(self) -> list[ToolSpec]:
        return domain_tools(self.config, load_domain(self.config.domain))

    @property
    def bound(self) -> int:
        return self.config.validation.z3_trace_bound

    @property
    def solver_modes(self) -> SolverModes:
        return self.config.validation.solver_modes

    @cached_property
    def _graph(self) -> DocumentGraph | None:
        path = RunDir(self.root).artifact("graph", "graph")
        return DocumentGraph.model_validate_json(path.read_text(encoding="utf-8")) if path.exists() else None

    @cached_property
    def _samples(self) -> dict[str, list[str]]:
        found = RunDir(self.root).load("samples", "samples", SamplesArtifact)
        return {s.id: list(s.node_ids) for s in found.samples} if found else {}

    def excerpt(self, sample_id: str) -> str:
        """What the sample's writers read: its chunks, the chunks they refer to, and the sections whose rules govern
        its tools (``references.governing_rules``, in the sample's relevance artifact)."""
        graph, nodes = self._graph, self._samples.get(sample_id)
        if graph is None or not nodes:
            return "(the excerpt is not in the run directory)"
        relevance = RunDir(self.root).load("relevance", sample_id, ToolRelevance)
        return graph.excerpt(nodes, relevance.governing if relevance is not None else ())

    def sample_ids(self) -> list[str]:
        return sorted(p.stem for p in RunDir(self.root).stage_dir("validation").glob("*.json"))

    def validation(self, sample_id: str) -> SampleValidation:
        found = RunDir(self.root).load("validation", sample_id, SampleValidation)
        if found is None:
            raise ReviewRunError(f"sample {sample_id!r} has no validation result in {self.root}")
        return found

    def scenarios(self, sample_id: str) -> dict[str, Scenario]:
        found = RunDir(self.root).load("scenarios", sample_id, ScenarioSet)
        return {s.id: s for s in found.scenarios} if found else {}

    def review(self, sample_id: str) -> SampleReview:
        """The stored review, or a fresh one of the validation's final artifacts (not written until a change)."""
        return load_review(self.root, sample_id) or start_review(self.validation(sample_id))

    def outcomes(self, sample_id: str) -> list[ScenarioOutcome]:
        return self.validation(sample_id).outcomes
