"""How AutoFiniteDiff evaluates f: one- or two-argument f, complex steps, through the workers' tape."""

from __future__ import annotations

import numpy as np

from ...families.complex_step import at_complex_points
from .refusals import dropped_imaginary_part


class FiniteDiffEvaluation:
    """The evaluations of f every difference is built from (a mixin of the adapter).

    ``tape`` is None for serial evaluation, or the preparation's tape when the
    selector has ``workers`` (``through_workers.py``): evaluations are then
    collected and run as one batch.
    """

    tape = None

    def _evaluate(self, problem, dtype=None):
        """``evaluate(x, ctx) -> f(x)`` as a fresh numpy array, for one- or two-argument f (through the
        preparation's tape, with workers)."""
        evaluate = self._evaluate_here(problem, dtype)
        if self.tape is None:
            return evaluate
        shape = problem.spec.shape if problem.y is None else problem.y.shape
        default_dtype = problem.spec.dtype if problem.y is None else problem.y.dtype
        return self.tape.taped(evaluate, shape, dtype or default_dtype)

    def _evaluate_here(self, problem, dtype=None):
        f = named = problem.f  # errors name the caller's f, not the wrapper made complex-step safe
        if dtype is not None:  # complex-step points: the one-source namespace continues f there
            f = at_complex_points(f, self.backend.rel_step)
        if problem.y is None:
            if dtype is None:
                return lambda x, ctx: f(x, *ctx)
            backend = repr(self.backend)  # its text: a selector holding an Executor does not pickle

            def evaluate_complex(x, ctx):
                value = np.asarray(f(x, *ctx))
                if value.dtype.kind != "c":
                    raise dropped_imaginary_part(named, backend, value)
                return value

            return evaluate_complex
        shape, y_dtype = problem.y.shape, dtype or problem.y.dtype

        def evaluate(x, ctx):
            buffer = np.zeros(shape, dtype=y_dtype)
            f(buffer, x, *ctx)
            return buffer

        return evaluate

    def _evaluator(self, problem, dtype=None):
        """``evaluate(x, *ctx) -> f(x)``: f itself for a one-argument f, so no frame is added per evaluation."""
        if problem.y is None and dtype is None and self.tape is None:
            return problem.f
        evaluate = self._evaluate(problem, dtype)
        return lambda x, *ctx: evaluate(x, ctx)
