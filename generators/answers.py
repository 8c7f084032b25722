"""The answer check of every LLM stage, by stage name: the one registry the pipeline's stages build their checks
from (each class sits beside its stage) and ``mantra exchange check`` rebuilds a request's
check with, from the ``context`` its request file stores."""

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
from mantra_env.generators.validation import RepairCheck
from mantra_env.generators.worldgen import FullPassCheck, SchemaCheck

ANSWER_CHECKS: dict[str, type[AnswerCheck[Any]]] = {
    "document_extraction": ReferencesCheck,
    "governing_rules": GoverningCheck,
    "tool_relevance": RelevanceCheck,
    "scenario_generation": ScenarioCheck,
    "check_generation": ChecksCheck,
    "smt_schema_prepass": SchemaCheck,
    "smt_full_pass": FullPassCheck,
    "conflict_resolution": RepairCheck,
    "locus_reassessment": RepairCheck,
    "fix_repair": RepairCheck,
    "backward_audit": RepairCheck,
    "oracle_arguments": ArgumentsCheck,
    "mutation_audit": MutationAuditCheck,
    "answer_repair": AnswerRepairCheck,
}


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
