"""Linear-algebra primitives with derivative rules in both modes.

``autograd.numpy.linalg`` gives ``det``, ``inv``, ``slogdet``, ``solve``,
``cholesky``, ``eigh``, ``svd`` and ``pinv`` reverse-mode rules only: their
pushforwards raise ``NotImplementedError: JVP of ... not defined``. The
primitives here have both. Their rules are written with differentiable
functions (these primitives and ``autograd.numpy``'s), so a derivative of a
derivative stays exact; where autograd's own reverse rule is right it is
reused. The singular vectors of ``svd`` have no forward rule: their
pushforward raises an error naming the way around it.

    >>> import numpy as np, autograd
    >>> from diffinterface.families.autograd_namespace import linalg_rules as rules
    >>> a = np.array([[2.0, 1.0], [0.0, 3.0]])
    >>> autograd.make_jvp(rules.det)(a)(np.eye(2))[1]   # det(a) trace(inv(a)): 6 (1/2 + 1/3)
    np.float64(5.0)
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
from autograd.core import primitive_vjps
from autograd.extend import defjvp, defvjp, defvjp_argnums, primitive
from autograd.tracer import getval

from ...errors import UnsupportedError


def _t(a):
    return anp.swapaxes(a, -1, -2)


def _add2d(a):
    """``a`` with two trailing axes of size 1 (a scalar per matrix, broadcast over the matrix)."""
    return anp.reshape(a, anp.shape(a) + (1, 1))


def _unbroadcast(g, shape):
    """``g`` summed over the leading axes that broadcasting against another operand added."""
    while anp.ndim(g) > len(shape):
        g = anp.sum(g, axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and anp.shape(g)[axis] != 1:
            g = anp.sum(g, axis=axis, keepdims=True)
    return g


def _eye_like(a, n):
    """The identity of size ``n`` in ``a``'s dtype (a float64 one would promote float32 tangents)."""
    return np.eye(n, dtype=getval(a).dtype)


@primitive
def inv(a):
    return np.linalg.inv(a)


defvjp(inv, lambda ans, a: lambda g: -anp.matmul(anp.matmul(_t(ans), g), _t(ans)))
defjvp(inv, lambda g, ans, a: -anp.matmul(anp.matmul(ans, g), ans))


def _trace_of_inverse_times(a, g):
    """``trace(inv(a) @ g)`` for each matrix of the stacks."""
    return anp.sum(_t(inv(a)) * g, axis=(-2, -1))


@primitive
def det(a):
    return np.linalg.det(a)


defvjp(det, lambda ans, a: lambda g: _add2d(g * ans) * _t(inv(a)))
defjvp(det, lambda g, ans, a: ans * _trace_of_inverse_times(a, g))


@primitive
def logabsdet(a):
    """``log|det(a)|``: slogdet's differentiable part (its sign is piecewise constant)."""
    return np.linalg.slogdet(a)[1]


defvjp(logabsdet, lambda ans, a: lambda g: _add2d(g) * _t(inv(a)))
defjvp(logabsdet, lambda g, ans, a: _trace_of_inverse_times(a, g))


@primitive
def solve(a, b):
    """``inv(a) @ b`` for a stack of matrices ``b`` (``b.ndim >= 2``), broadcasting the stacks."""
    return np.linalg.solve(a, b)


defvjp(
    solve,
    lambda ans, a, b: lambda g: _unbroadcast(-anp.matmul(solve(_t(a), g), _t(ans)), anp.shape(a)),
    lambda ans, a, b: lambda g: _unbroadcast(solve(_t(a), g), anp.shape(b)),
)
defjvp(solve, lambda g, ans, a, b: -solve(a, anp.matmul(g, ans)), lambda g, ans, a, b: solve(a, g))


@primitive
def cholesky(a):
    return np.linalg.cholesky(a)


def _cholesky_jvp(g, ans, a):
    # dL = L phi(inv(L) dA inv(L)^T), phi: the lower triangle with its diagonal halved
    inverse = inv(ans)
    inner = anp.matmul(anp.matmul(inverse, g), _t(inverse))
    n = anp.shape(ans)[-1]
    return anp.matmul(ans, anp.tril(inner) - 0.5 * inner * _eye_like(ans, n))


defvjp_argnums(cholesky, primitive_vjps[anp.linalg.cholesky])
defjvp(cholesky, _cholesky_jvp)


@primitive
def eigh(a):
    """The eigenvalues and eigenvectors of the symmetric matrices ``a``, as a tuple."""
    return tuple(np.linalg.eigh(a))


def _eigh_jvp(g, ans, a):
    values, vectors = ans
    rotated = anp.matmul(anp.matmul(_t(vectors), g), vectors)
    n = anp.shape(values)[-1]
    gaps = values[..., None, :] - values[..., :, None]
    off_diagonal = 1.0 - _eye_like(values, n)
    # 1 / (w_j - w_i) off the diagonal; the diagonal's gap 0 is replaced by 1 and masked away
    factors = off_diagonal / (gaps + _eye_like(values, n))
    return anp.sum(rotated * _eye_like(values, n), axis=-1), anp.matmul(vectors, factors * rotated)


defvjp_argnums(eigh, primitive_vjps[anp.linalg.eigh])
defjvp(eigh, _eigh_jvp)


@primitive
def svdvals(a):
    return np.linalg.svd(a, compute_uv=False)


def _singular_vectors(a):
    # this module's svd: differentiable in reverse mode, refused by name in forward mode
    left, _, right = svd(a, False)
    return left, right


def _svdvals_vjp(ans, a):
    left, right = _singular_vectors(a)
    return lambda g: anp.matmul(left * g[..., None, :], right)


def _svdvals_jvp(g, ans, a):
    left, right = _singular_vectors(a)
    return anp.sum(left * anp.matmul(g, _t(right)), axis=-2)


defvjp(svdvals, _svdvals_vjp)
defjvp(svdvals, _svdvals_jvp)


@primitive
def svd(a, full_matrices=True):
    return tuple(np.linalg.svd(a, full_matrices=full_matrices))


def _svd_jvp(g, ans, a, full_matrices=True):
    raise UnsupportedError(
        "array_namespace(x).linalg.svd: autograd has no forward-mode derivative for the singular vectors; "
        "use linalg.svdvals for the singular values alone, reverse mode (di.gradient, di.pullback, "
        "di.jacobian), or another backend (di.AutoJAX(), di.AutoTorch())"
    )


defvjp_argnums(svd, primitive_vjps[anp.linalg.svd])
defjvp(svd, _svd_jvp)


@primitive
def pinv(a):
    return np.linalg.pinv(a)


def _pinv_jvp(g, ans, a):
    # d pinv(A) = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P
    rows, columns = anp.shape(a)[-2:]
    g_t = _t(g)
    return (
        -anp.matmul(anp.matmul(ans, g), ans)
        + anp.matmul(
            anp.matmul(anp.matmul(ans, _t(ans)), g_t), _eye_like(a, rows) - anp.matmul(a, ans)
        )
        + anp.matmul(
            anp.matmul(_eye_like(a, columns) - anp.matmul(ans, a), g_t), anp.matmul(_t(ans), ans)
        )
    )


defvjp_argnums(pinv, primitive_vjps[anp.linalg.pinv])
defjvp(pinv, _pinv_jvp)
