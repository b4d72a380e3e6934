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
from ...operators import hessian, jacobian, pullback, pushforward
from ..probes import BadInput
from ..tolerances import default_tolerances

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
    tolerances = dict(zip(("rtol", "atol"), default_tolerances(backend, "float64", 1)))
    expected_jacobian = np.einsum("rs,jk->rjsk", np.eye(rows), PERMUTATION)
    problems.expect_result(
        "jacobian of roll along axis=-1",
        lambda: jacobian(rolled, backend, X),
        expected_jacobian,
        like=X,
        zero=zero,
        **tolerances,
    )
    seeds = tuple(np.arange(X.size, dtype=float).reshape(X.shape) * (k + 1) + k for k in range(3))
    for name, call, expected in (
        (
            "pushforward",
            lambda: pushforward(rolled, backend, X, seeds),
            [np.roll(s, 1, axis=-1) for s in seeds],
        ),
        (
            "pullback",
            lambda: pullback(rolled, backend, X, seeds),
            [np.roll(s, -1, axis=-1) for s in seeds],
        ),
    ):
        try:
            results = call()
        except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
            problems.raised(f"{name} of 3 seeds through roll along axis=-1", raised, "a result")
            continue
        for k, (got, want) in enumerate(zip(results, expected)):
            problems.check_result(
                f"{name} {k} of 3 through roll along axis=-1",
                got,
                want,
                like=X,
                zero=zero,
                **tolerances,
            )
    expected_hessian = np.einsum("rs,jk->rjsk", np.eye(rows), np.ones((n, n)) - np.eye(n))
    problems.expect_result(
        "hessian through roll along axis=-1",
        lambda: hessian(neighbour_products, backend, X),
        expected_hessian,
        like=X,
        zero=zero,
        **dict(zip(("rtol", "atol"), default_tolerances(backend, "float64", 2))),
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
