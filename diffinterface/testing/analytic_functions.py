"""The kit's test functions with their derivatives written by hand: the value, the Jacobian and,
where a scenario needs it, the Hessian of each, at the point given.

Functions are written against the array API (``xp = di.array_namespace(x)``),
so every backend can trace them. At the end, plain functions (``sin_weighted_sum``, ``coupled``,
``rosenbrock``) with their derivatives as separate functions, for tests that call them directly.

    >>> import numpy as np
    >>> f, value, jac = vector_to_vector(np.array([1.0, 2.0]), 3)[:3]
    >>> np.allclose(f(np.array([1.0, 2.0])), value)
    True
"""

from __future__ import annotations

import numpy as np

from ..families import array_namespace


def const(values, dtype):
    return np.asarray(values, dtype=dtype)


def scalar_to_scalar(x):
    """f(x) = sin(x) * x."""

    def f(x):
        xp = array_namespace(x)
        return xp.sin(x) * x

    value = np.sin(x) * x
    d = np.cos(x) * x + np.sin(x)
    d2 = 2 * np.cos(x) - x * np.sin(x)
    return f, value, d, d2


def scalar_to_array(x, shape):
    """f(x) = sin(a * x) with a closed-over constant a of the output's shape."""
    a = const(np.arange(1, 1 + int(np.prod(shape))).reshape(shape) / 2.0, x.dtype)

    def f(x):
        xp = array_namespace(x)
        return xp.sin(xp.asarray(a) * x)

    value = np.sin(a * x)
    d = a * np.cos(a * x)
    d2 = -(a**2) * np.sin(a * x)
    return f, value, d, d2


def array_to_scalar(x):
    """f(x) = log(sum(exp(x))) + sum(sin(x)): a Hessian with off-diagonal terms."""

    def f(x):
        xp = array_namespace(x)
        return xp.log(xp.sum(xp.exp(x))) + xp.sum(xp.sin(x))

    value = np.log(np.sum(np.exp(x))) + np.sum(np.sin(x))
    p = np.exp(x) / np.sum(np.exp(x))
    grad = p + np.cos(x)
    pf = p.reshape(-1)
    hess = (np.diag(pf) - np.outer(pf, pf) - np.diag(np.sin(x).reshape(-1))).reshape(
        x.shape + x.shape
    )
    return f, value, grad, hess


def vector_to_vector(x, m):
    """f(x) = M @ sin(x) with a closed-over (m, n) matrix M."""
    n = x.shape[0]
    M = const((np.arange(m * n).reshape(m, n) % 5 - 1.5) / 2.0, x.dtype)

    def f(x):
        xp = array_namespace(x)
        return xp.matmul(xp.asarray(M), xp.sin(x))

    return f, M @ np.sin(x), M * np.cos(x)[None, :]


def vector_to_matrix(x):
    """f(x)[i, j] = x[i] * sin(x[j])."""
    n = x.shape[0]

    def f(x):
        xp = array_namespace(x)
        return xp.reshape(x, (n, 1)) * xp.reshape(xp.sin(x), (1, n))

    value = np.outer(x, np.sin(x))
    eye = np.eye(n, dtype=x.dtype)
    jac = np.einsum("ik,j->ijk", eye, np.sin(x)) + np.einsum("i,jk,j->ijk", x, eye, np.cos(x))
    return f, value, jac


def matrix_to_vector(x):
    """f(X)[i] = sum_j w[j] * sin(X[i, j]) with closed-over weights w."""
    rows, cols = x.shape
    w = const(np.linspace(0.5, 2.0, cols), x.dtype)

    def f(x):
        xp = array_namespace(x)
        return xp.sum(xp.sin(x) * xp.asarray(w), axis=1)

    value = np.sum(np.sin(x) * w, axis=1)
    jac = np.einsum("ik,kl->ikl", np.eye(rows, dtype=x.dtype), w[None, :] * np.cos(x))
    return f, value, jac


def matrix_to_matrix(x):
    """f(X) = B @ sin(X) with a closed-over (3, rows) matrix B."""
    rows, cols = x.shape
    B = const((np.arange(3 * rows).reshape(3, rows) - 2.0) / 3.0, x.dtype)

    def f(x):
        xp = array_namespace(x)
        return xp.matmul(xp.asarray(B), xp.sin(x))

    value = B @ np.sin(x)
    jac = np.einsum("ik,jl,kl->ijkl", B, np.eye(cols, dtype=x.dtype), np.cos(x))
    return f, value, jac


