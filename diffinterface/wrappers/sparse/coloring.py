"""Coloring: which products a prepared call runs, and where each entry is read from.

:func:`compress` colors a pattern and returns a :class:`Compression`: the
seeds (one 0/1 vector per color) and, for every entry of the pattern, its
position in the stacked products (or, for substitution, the program solving
for it). In largest-first order, column, row and star colorings are asdex's
(its colorings are ported from SparseMatrixColorings.jl); other orders,
bicolorings and acyclic colorings are this folder's (``orders.py``,
``greedy.py``, ``bicoloring.py``, ``acyclic.py``).

- ``"columns"``: seeds over x; product ``c`` is ``J @ seed_c`` (a pushforward,
  shaped like f(x)); entry ``(i, j)`` is read at ``(color[j], i)``.
- ``"rows"``: seeds over f(x); product ``c`` is ``seed_c @ J`` (a pullback,
  shaped like x); entry ``(i, j)`` is read at ``(color[i], j)``.
- ``"symmetric"``: star coloring of a Hessian; product ``c`` is ``H @ seed_c``
  (an hvp); entry ``(i, j)`` is read in the product of its star's hub.
- ``"acyclic"``: acyclic coloring of a Hessian; the entries are solved for
  from the hvps (``acyclic.py``).
- ``"bidirectional"``: star bicoloring of a Jacobian (``MixedMode``): ``p``
  pushforwards over column seeds, then ``q`` pullbacks over row seeds; entry
  ``(i, j)`` is read in its column's or its row's product.
"""

from __future__ import annotations

import numpy as np

from ...backends import asdex
from .acyclic import substitution_program
from .bicoloring import bicolor, bidirectional_gather
from .greedy import acyclic_coloring, distance2_coloring, star_coloring
from .orders import csr, identity_csr, vertex_order


class Compression:
    """A colored pattern ready for compressed evaluation.

    Attributes
    ----------
    kind : str
        "columns", "rows", "symmetric", "acyclic" or "bidirectional" (see the module docstring).
    rows, cols : numpy.ndarray
        The pattern's entries (int32), row-major sorted: the CSR order of results.
    shape : tuple
        ``(m, n)`` of the matrix.
    colors : numpy.ndarray
        One color per column, row or variable (-1: not needed); a bicoloring's column colors.
    row_colors : numpy.ndarray or None
        A bicoloring's row colors (-1: not needed).
    ncolors : int
        Number of products per call.
    seeds : numpy.ndarray
        Boolean, ``(ncolors, seed_size)``: row ``c`` is the seed of color ``c`` (a bicoloring's column seeds).
    row_seeds : numpy.ndarray or None
        A bicoloring's row seeds, ``(q, m)``.
    gather : numpy.ndarray or None
        For each entry, its flat index into the products stacked as ``(ncolors, product_size)``
        (a bicoloring's: the pushforwards' then the pullbacks'); None for substitution.
    solve : callable or None
        Substitution: ``solve(stacked products as numpy) -> entries`` (numpy).
    colored : asdex.ColoredPattern or None
        asdex's object when asdex colored the pattern.
    """

    def __init__(
        self,
        kind,
        rows,
        cols,
        shape,
        colors,
        *,
        colored=None,
        row_colors=None,
        gather=None,
        solve=None,
    ):
        self.kind, self.rows, self.cols, self.shape = kind, rows, cols, shape
        self.colored, self.solve = colored, solve
        self.colors = np.asarray(colors)
        self.row_colors = row_colors
        self.seeds = _seeds(self.colors)
        self.row_seeds = None if row_colors is None else _seeds(row_colors)
        self.ncolors = len(self.seeds) + (0 if row_colors is None else len(self.row_seeds))
        self.product_size = shape[0] if kind in ("columns", "bidirectional") else shape[1]
        if (
            gather is None and solve is None
        ):  # entry (i, j): in its column's (or row's) product, at i (or j)
            color, position = (
                (self.colors[cols], rows) if kind == "columns" else (self.colors[rows], cols)
            )
            gather = color.astype(np.int64) * self.product_size + position
        self.gather = gather

    def __repr__(self):
        return f"<Compression {self.kind}: {self.shape[0]}x{self.shape[1]}, {len(self.rows)} entries, {self.ncolors} colors>"


def _seeds(colors):
    return colors[None, :] == np.arange(int(colors.max(initial=-1)) + 1)[:, None]


