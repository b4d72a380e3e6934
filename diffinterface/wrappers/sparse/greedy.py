"""Greedy colorings in any vertex order, and the checks that a coloring is valid (written here: asdex
colors in largest-first order only and has no acyclic coloring).

Graphs are the ``(nv, side_ptr, side, other_ptr, other)`` tuples of ``orders.py``.

- :func:`distance2_coloring`: no two vertices two steps apart share a color
  (Gebremedhin, Manne, Pothen 2005, "What color is your Jacobian?",
  Algorithm 3.2): the partial distance-2 coloring of a Jacobian's columns or
  rows, the same algorithm as asdex's (same colors in largest-first order).
- :func:`star_coloring`: a distance-1 coloring in which every path on four
  vertices uses at least three colors (ibid., the simple star coloring: a
  color is forbidden at distance two through an uncolored vertex, or through a
  colored ``w`` when the vertex there has another neighbour of ``w``'s color).
  Every entry of the matrix is then read directly from one product. What
  each ``w`` forbids is kept up to date as vertices get colored, so that a
  dense row or column (a vertex of degree ``n``) costs ``O(n)``, not ``O(n**2)``.
- :func:`acyclic_coloring`: a distance-1 coloring in which any two colors
  induce a forest; a color is refused when it would close a two-colored cycle
  (searched in the two-colored subgraph). Fewer colors than star coloring;
  the entries are then recovered by substitution (``acyclic.py``).
"""

from __future__ import annotations

import numpy as np
from numba import int64, njit
from numba.typed import Dict


@njit(cache=True)
def _smallest_allowed(forbidden, stamp, start):
    """The smallest color from ``start`` not marked ``stamp`` in ``forbidden``."""
    c = start
    while forbidden[c] == stamp:
        c += 1
    return c


@njit(cache=True)
def _distance2_coloring(nv, side_ptr, side, other_ptr, other, order):
    colors = np.full(nv, -1, dtype=np.int64)
    forbidden = np.zeros(nv + 1, dtype=np.int64)
    for step in range(nv):
        v = order[step]
        for p in range(side_ptr[v], side_ptr[v + 1]):
            w = side[p]
            for q in range(other_ptr[w], other_ptr[w + 1]):
                x = other[q]
                if x != v and colors[x] >= 0:
                    forbidden[colors[x]] = step + 1
        colors[v] = _smallest_allowed(forbidden, step + 1, 0)
    return colors


def distance2_coloring(graph, order):
    """One color per vertex (0, 1, ...), no two vertices two steps apart alike."""
    return _distance2_coloring(*graph, order)


@njit(cache=True)
def _forbid_neighbour_colors(ptr, adjacency, colors, v, forbidden, stamp, count):
    """Mark the colors of ``v``'s colored neighbours forbidden and count them."""
    for p in range(ptr[v], ptr[v + 1]):
        w = adjacency[p]
        if w != v and colors[w] >= 0:
            forbidden[colors[w]] = stamp
            count[colors[w]] += 1


@njit(cache=True)
def _insert(table, heads, nexts, values, size, w, c, width):
    """Add color ``c`` to the set of ``w`` (a linked list in ``heads/nexts/values``, membership in
    ``table``); the new size of the storage."""
    key = w * width + c
    if key in table:
        return size
    table[key] = 1
    values[size], nexts[size], heads[w] = c, heads[w], size
    return size + 1


@njit(cache=True)
def _forbid_set(heads, nexts, values, w, forbidden, stamp):
    e = heads[w]
    while e >= 0:
        forbidden[values[e]] = stamp
        e = nexts[e]


