"""mantra-env: procedural manuals turned into machine-checkable compliance benchmarks for tool-using agents.

Public API of the core: the check language (:mod:`mantra_env.checks`), traces, cases and suites, tool specs.
"""

from mantra_env.case import Case, CaseCheck, Provenance, Scenario, Suite, SuiteManifest, ValidationRecord
from mantra_env.errors import MantraError
from mantra_env.registration import register_shipped_suites
from mantra_env.tools import ToolSpec
from mantra_env.trace import ToolCall, ToolError, Trace

register_shipped_suites()

__all__ = [
    "Case",
    "CaseCheck",
    "MantraError",
    "Provenance",
    "Scenario",
    "Suite",
    "SuiteManifest",
    "ToolCall",
    "ToolError",
    "ToolSpec",
    "Trace",
    "ValidationRecord",
]
