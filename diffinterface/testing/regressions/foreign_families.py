"""Regression probes: see :mod:`diffinterface.testing.regressions`.

Arrays of another family than x's: a ``Constant`` is converted to x's family
(dtype kept) before f sees it, so f computes in x's family and precision and
the result comes back in x's family; a tangent or cotangent of another
family is refused at preparation with a TypeError naming it (for example
``tangents[0]: expected a numpy array like x; got jax float32 array``).
The other families are those registered whose framework is installed
(:data:`~diffinterface.families.FAMILIES`), whatever the backend.
"""

from __future__ import annotations

import numpy as np

from ...contexts import Constant
from ...families import FAMILIES, array_namespace, dtype_name
from ...operators import gradient, jacobian, pullback, pushforward
from ..probes import BadInput

X = np.array([0.5, 0.8, 1.2])
W = np.array([1.0, 2.0, 3.0])


def _foreign_arrays(a):
    """``a`` in each registered concrete family other than numpy whose framework imports: (family, array)."""
    arrays = []
    for name, family in FAMILIES.items():
        if name == "numpy" or not family.concrete:
            continue
        try:
            arrays.append((name, family.from_dlpack(a)))
        except ImportError:  # that framework is not installed: nothing to probe with it
            continue
    return arrays


def _weighted_squares(x, w):
    return x ** 2 * w


def _weighted_sum(x, w):
    return (x ** 2 * w).sum()


def _sines(x):
    return array_namespace(x).sin(x)


def _foreign_constant(backend, problems, zero):
    for family, w in _foreign_arrays(W):
        problems.expect_result(f"gradient with a {family} Constant at a numpy x",
                               lambda: gradient(_weighted_sum, backend, X, Constant(w)),
                               2 * X * np.asarray(W, dtype=dtype_name(w)), like=X, zero=zero, rtol=1e-6)
        problems.expect_result(f"jacobian with a {family} Constant at a numpy x",
                               lambda: jacobian(_weighted_squares, backend, X, Constant(w)),
                               np.diag(2 * X * np.asarray(W, dtype=dtype_name(w))), like=X, zero=zero, rtol=1e-6)


def _foreign_seeds(backend, problems, zero):
    for family, t in _foreign_arrays(np.ones(3)):
        x = X.astype(dtype_name(t))  # the dtype the other framework gave: only the family differs
        problems.expect_error(f"pushforward with a {family} tangent at a numpy x",
                              lambda: pushforward(_sines, backend, x, (t,)), TypeError,
                              rf"tangents\[0\]: expected a numpy array like x; got {family} ", (x,))
        problems.expect_error(f"pullback with a {family} cotangent at a numpy x",
                              lambda: pullback(_sines, backend, x, (t,)), TypeError,
                              rf"cotangents\[0\]: expected a numpy array like the output y; got {family} ", (x,))


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput("foreign_constant", "a Constant of another family than x's: converted, dtype kept, "
                 "result in x's family", _foreign_constant),
        BadInput("foreign_seeds", "a tangent or cotangent of another family than x's: TypeError naming it",
                 _foreign_seeds),
    ]
