"""Bounded SMT (Z3) compilation of world models and checks, and the cross-validation queries.

This is the only package that imports Z3. ``Encoding`` builds the SMT-LIB text; ``CaseSolver`` runs the
forward, backward and compliant-witness queries on it.
"""

from mantra_env.smt.encode import Encoding, EncodingError, encode
from mantra_env.smt.queries import (
    DEFAULT_TIMEOUT_MS,
    CaseSolver,
    QueryResult,
    SmtInputError,
    Witness,
    WitnessCall,
)

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "CaseSolver",
    "Encoding",
    "EncodingError",
    "QueryResult",
    "SmtInputError",
    "Witness",
    "WitnessCall",
    "encode",
]
