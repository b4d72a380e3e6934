"""Decompression by substitution: a Hessian's entries from the hvps of an acyclic coloring.

With seeds ``s_c`` (the indicator of color ``c``), product ``c`` at ``u`` is
``B[c, u] = sum of H[u, k] over the k of color c`` (``H[u, u]`` alone when
``c`` is ``u``'s color: the coloring is proper). When any two colors induce a
forest, these equations can be solved one unknown at a time: an equation
``(u, c)`` with one unknown entry left gives it, which may leave another
equation with one unknown (peeling the two-colored trees from their leaves;
Gebremedhin, Tarafdar, Manne, Pothen 2009, "Efficient computation of sparse
Hessians using coloring and automatic differentiation").

:func:`substitution_program` finds that order once, at preparation; the
returned ``solve(products) -> entries`` replays it on every call (numba, on
host arrays).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _peel(nedges, equation_of_edge, equation_ptr, equation_edges):
    """The order in which edges are solved, and for each the equation giving it."""
    nequations = len(equation_ptr) - 1
    unknown = np.empty(nequations, dtype=np.int64)
    queue = np.empty(nequations + 2 * nedges, dtype=np.int64)
    tail = 0
    for q in range(nequations):
        unknown[q] = equation_ptr[q + 1] - equation_ptr[q]
        if unknown[q] == 1:
            queue[tail] = q
            tail += 1
    known = np.zeros(nedges, dtype=np.bool_)
    step_edge = np.empty(nedges, dtype=np.int64)
    step_equation = np.empty(nedges, dtype=np.int64)
    steps = 0
    head = 0
    while head < tail:
        q = queue[head]
        head += 1
        if unknown[q] != 1:
            continue
        for p in range(equation_ptr[q], equation_ptr[q + 1]):
            e = equation_edges[p]
            if not known[e]:
                break
        known[e] = True
        unknown[q] = 0
        step_edge[steps], step_equation[steps] = e, q
        steps += 1
        for side in range(2):
            other = equation_of_edge[e, side]
            if other != q:
                unknown[other] -= 1
                if unknown[other] == 1:
                    queue[tail] = other
                    tail += 1
    return step_edge[:steps], step_equation[:steps]


@njit(cache=True)
def _substitute(
    products,
    step_edge,
    step_position,
    equation_ptr,
    equation_edges,
    step_equation,
    entry_edge,
    entry_position,
):
    solved = np.zeros(len(step_edge), dtype=products.dtype)
    for s in range(len(step_edge)):
        e, q = step_edge[s], step_equation[s]
        total = products[step_position[s]]
        for p in range(equation_ptr[q], equation_ptr[q + 1]):
            other = equation_edges[p]
            if other != e:
                total -= solved[other]
        solved[e] = total
    data = np.empty(len(entry_edge), dtype=products.dtype)
    for k in range(len(entry_edge)):
        data[k] = products[entry_position[k]] if entry_edge[k] < 0 else solved[entry_edge[k]]
    return data


def substitution_program(rows, cols, n, colors):
    """``solve(products) -> entries``: the pattern's entries (in its order) from the stacked hvps
    ``(ncolors, n)``, flattened, as a numpy array. Raises AssertionError when ``colors`` is not acyclic."""
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    ncolors = int(colors.max(initial=-1)) + 1
    upper = rows < cols
    edge_u, edge_k = rows[upper], cols[upper]  # one unknown per symmetric pair
    nedges = len(edge_u)
    # the two equations of each edge: row u at k's color, row k at u's color
    keys = np.stack([edge_u * ncolors + colors[edge_k], edge_k * ncolors + colors[edge_u]], axis=1)
    unique_keys, equation_of_edge = np.unique(keys, return_inverse=True)
    equation_of_edge = equation_of_edge.reshape(nedges, 2)
    flat_equations = equation_of_edge.reshape(-1)
    order = np.argsort(flat_equations, kind="stable")
    equation_edges = (np.arange(2 * nedges) // 2)[order]
    equation_ptr = np.zeros(len(unique_keys) + 1, dtype=np.int64)
    np.cumsum(np.bincount(flat_equations, minlength=len(unique_keys)), out=equation_ptr[1:])
    step_edge, step_equation = _peel(nedges, equation_of_edge, equation_ptr, equation_edges)
    if len(step_edge) != nedges:
        raise AssertionError("internal error: substitution needs an acyclic coloring")
    vertex, color = unique_keys // ncolors, unique_keys % ncolors
    step_position = (color * n + vertex)[step_equation]
    # each entry: its edge, or (diagonal) its own product position
    edge_keys = edge_u * n + edge_k  # sorted: the pattern is row-major sorted
    edge_index = np.searchsorted(edge_keys, np.minimum(rows, cols) * n + np.maximum(rows, cols))
    edge_index[rows == cols] = -1
    entry_position = colors[rows] * n + rows

    def solve(products):
        return _substitute(
            np.ascontiguousarray(products).reshape(-1),
            step_edge,
            step_position,
            equation_ptr,
            equation_edges,
            step_equation,
            edge_index,
            entry_position,
        )

    return solve