@njit(cache=True)
def _star_coloring(nv, ptr, adjacency, order):
    # The colors forbidden to v through a neighbour w are kept per w as vertices get colored, so
    # that a vertex of high degree is not walked again for each of its neighbours:
    # near[w]: the colors of w's colored neighbours (all forbidden when w is uncolored);
    # bad[w]: for a colored w, the colors of its neighbours x having another neighbour of w's color.
    width = nv + 1
    colors = np.full(nv, -1, dtype=np.int64)
    forbidden = np.zeros(nv + 1, dtype=np.int64)
    capacity = len(adjacency) + 1
    near_table, bad_table = Dict.empty(int64, int64), Dict.empty(int64, int64)
    counts, first = (
        Dict.empty(int64, int64),
        Dict.empty(int64, int64),
    )  # per (x, color): how many, the first
    near_heads, bad_heads = np.full(nv, -1, dtype=np.int64), np.full(nv, -1, dtype=np.int64)
    near_nexts, bad_nexts = np.empty(capacity, dtype=np.int64), np.empty(capacity, dtype=np.int64)
    near_values, bad_values = np.empty(capacity, dtype=np.int64), np.empty(capacity, dtype=np.int64)
    near_size = bad_size = 0
    for step in range(nv):
        v, stamp = order[step], step + 1
        for p in range(ptr[v], ptr[v + 1]):
            w = adjacency[p]
            if w == v:
                continue
            if colors[w] >= 0:
                forbidden[colors[w]] = stamp
                _forbid_set(bad_heads, bad_nexts, bad_values, w, forbidden, stamp)
            else:
                _forbid_set(near_heads, near_nexts, near_values, w, forbidden, stamp)
        c = _smallest_allowed(forbidden, stamp, 0)
        colors[v] = c
        for p in range(ptr[v], ptr[v + 1]):
            x = adjacency[p]
            if x == v:
                continue
            near_size = _insert(
                near_table, near_heads, near_nexts, near_values, near_size, x, c, width
            )
            key = x * width + c
            count = counts.get(key, 0) + 1
            counts[key] = count
            if count == 1:
                first[key] = v
            if colors[x] < 0:
                continue
            if (
                count >= 2
            ):  # x has two neighbours colored c: v, and the first one, which learns it now
                bad_size = _insert(
                    bad_table, bad_heads, bad_nexts, bad_values, bad_size, v, colors[x], width
                )
                if count == 2:
                    bad_size = _insert(
                        bad_table,
                        bad_heads,
                        bad_nexts,
                        bad_values,
                        bad_size,
                        first[key],
                        colors[x],
                        width,
                    )
            if counts.get(v * width + colors[x], 0) >= 2:  # v has another neighbour of x's color
                bad_size = _insert(
                    bad_table, bad_heads, bad_nexts, bad_values, bad_size, x, c, width
                )
    return colors


def star_coloring(adjacency, order):
    """Star coloring of the symmetric graph ``adjacency = (nv, ptr, indices)`` (self-loops ignored)."""
    return _star_coloring(*adjacency, order)


@njit(cache=True)
def _connected(ptr, adjacency, colors, start, targets_color, v, c, d, mark, stamp, stack):
    """True when ``start`` reaches another neighbour of ``v`` of color ``d`` in the subgraph colored
    ``c`` or ``d`` (``v`` itself, uncolored, excluded)."""
    top = 0
    stack[0] = start
    mark[start] = stamp
    while top >= 0:
        u = stack[top]
        top -= 1
        for p in range(ptr[u], ptr[u + 1]):
            y = adjacency[p]
            if y == v or mark[y] == stamp or (colors[y] != c and colors[y] != d):
                continue
            if targets_color[y] == stamp:
                return True
            mark[y] = stamp
            top += 1
            stack[top] = y
    return False


