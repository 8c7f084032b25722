"""The answer check of every model stage, by stage name (each :mod:`~mantra_env.generators.stages` record names its
class, which sits beside its stage): the one registry the pipeline's stages build their checks from and
``mantra exchange check`` rebuilds a request's check with, from the ``context`` its request file stores."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from mantra_env.errors import error_path
from mantra_env.generators.answer_repair import AnswerRepairCheck
from mantra_env.generators.checkgen import ChecksCheck
from mantra_env.generators.exchange import ExchangeError
from mantra_env.generators.llm import AnswerCheck
from mantra_env.generators.mutation_audit import MutationAuditCheck
from mantra_env.generators.oracle_arguments import ArgumentsCheck
from mantra_env.generators.references import GoverningCheck, ReferencesCheck
from mantra_env.generators.relevance import RelevanceCheck
from mantra_env.generators.scenarios import ScenarioCheck
from mantra_env.generators.stages import MODEL_STAGES
from mantra_env.generators.validation import RepairCheck
from mantra_env.generators.worldgen import FullPassCheck, SchemaCheck

_CLASSES: dict[str, type[AnswerCheck[Any]]] = {
    kind.__name__: kind
    for kind in (
        ReferencesCheck,
        GoverningCheck,
        RelevanceCheck,
        ScenarioCheck,
        ChecksCheck,
        SchemaCheck,
        FullPassCheck,
        RepairCheck,
        ArgumentsCheck,
        MutationAuditCheck,
        AnswerRepairCheck,
    )
}
ANSWER_CHECKS: dict[str, type[AnswerCheck[Any]]] = {stage.name: _CLASSES[stage.answer] for stage in MODEL_STAGES}
"""Stage name → its answer check class, from each :class:`~mantra_env.generators.stages.Stage` record's ``answer``."""


def rebuild_check(stage: str, context: Any) -> AnswerCheck[BaseModel]:
    """The answer check of ``stage`` from the context a request file stored."""
    kind = ANSWER_CHECKS.get(stage)
    if kind is None:
        raise ExchangeError(f"unknown stage {stage!r} in the request; stages: {', '.join(ANSWER_CHECKS)}")
    try:
        return kind.model_validate(context)
    except ValidationError as error:
        where = error_path(error.errors()[0]["loc"], "(context)")
        raise ExchangeError(
            f"the request's context does not fit stage {stage} at {where}; rerun the pipeline"
        ) from None
