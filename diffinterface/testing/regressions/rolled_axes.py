"""Regression probes: see :mod:`diffinterface.testing.regressions`.

``roll`` along a negative axis has the right Jacobian, pullbacks,
pushforwards and Hessian. TensorFlow's ``pfor`` (behind ``tape.jacobian`` and
``tf.vectorized_map``) adds 1 to a roll's axis for the batch dimension, so
``axis=-1`` became axis 0, the seeds: rows of the Jacobian came back
permuted, without an error (native TensorFlow does the same). A fuzz campaign
found it; the TensorFlow backend now runs such a sweep as a loop of single
seeds.

    >>> import diffinterface as di
    >>> from diffinterface.testing.probes import run_probes
    >>> run_probes(probes(), di.AutoAutograd()).found
    []
"""

from __future__ import annotations

import numpy as np

from ...families import array_namespace
from ..probes import BadInput
from ..tolerances import default_tolerances
from ._sweeps import expect_right_sweeps

X = np.array([[1.04, 0.84, -1.31], [0.3, -0.7, 0.5]])
#: each entry of a row moves one place to the right: y[r, j] = x[r, j - 1]
PERMUTATION = np.roll(np.eye(3), 1, axis=0)


def rolled(x):
    return array_namespace(x).roll(x, 1, axis=-1)


def neighbour_products(x):
    """``sum(x[r, j - 1] * x[r, j])``: with 3 columns, every pair of a row's entries once."""
    xp = array_namespace(x)
    return xp.sum(xp.roll(x, 1, axis=-1) * x)


def _rolled_axes(backend, problems, zero):
    rows, n = X.shape
    # the same seeds both ways: roll keeps x's shape
    seeds = tuple(np.arange(X.size, dtype=float).reshape(X.shape) * (k + 1) + k for k in range(3))
    expect_right_sweeps(
        problems,
        backend,
        zero,
        f=rolled,
        x=X,
        expected_jacobian=np.einsum("rs,jk->rjsk", np.eye(rows), PERMUTATION),
        tangents=seeds,
        cotangents=seeds,
        scalar_f=neighbour_products,
        expected_hessian=np.einsum("rs,jk->rjsk", np.eye(rows), np.ones((n, n)) - np.eye(n)),
        through="through roll along axis=-1",
        tolerances=lambda order, expected: dict(
            zip(("rtol", "atol"), default_tolerances(backend, "float64", order))
        ),
    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "roll-negative-axis",
            "the Jacobian, pullbacks, pushforwards and Hessian through roll along "
            "axis=-1 are right (TensorFlow's vectorized sweeps rolled the seeds instead)",
            _rolled_axes,
        ),
    ]
