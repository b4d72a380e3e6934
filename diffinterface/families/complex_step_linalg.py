"""``linalg`` and ``fft`` of numpy's namespace at a complex-step point (:mod:`.complex_step_namespace`).

On complex arrays, numpy's LU-based functions (``det``, ``inv``, ``solve``,
``matrix_power``...) and the products are analytic continuations already and
stay numpy's. ``vecdot``, the norms, ``slogdet`` and ``cholesky`` are written
with analytic operations (numpy's conjugate or take moduli). The
decompositions built from unitary transformations (``eigh``, ``eigvalsh``,
``svd``, ``svdvals``, ``qr``, ``pinv``, ``eig``, ``eigvals``, ``lstsq``,
``cond``, the 2- and nuclear norms) and every Fourier transform of a complex
array refuse by name: their complex results are not the continuation of the
real ones.

    >>> import numpy as np
    >>> z = np.array([[4.0 + 1e-20j, 2.0], [2.0, 3.0]])
    >>> bool(np.allclose(linalg.cholesky(z).real, np.linalg.cholesky(z.real)))
    True
"""

from __future__ import annotations

import math
import types
from collections import namedtuple

import numpy as np

from .complex_step import any_complex, refusal, require_real_values

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


def _abs(z):
    return np.where(z.real < 0, -z, z)


def vecdot(x1, x2, /, *, axis=-1):
    if not any_complex(x1, x2):
        return np.vecdot(x1, x2, axis=axis)
    require_real_values("vecdot", x1)  # numpy conjugates x1
    return np.sum(x1 * x2, axis=axis)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    if not np.iscomplexobj(x):
        return np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    require_real_values("linalg.vector_norm", x)
    reduce = dict(axis=axis, keepdims=keepdims)
    if ord == 2:
        return np.sqrt(np.sum(x * x, **reduce))
    if ord in (math.inf, -math.inf):
        return (np.max if ord > 0 else np.min)(_abs(x), **reduce)
    if ord == 0:
        return np.count_nonzero(x.real, **reduce).astype(x.dtype)
    return np.sum(_abs(x) ** ord, **reduce) ** (1.0 / ord)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    if not np.iscomplexobj(x):
        return np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
    require_real_values("linalg.matrix_norm", x)
    if ord == "fro":
        norm = np.sqrt(np.sum(x * x, axis=(-2, -1)))
    elif ord in (1, -1, math.inf, -math.inf):
        sums = np.sum(_abs(x), axis=-2 if ord in (1, -1) else -1)
        norm = (np.max if ord > 0 else np.min)(sums, axis=-1)
    else:
        raise refusal(
            f"linalg.matrix_norm(ord={ord!r})",
            "it takes singular values, which numpy's complex SVD does not continue",
        )
    return norm[..., None, None] if keepdims else norm


def norm(x, ord=None, axis=None, keepdims=False):
    if not np.iscomplexobj(x):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    if isinstance(axis, tuple) and len(axis) == 2 or axis is None and ord and x.ndim == 2:
        axes = (-2, -1) if axis is None else axis
        result = matrix_norm(np.moveaxis(x, axes, (-2, -1)), ord="fro" if ord is None else ord)
        return np.expand_dims(result, tuple(a % x.ndim for a in axes)) if keepdims else result
    return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)


def slogdet(x, /):
    if not np.iscomplexobj(x):
        return np.linalg.slogdet(x)
    determinant = np.linalg.det(x)
    require_real_values("linalg.slogdet", determinant)
    sign = np.sign(determinant.real).astype(determinant.dtype)
    return SlogdetResult(sign, np.log(_abs(determinant)))


def cholesky(x, /, *, upper=False):
    if not np.iscomplexobj(x):
        return np.linalg.cholesky(x, upper=upper)
    # numpy's complex Cholesky is of a Hermitian matrix (it conjugates); the real one's
    # recurrence, column by column, is its analytic continuation
    (x,) = require_real_values("linalg.cholesky", x)
    n = x.shape[-1]
    lower = np.zeros_like(x)
    for j in range(n):
        row = lower[..., j, :j]
        pivot = np.sqrt(x[..., j, j] - np.sum(row * row, axis=-1))
        lower[..., j, j] = pivot
        below = x[..., j + 1 :, j] - np.sum(lower[..., j + 1 :, :j] * row[..., None, :], axis=-1)
        lower[..., j + 1 :, j] = below / pivot[..., None]
    return np.swapaxes(lower, -1, -2) if upper else lower


def _refused(module, name, why):
    numpy_function = getattr(module, name)

    def refused_on_complex(x, /, *args, **keywords):
        if np.iscomplexobj(x):
            raise refusal(f"{module.__name__.split('.')[-1]}.{name}", why)
        return numpy_function(x, *args, **keywords)

    refused_on_complex.__name__ = name
    return refused_on_complex


_UNITARY = "numpy's complex version is built from unitary transformations (conjugates, moduli)"
_FOURIER = "a Fourier transform of it is genuinely complex, whose real function has no continuation"

linalg = types.ModuleType(__name__ + ".linalg", np.linalg.__doc__)
linalg.__dict__.update(
    {name: value for name, value in vars(np.linalg).items() if not name.startswith("_")}
)
linalg.__dict__.update(
    vecdot=vecdot,
    vector_norm=vector_norm,
    matrix_norm=matrix_norm,
    norm=norm,
    slogdet=slogdet,
    cholesky=cholesky,
    **{
        name: _refused(np.linalg, name, _UNITARY)
        for name in ("eigh", "eigvalsh", "svd", "svdvals", "qr", "pinv", "eig", "eigvals", "lstsq")
    },
    cond=_refused(np.linalg, "cond", _UNITARY),
)

fft = types.ModuleType(__name__ + ".fft", np.fft.__doc__)
fft.__dict__.update(
    {name: value for name, value in vars(np.fft).items() if not name.startswith("_")}
)
fft.__dict__.update(
    {
        name: _refused(np.fft, name, _FOURIER)
        for name in (
            "fft",
            "ifft",
            "fft2",
            "ifft2",
            "fftn",
            "ifftn",
            "rfft",
            "irfft",
            "rfft2",
            "irfft2",
            "rfftn",
            "irfftn",
            "hfft",
            "ihfft",
        )
    }
)
