"""Second derivative of ``f`` at a scalar ``x``: shaped like ``f(x)``.

    >>> import numpy as np, diffinterface as di
    >>> float(di.second_derivative(np.sin, di.AutoFiniteDiff(), np.pi / 2).round(6))
    -1.0

Fallback (see ``backends/second_order.py``): the outer backend's derivative of
the inner backend's derivative. For ``value_derivative_and_second_derivative``
the outer differentiates ``stack([f(x), derivative])`` in one pass.
"""

from __future__ import annotations

from ..backends.base import Impl
from ..backends.second_order import differentiated_problem
from ._core import FALLBACKS, context_values, prepare, run


def prepare_second_derivative(f, backend, x, *contexts, strict=False):
    """Prepare ``second_derivative`` for ``f`` at a scalar like ``x``."""
    return prepare("second_derivative", f, backend, x, contexts, strict=strict, scalar_x=True)


def second_derivative(f, backend, x, *contexts, prep=None, out=None):
    """``d2f/dx2`` at the scalar ``x``, shaped like ``f(x)``."""
    if prep is not None and prep.fast == "second_derivative" and out is None:
        fn = prep.impl.second_derivative
        return fn(x, *context_values(contexts)) if contexts else fn(x)
    return run("second_derivative", "second_derivative", f, backend, x, contexts, prep, out=out, scalar_x=True)


def value_derivative_and_second_derivative(f, backend, x, *contexts, prep=None, out=None):
    """``(f(x), derivative, second derivative)``; ``out`` is a pair of buffers, None entries allowed."""
    if prep is not None and prep.fast == "second_derivative" and out is None:
        fn = prep.impl.value_derivative_and_second_derivative
        return fn(x, *context_values(contexts)) if contexts else fn(x)
    return run("second_derivative", "value_derivative_and_second_derivative", f, backend, x, contexts, prep,
               out=out, n_values=1, scalar_x=True)


def _second_derivative_fallback(problem):
    derivative = differentiated_problem(problem, "derivative").impl("derivative").derivative
    augmented = differentiated_problem(problem, "derivative", with_value=True).impl("derivative")

    def value_derivative_and_second_derivative(x, *ctx):
        # d/dx [f, f'] = [f', f'']
        value_and_first, first_and_second = augmented.value_and_derivative(x, *ctx)
        return value_and_first[0], value_and_first[1], first_and_second[1]

    return Impl(
        second_derivative=derivative,
        value_derivative_and_second_derivative=value_derivative_and_second_derivative,
    )


FALLBACKS["second_derivative"] = _second_derivative_fallback
