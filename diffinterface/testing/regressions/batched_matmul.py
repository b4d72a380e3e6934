"""Regression probes: see :mod:`diffinterface.testing.regressions`.

A matmul of batch 1 in f, ``(1, 4, n) @ (1, n, 4)`` in float32, has the
right Jacobian, pullbacks, pushforwards and Hessian. Vectorizing a sweep over
it (TensorFlow's ``pfor``, behind ``tape.jacobian`` and
``tf.vectorized_map``) makes the batched matmul ``(seeds, 1, 4, 4) @ (1, 4, n)``,
which TensorFlow 2.21's oneDNN kernel computes wrongly: entries of 1e35, or a
heap corruption that aborts the process. A fuzz campaign found it; the
TensorFlow backend now runs such a sweep as a loop of single seeds.

Without that route the probe could abort the test process, not merely fail:
it only ever runs the fixed route, and the TensorFlow backend's own tests
check, in the traced graphs and without running them, that no such matmul is
left (``tests/backends/test_regressions_batched_matmul.py``).

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

#: one row of 8 entries: x's four copies make v of shape (1, 4, 8), and y = v @ v^T of shape (1, 4,
#: 4)
X = np.array([[-0.9, 0.34, 1.43, 0.2, -0.61, 0.77, -0.05, 0.48]], dtype=np.float32)
#: three seeds: a sweep of several (a single seed is not vectorized)
SEEDS = 3


def stacked_product(x):
    """``v @ v^T`` with ``v`` four copies of x's row, of shape (1, 4, n): every entry is ``sum(x**2)``."""
    xp = array_namespace(x)
    rows = xp.stack([x, x], axis=1)
    v = xp.concat([rows, rows], axis=1)
    return xp.matmul(v, xp.matrix_transpose(v))


def sine_of_stacked_product(x):
    xp = array_namespace(x)
    return xp.sum(xp.sin(stacked_product(x)))


def _expected(x):
    x = x.astype(np.float64)[0]
    squares = float(np.sum(x**2))
    jacobian_expected = np.broadcast_to(2 * x, (1, 4, 4, 1, x.size))
    # sum over the 16 equal entries of sin(sum(x**2))
    hessian_expected = 16 * (
        -np.sin(squares) * 4 * np.outer(x, x) + np.cos(squares) * 2 * np.eye(x.size)
    )
    return jacobian_expected, hessian_expected.reshape(1, x.size, 1, x.size)


def _tolerances(backend, order, expected):
    """``(rtol, atol)``: the kit's float32 tolerances, with ``atol`` relative to the largest expected entry
    (finite differences err by a fraction of the result's scale, not of each entry's); 1e35 fails either way."""
    rtol, atol = default_tolerances(backend, "float32", order)
    rtol = max(
        rtol, 1e-4
    )  # float32 sums of squares and their sine: a few units of float32 rounding
    return {"rtol": rtol, "atol": max(atol, rtol * float(np.abs(expected).max()))}


def _batched_matmul(backend, problems, zero):
    jacobian_expected, hessian_expected = _expected(X)
    expect_right_sweeps(
        problems,
        backend,
        zero,
        f=stacked_product,
        x=X,
        expected_jacobian=jacobian_expected,
        tangents=tuple(np.eye(X.size, dtype=np.float32)[k].reshape(X.shape) for k in range(SEEDS)),
        cotangents=tuple(np.full((1, 4, 4), k, dtype=np.float32) for k in range(1, SEEDS + 1)),
        scalar_f=sine_of_stacked_product,
        expected_hessian=hessian_expected,
        through="through a batched matmul of batch 1 (float32)",
        tolerances=lambda order, expected: _tolerances(backend, order, expected),
    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "batched-matmul-batch-one",
            "the Jacobian, pullbacks, pushforwards and Hessian through a float32 "
            "matmul of batch 1 are right (vectorized, TensorFlow's oneDNN kernel gave 1e35 or aborted)",
            _batched_matmul,
        ),
    ]
