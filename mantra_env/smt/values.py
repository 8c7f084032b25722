"""Reading a Z3 model's values as Python numbers and Booleans, each constant once.

Decoding a witness reads the tool index ``t_i``, the acceptance ``A_i`` and every argument slot of every step, and
the shortening passes read the same constants again. z3py's ``ModelRef.eval`` wraps every answer in Python objects
(reference counting, sort and kind queries) and ``.as_long()`` converts through another wrapper: about 14 µs per
read on ``benchmarks/smt.py``, against 3 µs straight through the C API with the values kept per model.

The values are those of ``model.eval(term, model_completion=True)``, so witnesses decode exactly as before.
"""

from __future__ import annotations

import weakref

import z3
from z3.z3types import Ast


class ModelValues:
    """The values of one model of one context; each term's value is read once (keyed by the term's AST: pass terms
    that outlive the reads, such as a solver's cached constants).

    Args:
        model: the model, held weakly: its caller keeps it alive while reading (see :meth:`of`).
    """

    def __init__(self, model: z3.ModelRef) -> None:
        # A weak reference: holding the model past its query would keep its values' ASTs alive, and which AST ids
        # Z3 hands out next steers its later searches (the array theory's; measured on benchmarks/smt.py's list
        # case: other witnesses), so a model must die when its query's code drops it, as without this cache.
        self._model = weakref.ref(model)
        self._pointer = model.model
        self._ctx = model.ctx.ref()
        self._numbers: dict[int, int] = {}
        self._truths: dict[int, bool] = {}
        self.reads = 0
        """How many terms were evaluated through Z3 (cache misses): a test counts them."""

    def of(self, model: z3.ModelRef) -> bool:
        """Whether these are the values of ``model``."""
        return self._model() is model

    def _eval(self, term: z3.ExprRef, complete: bool) -> Ast:
        out = (Ast * 1)()
        if not z3.Z3_model_eval(self._ctx, self._pointer, term.as_ast(), complete, out):
            raise z3.Z3Exception("failed to evaluate a term in the model")
        self.reads += 1
        return out[0]

    def number(self, term: z3.ArithRef) -> int:
        """The integer value of ``term`` (model completion: an unconstrained constant reads 0)."""
        key = term.ast.value  # z3py's get_id() costs a C call and two wrappers
        found = self._numbers.get(key)
        if found is None:
            # the answer is kept alive by Z3's API trail until the next call, which reads it
            found = self._numbers[key] = int(z3.Z3_get_numeral_string(self._ctx, self._eval(term, True)))
        return found

    def truth(self, term: z3.BoolRef) -> bool:
        """Whether ``term`` is true in the model (model completion: an unconstrained constant reads false)."""
        key = term.ast.value
        found = self._truths.get(key)
        if found is None:
            found = self._truths[key] = z3.Z3_get_bool_value(self._ctx, self._eval(term, True)) == z3.Z3_L_TRUE
        return found
