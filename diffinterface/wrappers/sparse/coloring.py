"""Coloring: which products a prepared call runs, and where each entry is read from.

:func:`compress` colors a pattern with asdex (its colorings are ported from
SparseMatrixColorings.jl) and returns a :class:`Compression`: the seeds (one
0/1 vector per color) and, for every entry of the pattern, its position in
the stacked products. Nothing of the coloring is written here.

- ``"columns"``: seeds over x; product ``c`` is ``J @ seed_c`` (a pushforward,
  shaped like f(x)); entry ``(i, j)`` is read at ``(color[j], i)``.
- ``"rows"``: seeds over f(x); product ``c`` is ``seed_c @ J`` (a pullback,
  shaped like x); entry ``(i, j)`` is read at ``(color[i], j)``.
- ``"symmetric"``: star coloring of a Hessian; product ``c`` is ``H @ seed_c``
  (an hvp); entry ``(i, j)`` is read in the product of its star's hub.
"""

from __future__ import annotations

import asdex
import jax.numpy as jnp
import numpy as np

#: our kinds -> asdex's modes
_JACOBIAN_MODES = {"columns": "fwd", "rows": "rev", None: None}


class Compression:
    """A colored pattern ready for compressed evaluation.

    Attributes
    ----------
    kind : str
        "columns", "rows" or "symmetric" (see the module docstring).
    rows, cols : numpy.ndarray
        The pattern's entries (int32), row-major sorted: the CSR order of results.
    shape : tuple
        ``(m, n)`` of the matrix.
    colors : numpy.ndarray
        One color per column, row or variable (-1: not needed).
    ncolors : int
        Number of products per call.
    seeds : numpy.ndarray
        Boolean, ``(ncolors, seed_size)``: row ``c`` is the seed of color ``c``.
    gather : numpy.ndarray
        For each entry, its flat index into the products stacked as ``(ncolors, product_size)``.
    colored : asdex.ColoredPattern
        asdex's object, for its own functions (``asdex.decompress``...).
    """

    def __init__(self, kind, colored, rows, cols, shape):
        self.kind = kind
        self.colored = colored
        self.rows, self.cols, self.shape = rows, cols, shape
        self.colors = np.asarray(colored.colors)
        self.ncolors = int(colored.num_colors)
        self.seeds = self.colors[None, :] == np.arange(self.ncolors)[:, None]
        self.product_size = shape[0] if kind == "columns" else shape[1]
        if kind == "symmetric":
            self.gather = _gather_indices(colored, self.ncolors, self.product_size)
        else:  # entry (i, j) sits in the product of its column's (or row's) color, at i (or j)
            color, position = (self.colors[cols], rows) if kind == "columns" else (self.colors[rows], cols)
            self.gather = color.astype(np.int64) * self.product_size + position

    def __repr__(self):
        return f"<Compression {self.kind}: {self.shape[0]}x{self.shape[1]}, {len(self.rows)} entries, {self.ncolors} colors>"


def _gather_indices(colored, ncolors, product_size):
    """Flat positions of the entries in the stacked products, from asdex's own decompression.

    asdex gathers entries out of a compressed matrix; gathering out of the
    matrix of flat positions gives the positions, through its public API
    (star colorings read each entry in its star's hub: asdex knows where).
    """
    total = ncolors * product_size
    if total >= 2**31:
        raise ValueError(f"the compressed products hold {total} entries; at most 2**31 - 1 are supported")
    positions = jnp.arange(total, dtype=jnp.int32).reshape(ncolors, product_size)
    return np.asarray(asdex.decompress_data(positions, colored)).astype(np.int64)


def compress(rows, cols, shape, kind, algorithm):
    """Color the pattern for ``kind``: "columns", "rows", None (fewer colors of the two) or "symmetric"."""
    pattern = asdex.SparsityPattern.from_coo(rows, cols, shape)
    if kind == "symmetric":
        colored = asdex.hessian_coloring_from_sparsity(pattern, postprocess=algorithm.postprocess)
    else:
        colored = asdex.jacobian_coloring_from_sparsity(pattern, mode=_JACOBIAN_MODES[kind])
        kind = "columns" if colored.mode == "fwd" else "rows"
    return Compression(kind, colored, rows, cols, shape)
