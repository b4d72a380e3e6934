"""Functions with hand-written derivatives, shared by the backend tests (one source for every backend)."""

from __future__ import annotations

import numpy as np

import diffinterface as di


def sin_weighted_sum(x):
    """sum(sin(x) * x**2): a scalar of a vector, with a diagonal Hessian."""
    xp = di.array_namespace(x)
    return xp.sum(xp.sin(x) * x**2)


def sin_weighted_sum_gradient(x):
    return np.cos(x) * x**2 + 2 * x * np.sin(x)


def sin_weighted_sum_hessian_diagonal(x):
    return -np.sin(x) * x**2 + 4 * x * np.cos(x) + 2 * np.sin(x)


def sin_weighted_sum_hessian(x):
    return np.diag(sin_weighted_sum_hessian_diagonal(x))


def coupled(x):
    """sin(x) * sum(x**2): an array of an array with a dense Jacobian."""
    xp = di.array_namespace(x)
    return xp.sin(x) * xp.sum(x**2)


def coupled_jacobian(x):
    return np.diag(np.cos(x) * np.sum(x**2)) + 2 * np.outer(np.sin(x), x)
