"""Vertex orders for the greedy colorings (written here: asdex offers largest-first only).

A graph is given as two CSR adjacency structures, ``side`` (the vertices to
color -> their neighbours) and ``other`` (those neighbours -> their own
neighbours): the neighbours of a vertex ``v`` in the graph that is colored
are the vertices two steps away, ``v -> w -> x``. For a Jacobian's columns,
``side`` is column -> rows and ``other`` row -> columns (two columns are
neighbours when they share a row); for a symmetric pattern (a Hessian, or
the bipartite graph of a bicoloring), ``side`` is the adjacency and
``other`` the identity, so that the neighbours are the adjacent vertices.

=========================  ========================================================
order                      vertices in the order
=========================  ========================================================
``natural``                0, 1, 2, ...
``largest_first``          by decreasing degree (ties by index)
``smallest_last``          the reverse of repeatedly removing a vertex of smallest
                           degree in what remains
``incidence_degree``       repeatedly the vertex with most neighbours already ordered
``dynamic_largest_first``  repeatedly the vertex of largest degree in what remains
``random``                 a permutation drawn from ``numpy.random.default_rng(seed)``
=========================  ========================================================

The dynamic orders keep the vertices in buckets by degree (doubly linked
lists), so each costs about one sweep over the neighbourhoods.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: how a degree-bucket order picks and updates: (pick the largest bucket?, reverse at the end?); a
#: departing vertex lowers its remaining neighbours' degrees by one
_DYNAMIC = {"smallest_last": (False, True), "dynamic_largest_first": (True, False)}


def csr(sources, targets, size):
    """``(indptr, indices)`` of the adjacency ``sources[k] -> targets[k]`` over ``size`` sources (int64)."""
    sources = np.asarray(sources, dtype=np.int64)
    targets = np.asarray(targets, dtype=np.int64)
    order = np.lexsort((targets, sources))
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(sources, minlength=size), out=indptr[1:])
    return indptr, targets[order]


def identity_csr(size):
    """The CSR of ``v -> v``: as ``other``, it makes the two-step neighbours the adjacent vertices."""
    return np.arange(size + 1, dtype=np.int64), np.arange(size, dtype=np.int64)


@njit(cache=True)
def _degrees(nv, side_ptr, side, other_ptr, other):
    """Number of distinct two-step neighbours of each vertex (a timestamp marks those counted)."""
    seen = np.zeros(nv, dtype=np.int64)
    degrees = np.zeros(nv, dtype=np.int64)
    for v in range(nv):
        for p in range(side_ptr[v], side_ptr[v + 1]):
            w = side[p]
            for q in range(other_ptr[w], other_ptr[w + 1]):
                x = other[q]
                if x != v and seen[x] != v + 1:
                    seen[x] = v + 1
                    degrees[v] += 1
    return degrees


@njit(cache=True)
def _dynamic_order(nv, side_ptr, side, other_ptr, other, degrees, pick_largest, change):
    """Vertices in the order they leave degree buckets (largest or smallest first), each departure
    changing its remaining neighbours' degrees by ``change``."""
    top = nv + 1
    head = np.full(top + 1, -1, dtype=np.int64)
    after = np.full(nv, -1, dtype=np.int64)
    before = np.full(nv, -1, dtype=np.int64)
    degree = degrees.copy()
    for v in range(nv - 1, -1, -1):  # pushed in reverse so that each bucket lists by index
        d = degree[v]
        after[v] = head[d]
        if head[d] >= 0:
            before[head[d]] = v
        head[d] = v
    done = np.zeros(nv, dtype=np.bool_)
    seen = np.zeros(nv, dtype=np.int64)
    order = np.empty(nv, dtype=np.int64)
    current = top if pick_largest else 0
    for k in range(nv):
        if pick_largest:
            while head[current] < 0:
                current -= 1
        else:
            while head[current] < 0:
                current += 1
        v = head[current]
        head[current] = after[v]
        if after[v] >= 0:
            before[after[v]] = -1
        done[v] = True
        order[k] = v
        for p in range(side_ptr[v], side_ptr[v + 1]):
            w = side[p]
            for q in range(other_ptr[w], other_ptr[w + 1]):
                x = other[q]
                if done[x] or seen[x] == k + 1:
                    continue
                seen[x] = k + 1
                d = degree[x]
                # unlink x from bucket d, relink it in bucket d + change
                if before[x] >= 0:
                    after[before[x]] = after[x]
                else:
                    head[d] = after[x]
                if after[x] >= 0:
                    before[after[x]] = before[x]
                d = min(max(d + change, 0), top)
                degree[x] = d
                before[x] = -1
                after[x] = head[d]
                if head[d] >= 0:
                    before[head[d]] = x
                head[d] = x
                if pick_largest and d > current:
                    current = d
                if not pick_largest and d < current:
                    current = d
    return order


def vertex_order(name, graph, seed=0):
    """The vertices of ``graph = (nv, side_ptr, side, other_ptr, other)`` in the order ``name`` (see the module docstring)."""
    nv = graph[0]
    if name == "natural":
        return np.arange(nv, dtype=np.int64)
    if name == "random":
        return np.random.default_rng(seed).permutation(nv).astype(np.int64)
    if name == "incidence_degree":
        return _dynamic_order(*graph, np.zeros(nv, dtype=np.int64), True, 1)
    degrees = _degrees(*graph)
    if name == "largest_first":
        return np.argsort(-degrees, kind="stable").astype(np.int64)
    pick_largest, reverse = _DYNAMIC[name]
    order = _dynamic_order(*graph, degrees, pick_largest, -1)
    return order[::-1].copy() if reverse else order
