"""Star bicoloring of a Jacobian's pattern: some columns and some rows colored, each entry read directly.

The pattern's bipartite graph (columns ``0..n-1``, rows ``n..n+m-1``, an edge
per entry) is star colored as one symmetric graph (``greedy.star_coloring``,
Gebremedhin, Manne, Pothen 2005, section 5). A column color then stands for a
compressed pushforward ``J @ seed`` and a row color for a compressed pullback
``seed @ J``; the star condition makes every entry ``(i, j)`` readable
directly from one of them: from its column's product when no other column of
that color meets row ``i``, or from its row's product when no other row of
that color meets column ``j``.

Postprocessing keeps only the colors some entry is read from: colors an
entry can be read from only one way are kept first, then, greedily, the
color that serves most of the entries still undecided (this is how an
arrowhead, a dense row beside a dense column and a diagonal, ends with two
pushforwards and one pullback). Colors left out become ``-1``: those columns or
rows are in no seed.
"""

from __future__ import annotations

import numpy as np

from .greedy import star_coloring
from .orders import csr, identity_csr, vertex_order


def _counts_of(keys):
    """For each key, how often it occurs in ``keys``."""
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return counts[inverse]


def bicolor(rows, cols, shape, order, seed=0):
    """``(column_colors, row_colors, reads_column)``: a postprocessed star bicoloring in ``order``.

    ``reads_column[k]`` is True when entry ``k`` is read from its column's
    pushforward, False when from its row's pullback.
    """
    m, n = shape
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    ends = np.concatenate([cols, n + rows]), np.concatenate([n + rows, cols])
    ptr, adjacency = csr(ends[0], ends[1], n + m)
    graph = (n + m, ptr, adjacency, *identity_csr(n + m))
    colors = star_coloring((n + m, ptr, adjacency), vertex_order(order, graph, seed))
    column_colors, row_colors = colors[:n], colors[n:]
    width = int(colors.max(initial=0)) + 1
    column_ok = _counts_of(rows * width + column_colors[cols]) == 1
    row_ok = _counts_of(cols * width + row_colors[rows]) == 1
    if not np.all(column_ok | row_ok):
        raise AssertionError("internal error: the bicoloring is not a star coloring")
    used_columns = np.zeros(width, dtype=bool)
    used_rows = np.zeros(width, dtype=bool)
    used_columns[column_colors[cols[column_ok & ~row_ok]]] = True
    used_rows[row_colors[rows[row_ok & ~column_ok]]] = True
    while True:
        undecided = (
            column_ok & row_ok & ~used_columns[column_colors[cols]] & ~used_rows[row_colors[rows]]
        )
        if not undecided.any():
            break
        by_column = np.bincount(column_colors[cols[undecided]], minlength=width)
        by_row = np.bincount(row_colors[rows[undecided]], minlength=width)
        if by_column.max() >= by_row.max():
            used_columns[by_column.argmax()] = True
        else:
            used_rows[by_row.argmax()] = True
    reads_column = column_ok & used_columns[column_colors[cols]]
    return (
        _renumbered(column_colors, used_columns),
        _renumbered(row_colors, used_rows),
        reads_column,
    )


def _renumbered(colors, used):
    """The kept colors numbered 0, 1, ... in their order; the others -1."""
    numbers = np.full(len(used) + 1, -1, dtype=np.int64)
    numbers[np.flatnonzero(used)] = np.arange(int(used.sum()))
    return numbers[colors]


def bidirectional_gather(rows, cols, shape, column_colors, row_colors, reads_column):
    """Each entry's flat position in the pushforwards ``(p, m)`` followed by the pullbacks ``(q, n)``."""
    m, n = shape
    p = int(column_colors.max(initial=-1)) + 1
    from_columns = column_colors[cols] * m + rows
    from_rows = p * m + row_colors[rows] * n + cols
    return np.where(reads_column, from_columns, from_rows).astype(np.int64)
