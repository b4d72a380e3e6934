"""The array API's ``linalg`` extension over ``autograd.numpy.linalg``, with derivatives in both modes.

``cholesky``, ``eigh`` and ``eigvalsh`` read the symmetric part ``(x + x.T) / 2``
of their argument, as ``jax.numpy.linalg`` does (``symmetrize_input=True``):
for a symmetric x the value is numpy's, bit for bit, and the derivatives are
the same symmetric matrices in forward and reverse mode. numpy's routines read
one triangle instead, and autograd's own rules follow neither convention in
both modes, so a pushforward along a non-symmetric tangent disagreed with the
pullback.
"""

from __future__ import annotations

import math
from collections import namedtuple

import autograd.numpy as anp
import numpy as np
from autograd.tracer import getval

from . import linalg_rules as rules
from .functions import _axes, _fall_through, astype, broadcast_to, matrix_transpose, vecdot


def _symmetric_part(x):
    return (x + matrix_transpose(x)) / 2


class Linalg:
    """The ``linalg`` extension: formulas written here, the rest from ``autograd.numpy.linalg``."""

    EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
    SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
    SVDResult = namedtuple("SVDResult", "U S Vh")

    matmul = staticmethod(anp.matmul)
    matrix_transpose = staticmethod(matrix_transpose)
    vecdot = staticmethod(vecdot)
    outer = staticmethod(anp.outer)
    det = staticmethod(rules.det)
    inv = staticmethod(rules.inv)

    @staticmethod
    def matrix_rank(x, /, *, rtol=None):
        return np.linalg.matrix_rank(getval(x), rtol=rtol)

    @staticmethod
    def tensordot(x1, x2, /, *, axes=2):
        return anp.tensordot(x1, x2, axes=axes)

    @staticmethod
    def cholesky(x, /, *, upper=False):
        lower = rules.cholesky(_symmetric_part(x))
        return anp.conj(matrix_transpose(lower)) if upper else lower

    @staticmethod
    def cross(x1, x2, /, *, axis=-1):
        return anp.cross(x1, x2, axis=axis)

    @staticmethod
    def diagonal(x, /, *, offset=0):
        """The ``offset`` diagonal of the last two axes (by indexing: autograd's own takes offset 0 only)."""
        rows, columns = getval(x).shape[-2:]
        first_row, first_column = max(0, -offset), max(0, offset)
        length = max(0, min(rows - first_row, columns - first_column))
        return x[
            ...,
            np.arange(first_row, first_row + length),
            np.arange(first_column, first_column + length),
        ]

    @staticmethod
    def trace(x, /, *, offset=0, dtype=None):
        result = anp.sum(Linalg.diagonal(x, offset=offset), axis=-1)
        return result if dtype is None else astype(result, dtype)

    @staticmethod
    def eigh(x, /):
        values, vectors = rules.eigh(_symmetric_part(x))
        return Linalg.EighResult(values, vectors)

    @staticmethod
    def eigvalsh(x, /):
        return rules.eigh(_symmetric_part(x))[0]

    @staticmethod
    def slogdet(x, /):
        """The sign (piecewise constant: no derivative) and ``log|det(x)|`` (differentiable)."""
        return Linalg.SlogdetResult(np.linalg.slogdet(getval(x))[0], rules.logabsdet(x))

    @staticmethod
    def solve(x1, x2, /):
        # the array API treats a 1-d x2 as one vector, an n-d x2 as a stack of matrices
        if anp.ndim(x2) == 1:
            return rules.solve(x1, x2[..., None])[..., 0]
        return rules.solve(x1, x2)

    @staticmethod
    def svd(x, /, *, full_matrices=True):
        u, s, vh = rules.svd(x, full_matrices)
        return Linalg.SVDResult(u, s, vh)

    @staticmethod
    def svdvals(x, /):
        return rules.svdvals(x)

    @staticmethod
    def pinv(x, /, *, rtol=None):
        if rtol is not None:
            raise NotImplementedError(
                "array_namespace(x).linalg.pinv: autograd differentiates pinv with its "
                "default cutoff only; call it without rtol"
            )
        return rules.pinv(x)

    @staticmethod
    def matrix_power(x, n, /):
        """``x`` multiplied by itself ``n`` times (the inverse's powers for negative ``n``)."""
        if n < 0:
            x, n = rules.inv(x), -n
        if n == 0:
            return broadcast_to(np.eye(getval(x).shape[-1], dtype=getval(x).dtype), getval(x).shape)
        result = x
        for _ in range(n - 1):
            result = anp.matmul(result, x)
        return result

    @staticmethod
    def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
        """The ``ord``-norm over ``axis`` (all axes for ``None``)."""
        magnitude = anp.abs(x)
        axes = _axes(axis, anp.ndim(x))
        if ord == 2:
            return anp.sqrt(anp.sum(anp.real(x * anp.conj(x)), axis=axes, keepdims=keepdims))
        if ord == math.inf:
            return anp.max(magnitude, axis=axes, keepdims=keepdims)
        if ord == -math.inf:
            return anp.min(magnitude, axis=axes, keepdims=keepdims)
        if ord == 0:
            nonzero = np.sum(getval(x) != 0, axis=axes, keepdims=keepdims)
            return nonzero.astype(getval(magnitude).dtype)
        return anp.sum(magnitude**ord, axis=axes, keepdims=keepdims) ** (1.0 / ord)

    @staticmethod
    def matrix_norm(x, /, *, keepdims=False, ord="fro"):
        """The ``ord``-norm of the matrices in the last two axes."""
        if ord == "fro":
            result = anp.sqrt(anp.sum(anp.real(x * anp.conj(x)), axis=(-2, -1)))
        elif ord == "nuc":
            result = anp.sum(Linalg.svdvals(x), axis=-1)
        elif ord in (2, -2):
            values = Linalg.svdvals(x)
            result = anp.max(values, axis=-1) if ord == 2 else anp.min(values, axis=-1)
        elif ord in (1, -1, math.inf, -math.inf):
            sums = anp.sum(anp.abs(x), axis=-2 if ord in (1, -1) else -1)
            result = anp.max(sums, axis=-1) if ord > 0 else anp.min(sums, axis=-1)
        else:
            raise ValueError(
                f"linalg.matrix_norm: ord: expected 'fro', 'nuc', 1, -1, 2, -2, inf or -inf; got {ord!r}"
            )
        return result[..., None, None] if keepdims else result

    def __getattr__(self, name):
        return _fall_through(name, anp.linalg, np.linalg, "linalg.")