# functions with a Constant context: f(x, c)


def scalar_with_context(x):
    """f(x, c) = sin(c * x) with a Python float Constant c."""

    def f(x, c):
        xp = array_namespace(x)
        return xp.sin(c * x)

    c = 1.5
    return f, (c,), np.sin(c * x), c * np.cos(c * x), -(c**2) * np.sin(c * x)


def gradient_with_context(x):
    """f(x, w) = sum(w * x**3) / 3 with an array Constant w."""
    w = const(np.linspace(-1.0, 2.0, x.size).reshape(x.shape), x.dtype)

    def f(x, w):
        xp = array_namespace(x)
        return xp.sum(xp.asarray(w) * x**3) / 3

    value = np.sum(w * x**3) / 3
    grad = w * x**2
    hess = np.diag((2 * w * x).reshape(-1)).reshape(x.shape + x.shape)
    return f, (w,), value, grad, hess


def jacobian_with_context(x, m):
    """f(x, M) = M @ sin(x) with the matrix M passed as a Constant."""
    n = x.shape[0]
    M = const((np.arange(m * n).reshape(m, n) % 3 - 0.5), x.dtype)

    def f(x, M):
        xp = array_namespace(x)
        return xp.matmul(xp.asarray(M), xp.sin(x))

    return f, (M,), M @ np.sin(x), M * np.cos(x)[None, :]


# plain functions and their derivatives, for tests that call them directly (one definition of each
# for the kit, this project's tests and a backend's own)


def sin_weighted(x):
    """f(x) = sin(x) * x**2, entry by entry: an array of an array with a diagonal Jacobian.

    Its derivative, entry by entry, is :func:`sin_weighted_sum_gradient`; its second derivative
    :func:`sin_weighted_sum_hessian_diagonal`.
    """
    xp = array_namespace(x)
    return xp.sin(x) * x**2


def sin_weighted_sum(x):
    """f(x) = sum(sin(x) * x**2): a scalar of an array, with a diagonal Hessian."""
    xp = array_namespace(x)
    return xp.sum(xp.sin(x) * x**2)


def sin_weighted_sum_gradient(x):
    """The gradient of :func:`sin_weighted_sum` (numpy)."""
    return np.cos(x) * x**2 + 2 * x * np.sin(x)


def sin_weighted_sum_hessian_diagonal(x):
    """The diagonal of the Hessian of :func:`sin_weighted_sum` (numpy)."""
    return -np.sin(x) * x**2 + 4 * x * np.cos(x) + 2 * np.sin(x)


def sin_weighted_sum_hessian(x):
    """The Hessian of :func:`sin_weighted_sum` at a vector x (numpy)."""
    return np.diag(sin_weighted_sum_hessian_diagonal(x))


def coupled(x):
    """f(x) = sin(x) * sum(x**2): an array of an array with a dense Jacobian."""
    xp = array_namespace(x)
    return xp.sin(x) * xp.sum(x**2)


def coupled_jacobian(x):
    """The Jacobian of :func:`coupled` at a vector x (numpy)."""
    return np.diag(np.cos(x) * np.sum(x**2)) + 2 * np.outer(np.sin(x), x)


def rosenbrock(x):
    """The extended Rosenbrock function of a vector: minimum 0 at x = (1, ..., 1)."""
    xp = array_namespace(x)
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_gradient(x):
    """The gradient of :func:`rosenbrock` (numpy)."""
    g = np.zeros_like(x)
    g[:-1] += -2 * (1 - x[:-1]) - 400 * x[:-1] * (x[1:] - x[:-1] ** 2)
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return g


def rosenbrock_hessian(x):
    """The Hessian of :func:`rosenbrock` (numpy, float64)."""
    n = len(x)
    h = np.zeros((n, n))
    i = np.arange(n - 1)
    h[i, i] += 2 + 1200 * x[:-1] ** 2 - 400 * x[1:]
    h[i + 1, i + 1] += 200
    h[i, i + 1] = h[i + 1, i] = -400 * x[:-1]
    return h
