"""``linalg`` of the MLX namespace: MLX's factorizations with the derivatives MLX lacks.

MLX computes ``inv``, ``eigh``, ``cholesky`` and ``svd`` but has no VJP
(nor JVP) for them ("[Primitive::vjp] Not implemented for Inverse"). Each
is given a VJP here, as an ``mx.custom_function`` whose rule is the
textbook one written with MLX operations (so ``mx.compile``, ``mx.vmap``
and a second ``mx.vjp`` trace it): ``inv`` by ``-A^-T G A^-T``; ``eigh``
(of the symmetric part, as JAX's) by first-order perturbation theory;
``cholesky`` by ``L^-T Phi(L^T G) L^-1``; singular values by ``U diag(g) V^T``.
``solve`` and ``matrix_power`` are built on ``inv`` and ``matmul``. MLX
0.32 calls no custom JVP, so forward mode through them is the transpose of
these VJPs (``backends/mlx/recipes.py``).

Examples
--------
>>> import mlx.core as mx
>>> from diffinterface.families.mlx_linalg import inv
>>> a = mx.array([[2.0, 0.0], [0.0, 4.0]])
>>> mx.grad(lambda a: inv(a).sum())(a).tolist()
[[-0.25, -0.125], [-0.125, -0.0625]]
"""

from __future__ import annotations

import mlx.core as mx

_T = mx.matrix_transpose


def _cpu(fn, *args, **options):
    # MLX's factorizations run on its CPU device only
    return fn(*args, **options, stream=mx.cpu)


@mx.custom_function
def inv(a):
    return _cpu(mx.linalg.inv, a)


@inv.vjp
def _inv_vjp(a, cotangent, output):
    return -_T(output) @ cotangent @ _T(output)


def solve(x1, x2, /):
    if x2.ndim == 1:  # a vector right-hand side, as the array API reads a 1-d x2
        return (inv(x1) @ mx.expand_dims(x2, -1))[..., 0]
    return inv(x1) @ x2


def matrix_power(x, n, /):
    if n < 0:
        x, n = inv(x), -n
    result = mx.broadcast_to(mx.eye(x.shape[-1], dtype=x.dtype), x.shape)
    for _ in range(n):
        result = result @ x
    return result


def _gaps(w):
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it."""
    diff = mx.expand_dims(w, -2) - mx.expand_dims(w, -1)
    n = w.shape[-1]
    off = 1 - mx.eye(n, dtype=w.dtype)
    return off / (diff + (1 - off))


def _symmetric(a):
    return (a + _T(a)) / 2


@mx.custom_function
def eigh(a):
    return _cpu(mx.linalg.eigh, _symmetric(a))


@eigh.vjp
def _eigh_vjp(a, cotangents, outputs):
    w, v = outputs
    w_bar, v_bar = cotangents
    inner = mx.expand_dims(w_bar, -1) * mx.eye(w.shape[-1], dtype=w.dtype)
    inner = inner + _gaps(w) * (_T(v) @ v_bar)
    return _symmetric(v @ inner @ _T(v))


@mx.custom_function
def eigvalsh(a):
    # its own function of one output: MLX fails (IndexError) differentiating a VJP of eigh's pair
    return _cpu(mx.linalg.eigvalsh, _symmetric(a))


@eigvalsh.vjp
def _eigvalsh_vjp(a, cotangent, output):
    _, v = _cpu(mx.linalg.eigh, _symmetric(a))
    return _symmetric((v * mx.expand_dims(cotangent, -2)) @ _T(v))


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    return mx.tril(x) - mx.eye(x.shape[-1], dtype=x.dtype) * x / 2


@mx.custom_function
def cholesky(a):
    return _cpu(mx.linalg.cholesky, _symmetric(a))


@cholesky.vjp
def _cholesky_vjp(a, cotangent, output):
    l_inv = inv(output)
    return _symmetric(_T(l_inv) @ _phi(_T(output) @ cotangent) @ l_inv)


def _thin_svd(a):
    u, s, vt = _cpu(mx.linalg.svd, a)
    k = s.shape[-1]
    return u[..., :, :k], s, vt[..., :k, :]


@mx.custom_function
def svdvals(a):
    return _cpu(mx.linalg.svd, a, compute_uv=False)


@svdvals.vjp
def _svdvals_vjp(a, cotangent, output):
    u, _, vt = _thin_svd(a)
    return (u * mx.expand_dims(cotangent, -2)) @ vt


def svd(x, /, *, full_matrices=True):
    """``(U, S, Vh)``; the singular values differentiate (:func:`svdvals`), the vectors do not in MLX."""
    u, _, vt = _cpu(mx.linalg.svd, x)
    if not full_matrices:
        k = min(x.shape[-2:])
        u, vt = u[..., :, :k], vt[..., :k, :]
    return u, svdvals(x), vt


def pinv(x, /, *, rtol=None):
    """The pseudo-inverse of a full-rank ``x`` by normal equations (differentiable through :func:`inv`);
    a rank-deficient ``x`` is refused by name (MLX's own ``pinv`` has no derivative)."""
    if rtol is not None:
        raise NotImplementedError(
            "array_namespace(x).linalg.pinv(rtol=...): the MLX namespace computes full-rank "
            "pseudo-inverses only; use pinv(x) or another backend"
        )
    m, n = x.shape[-2:]
    if m >= n:
        return inv(_T(x) @ x) @ _T(x)
    return _T(x) @ inv(x @ _T(x))


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis``, from products and differences (MLX's own fails to
    differentiate)."""
    a = [mx.take(x1, i, axis=axis) for i in range(3)]
    b = [mx.take(x2, i, axis=axis) for i in range(3)]
    parts = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    return mx.stack(parts, axis=axis)
