"""Sparse Hessians and Jacobians equal dense ones in every vertex order, a tuple of orders and both
decompressions, on patterns where a row has two neighbours of one colour: there an entry must be read
from the row's own product, never from a column two neighbours share (the star condition)."""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.families import array_namespace
from diffinterface.wrappers.sparse.config import ORDERS

N = 12
RNG = np.random.default_rng(7)


def _patterns():
    """Symmetric couplings: an arrowhead (a hub beside everything), a band, and a random graph."""
    arrow = np.zeros((N, N), bool)
    arrow[0, :] = arrow[:, 0] = True
    band = np.abs(np.subtract.outer(np.arange(N), np.arange(N))) <= 2
    random = RNG.random((N, N)) < 0.25
    return {"arrowhead": arrow, "band": band, "random": random | random.T}


PATTERNS = _patterns()


def _weights(pattern):
    w = np.triu(np.where(pattern, RNG.uniform(0.5, 2.0, pattern.shape), 0.0), 1)
    return w + w.T


def _scalar(weights):
    def f(x):
        xp = array_namespace(x)
        return xp.sum(xp.sin(x)) + 0.5 * xp.sum(x * (xp.asarray(weights) @ (x**2)))

    return f


def _hessian(weights, x):
    # d2/dx_i dx_j of sum_ij x_i w_ij x_j**2 / 2, w symmetric
    h = weights * (x[:, None] + x[None, :])
    h += np.diag(weights @ x - np.sin(x))
    return h


def _vector(weights):
    def f(x):
        xp = array_namespace(x)
        return xp.asarray(weights) @ xp.sin(x) + x**2

    return f


ORDER_CHOICES = [*ORDERS, ("natural", "smallest_last", "random")]


@pytest.mark.parametrize("decompression", ["direct", "substitution"])
@pytest.mark.parametrize("order", ORDER_CHOICES, ids=str)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_sparse_hessians_equal_dense_ones(pattern, order, decompression):
    weights = _weights(PATTERNS[pattern])
    x = RNG.uniform(-1.0, 1.0, N)
    coloring = di.GreedyColoring(order=order, decompression=decompression, seed=3)
    backend = di.AutoSparse(
        di.AutoAutograd(), di.KnownSparsity((weights != 0) | np.eye(N, dtype=bool)), coloring
    )
    got = di.hessian(_scalar(weights), backend, x)
    np.testing.assert_allclose(got.toarray(), _hessian(weights, x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("order", ORDER_CHOICES, ids=str)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_sparse_jacobians_equal_dense_ones(pattern, order):
    weights = _weights(PATTERNS[pattern])
    x = RNG.uniform(-1.0, 1.0, N)
    coloring = di.GreedyColoring(order=order, seed=3)
    known = di.KnownSparsity((weights != 0) | np.eye(N, dtype=bool))
    for dense in (di.AutoAutograd(),):
        got = di.jacobian(_vector(weights), di.AutoSparse(dense, known, coloring), x)
        expected = weights * np.cos(x)[None, :] + np.diag(2 * x)
        np.testing.assert_allclose(got.toarray(), expected, rtol=1e-10, atol=1e-12)
