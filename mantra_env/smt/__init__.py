"""Bounded SMT (Z3) compilation of world models and checks, and the cross-validation queries.

This is the only package that imports Z3. ``Encoding`` builds the SMT-LIB text; ``CaseSolver`` runs the
forward, backward and compliant-witness queries on it, in the ``"refusal"`` mode (default: a call the world
model does not allow is refused and leaves the state unchanged) or the paper's (``"paper"``).
"""

from mantra_env.smt.encode import Encoding, EncodingError, encode
from mantra_env.smt.implied import implied_checks
from mantra_env.smt.queries import (
    DEFAULT_MODE,
    DEFAULT_TIMEOUT_MS,
    MODES,
    Alternative,
    CaseSolver,
    Mode,
    QueryResult,
    SmtInputError,
    Witness,
    WitnessCall,
)

__all__ = [
    "DEFAULT_MODE",
    "DEFAULT_TIMEOUT_MS",
    "MODES",
    "Alternative",
    "CaseSolver",
    "Encoding",
    "EncodingError",
    "Mode",
    "QueryResult",
    "SmtInputError",
    "Witness",
    "WitnessCall",
    "encode",
    "implied_checks",
]