def _star_gather(rows, cols, n, colors):
    """Direct reading of a star coloring: ``(i, j)`` from column ``j``'s product at ``i`` when ``j`` is the
    only one of its color next to ``i``, else from ``i``'s product at ``j`` (the star condition)."""
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    width = int(colors.max(initial=0)) + 1
    keys = rows * width + colors[cols]
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    alone = counts[inverse] == 1
    return np.where(alone, colors[cols] * n + rows, colors[rows] * n + cols)


def _fewest(candidates):
    """The candidate (a tuple whose first item is its number of colors) with the fewest colors, the first of equals."""
    return min(candidates, key=lambda candidate: candidate[0])


def _symmetric_graph(rows, cols, n):
    off = rows != cols
    ptr, adjacency = csr(rows[off], cols[off], n)
    return (n, ptr, adjacency), (n, ptr, adjacency, *identity_csr(n))


def _bipartite_graph(rows, cols, shape, side):
    m, n = shape
    by_column, by_row = csr(cols, rows, n), csr(rows, cols, m)
    return (n, *by_column, *by_row) if side == "columns" else (m, *by_row, *by_column)


def _one_sided(rows, cols, shape, kind, algorithm):
    candidates = []
    for order in algorithm.orders:
        if (
            order == "largest_first"
        ):  # asdex's is the same algorithm (kind None: its choice of side)
            ncolors, side, colors, colored = asdex.one_sided_coloring(rows, cols, shape, kind)
            candidates.append((ncolors, len(candidates), side, colors, colored))
            continue
        for side in ("columns", "rows") if kind is None else (kind,):
            graph = _bipartite_graph(rows, cols, shape, side)
            colors = distance2_coloring(graph, vertex_order(order, graph, algorithm.seed))
            candidates.append(
                (int(colors.max(initial=-1)) + 1, len(candidates), side, colors, None)
            )
    _, _, side, colors, colored = _fewest(candidates)
    return Compression(side, rows, cols, shape, colors, colored=colored)


def _symmetric(rows, cols, shape, algorithm):
    n = shape[0]
    adjacency, graph = _symmetric_graph(rows, cols, n)
    candidates = []
    for order in algorithm.orders:
        if algorithm.decompression == "substitution":
            colors = acyclic_coloring(adjacency, vertex_order(order, graph, algorithm.seed))
            candidates.append((int(colors.max(initial=-1)) + 1, len(candidates), colors, None))
        elif order == "largest_first":
            count, colors, colored = asdex.star_coloring(rows, cols, shape, algorithm.postprocess)
            candidates.append((count, len(candidates), colors, colored))
        else:
            colors = star_coloring(adjacency, vertex_order(order, graph, algorithm.seed))
            candidates.append((int(colors.max(initial=-1)) + 1, len(candidates), colors, None))
    ncolors, _, colors, colored = _fewest(candidates)
    if algorithm.decompression == "substitution":
        return Compression(
            "acyclic", rows, cols, shape, colors, solve=substitution_program(rows, cols, n, colors)
        )
    # Any star coloring is read by the star rule (_star_gather, numpy); asdex's own reading is
    # needed only after its postprocessing (vertices it leaves without a color), and it runs an
    # eager JAX gather that compiles once per shape: the first preparation at each size paid it.
    gather = (
        asdex.gather_positions(colored, ncolors, n)
        if colored is not None and algorithm.postprocess
        else _star_gather(rows, cols, n, colors)
    )
    return Compression("symmetric", rows, cols, shape, colors, colored=colored, gather=gather)


def _bidirectional(rows, cols, shape, algorithm):
    candidates = []
    for order in algorithm.orders:
        column_colors, row_colors, reads_column = bicolor(rows, cols, shape, order, algorithm.seed)
        total = int(column_colors.max(initial=-1)) + int(row_colors.max(initial=-1)) + 2
        candidates.append((total, len(candidates), column_colors, row_colors, reads_column))
    _, _, column_colors, row_colors, reads_column = _fewest(candidates)
    gather = bidirectional_gather(rows, cols, shape, column_colors, row_colors, reads_column)
    return Compression(
        "bidirectional", rows, cols, shape, column_colors, row_colors=row_colors, gather=gather
    )


def compress(rows, cols, shape, kind, algorithm):
    """Color the pattern for ``kind``: "columns", "rows", None (fewer colors of the two), "symmetric"
    (a Hessian: star or, with ``decompression="substitution"``, acyclic) or "bidirectional"."""
    if kind == "symmetric":
        return _symmetric(rows, cols, shape, algorithm)
    if kind == "bidirectional":
        return _bidirectional(rows, cols, shape, algorithm)
    return _one_sided(rows, cols, shape, kind, algorithm)