@njit(cache=True)
def _acyclic_coloring(nv, ptr, adjacency, order):
    colors = np.full(nv, -1, dtype=np.int64)
    forbidden = np.zeros(nv + 1, dtype=np.int64)
    count = np.zeros(nv + 1, dtype=np.int64)
    mark = np.zeros(nv, dtype=np.int64)
    is_target = np.zeros(nv, dtype=np.int64)
    stack = np.empty(nv, dtype=np.int64)
    searches = 0
    for step in range(nv):
        v, stamp = order[step], step + 1
        _forbid_neighbour_colors(ptr, adjacency, colors, v, forbidden, stamp, count)
        c = 0
        while True:
            c = _smallest_allowed(forbidden, stamp, c)
            # c closes a two-colored cycle when two neighbours of one color d are joined by a c/d
            # path
            closes = False
            for p in range(ptr[v], ptr[v + 1]):
                w = adjacency[p]
                if w == v or colors[w] < 0 or count[colors[w]] < 2:
                    continue
                d = colors[w]
                searches += 1
                for q in range(ptr[v], ptr[v + 1]):
                    y = adjacency[q]
                    if y != w and y != v and colors[y] == d:
                        is_target[y] = searches
                if _connected(ptr, adjacency, colors, w, is_target, v, c, d, mark, searches, stack):
                    closes = True
                    break
            if not closes:
                break
            forbidden[c] = stamp
        colors[v] = c
        for p in range(ptr[v], ptr[v + 1]):
            w = adjacency[p]
            if w != v and colors[w] >= 0:
                count[colors[w]] = 0
    return colors


def acyclic_coloring(adjacency, order):
    """Acyclic coloring of the symmetric graph ``adjacency = (nv, ptr, indices)`` (self-loops ignored)."""
    return _acyclic_coloring(*adjacency, order)


# -- checks --------------------------------------------------------------------------------------


def _pairs_unique(keys):
    return len(np.unique(keys)) == len(keys)


def is_structurally_orthogonal(rows, cols, colors, by="columns"):
    """True when no two columns (``by="rows"``: rows) of one color share a row (a column); ``-1``
    colors (unneeded) are not checked."""
    owner, line = (cols, rows) if by == "columns" else (rows, cols)
    color = colors[owner]
    keep = color >= 0
    width = int(colors.max(initial=0)) + 1
    return _pairs_unique(line[keep].astype(np.int64) * width + color[keep])


def _off_diagonal(rows, cols):
    keep = rows != cols
    return rows[keep].astype(np.int64), cols[keep].astype(np.int64)


def is_star_coloring(rows, cols, colors):
    """True when ``colors`` is a star coloring of the symmetric pattern: distance-1 proper, and for
    every entry ``(i, j)`` one of ``i``, ``j`` is the only vertex of its color next to the other (no
    path on four vertices in two colors)."""
    rows, cols = _off_diagonal(rows, cols)
    if np.any(colors[rows] == colors[cols]):
        return False
    width = int(colors.max(initial=0)) + 1
    keys = rows * width + colors[cols]
    unique, counts = np.unique(keys, return_counts=True)
    alone = lambda k: counts[np.searchsorted(unique, k)] == 1  # noqa: E731
    return bool(np.all(alone(rows * width + colors[cols]) | alone(cols * width + colors[rows])))


def is_acyclic_coloring(rows, cols, colors):
    """True when ``colors`` is an acyclic coloring of the symmetric pattern: distance-1 proper, and
    every two colors induce a forest (edges = vertices - components in each two-colored subgraph)."""
    from scipy.sparse import coo_array
    from scipy.sparse.csgraph import connected_components

    rows, cols = _off_diagonal(rows, cols)
    if np.any(colors[rows] == colors[cols]):
        return False
    upper = rows < cols
    rows, cols = rows[upper], cols[upper]
    low, high = np.minimum(colors[rows], colors[cols]), np.maximum(colors[rows], colors[cols])
    pair = low * (int(colors.max(initial=0)) + 1) + high
    for key in np.unique(pair):
        i, j = rows[pair == key], cols[pair == key]
        vertices, local = np.unique(np.concatenate([i, j]), return_inverse=True)
        k = len(i)
        graph = coo_array((np.ones(k), (local[:k], local[k:])), shape=(len(vertices),) * 2)
        components = connected_components(graph, directed=False)[0]
        if k != len(vertices) - components:
            return False
    return True


def is_valid_coloring(kind, rows, cols, colors):
    """True when ``colors`` is a valid coloring of ``kind`` ("columns", "rows", "symmetric": star,
    "acyclic") of the pattern ``(rows, cols)``."""
    if kind in ("columns", "rows"):
        return is_structurally_orthogonal(rows, cols, colors, by=kind)
    return {"symmetric": is_star_coloring, "acyclic": is_acyclic_coloring}[kind](rows, cols, colors)
