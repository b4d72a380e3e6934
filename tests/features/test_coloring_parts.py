"""The parts the colorings are built of (``orders.py``, ``greedy.py``, ``bicoloring.py``,
``acyclic.py`` in ``wrappers/sparse/``), each on small patterns whose answer is known.

Written against the survivors of a mutation run (docs/testing.md, "Mutation testing"): through a
backend, an order that breaks its promise or a check that accepts too much still gives right values.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from diffinterface.wrappers.sparse import bicoloring
from diffinterface.wrappers.sparse.acyclic import substitution_program
from diffinterface.wrappers.sparse.bicoloring import bicolor, bidirectional_gather
from diffinterface.wrappers.sparse.config import ORDERS
from diffinterface.wrappers.sparse.greedy import (
    is_acyclic_coloring,
    is_star_coloring,
    is_structurally_orthogonal,
    is_valid_coloring,
)
from diffinterface.wrappers.sparse.orders import csr, identity_csr, vertex_order


def _symmetric_graph(edges, n):
    """The ``(nv, side_ptr, side, other_ptr, other)`` graph of an undirected edge list."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    sources = np.concatenate([edges[:, 0], edges[:, 1]])
    targets = np.concatenate([edges[:, 1], edges[:, 0]])
    return (n, *csr(sources, targets, n), *identity_csr(n))


def _neighbours(graph):
    n, ptr, adjacency = graph[:3]
    return [set(adjacency[ptr[v] : ptr[v + 1]].tolist()) - {v} for v in range(n)]


def _random_graph(n, density, seed):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < density, 1)
    return _symmetric_graph(np.argwhere(upper), n)


#: a hub joined to every other vertex, and a path along the others
HUB_AND_PATH = _symmetric_graph(
    [(0, k) for k in range(1, 9)] + [(k, k + 1) for k in range(1, 8)], 9
)
GRAPHS = {
    "hub_and_path": HUB_AND_PATH,
    "random_sparse": _random_graph(40, 0.08, seed=1),
    "random_dense": _random_graph(30, 0.4, seed=2),
    # incidence counts past half the vertices: where a bucket index of twice the count would clip
    "nearly_complete": _random_graph(12, 0.9, seed=0),
}


def test_csr_lists_each_source_targets_in_increasing_order():
    int32 = np.int32  # as a pattern's indices may come: the kernels get int64 whatever they are
    ptr, targets = csr(np.array([2, 0, 2, 0], int32), np.array([1, 3, 0, 2], int32), 4)
    np.testing.assert_array_equal(ptr, [0, 2, 2, 4, 4])
    np.testing.assert_array_equal(targets, [2, 3, 0, 1])
    assert ptr.dtype == targets.dtype == np.int64
    ptr, indices = identity_csr(3)
    np.testing.assert_array_equal(ptr, [0, 1, 2, 3])
    np.testing.assert_array_equal(indices, [0, 1, 2])


@pytest.mark.parametrize("name", list(GRAPHS))
def test_largest_first_is_by_decreasing_degree_ties_by_index(name):
    graph = GRAPHS[name]
    degrees = [len(s) for s in _neighbours(graph)]
    expected = sorted(range(graph[0]), key=lambda v: (-degrees[v], v))
    np.testing.assert_array_equal(vertex_order("largest_first", graph), expected)


def _check_dynamic(order, neighbours, score, pick):
    """Each vertex of ``order`` has the ``pick`` (max or min) ``score`` among those not yet taken."""
    left = set(range(len(neighbours)))
    taken = set()
    for v in order.tolist():
        scores = {u: score(u, left, taken) for u in left}
        assert scores[v] == pick(scores.values()), (v, scores)
        left.remove(v)
        taken.add(v)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_dynamic_orders_keep_their_promise(name):
    graph = GRAPHS[name]
    nb = _neighbours(graph)
    remaining_degree = lambda u, left, taken: len(nb[u] & left)  # noqa: E731
    ordered_neighbours = lambda u, left, taken: len(nb[u] & taken)  # noqa: E731
    _check_dynamic(vertex_order("dynamic_largest_first", graph), nb, remaining_degree, max)
    # smallest_last: removed smallest-degree first, listed in reverse
    _check_dynamic(vertex_order("smallest_last", graph)[::-1], nb, remaining_degree, min)
    _check_dynamic(vertex_order("incidence_degree", graph), nb, ordered_neighbours, max)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_natural_and_random_orders(name):
    graph = GRAPHS[name]
    n = graph[0]
    np.testing.assert_array_equal(vertex_order("natural", graph), np.arange(n))
    drawn = vertex_order("random", graph, seed=4)
    np.testing.assert_array_equal(drawn, np.random.default_rng(4).permutation(n))
    for order in ("natural", "random", "largest_first", "smallest_last", "incidence_degree"):
        got = vertex_order(order, graph, seed=4)
        assert got.dtype == np.int64 and sorted(got.tolist()) == list(range(n))


# -- acyclic.py ------------------------------------------------------------------------------------


def _cycle(n):
    """A cycle's symmetric pattern with its diagonal, row-major sorted."""
    dense = np.eye(n, dtype=bool)
    dense[np.arange(n), (np.arange(n) + 1) % n] = dense[(np.arange(n) + 1) % n, np.arange(n)] = True
    return np.nonzero(dense)


def test_substitution_refuses_a_coloring_with_a_two_colored_cycle():
    rows, cols = _cycle(4)
    with pytest.raises(
        AssertionError, match="^internal error: substitution needs an acyclic coloring$"
    ):
        substitution_program(rows, cols, 4, np.array([0, 1, 0, 1]))


def test_substitution_of_a_long_path_with_int32_indices():
    # 60 000 vertices: an entry's key ``row * n + col`` passes 2**31, beyond int32 indices
    n = 60_000
    H = scipy.sparse.diags(
        [np.full(n - 1, 2.0), np.linspace(1.0, 3.0, n), np.full(n - 1, 2.0)], [-1, 0, 1]
    ).tocsr()
    H.data[:] = np.random.default_rng(6).uniform(1.0, 2.0, H.nnz)
    H = (H + H.T).tocoo()
    order = np.lexsort((H.col, H.row))
    rows, cols = H.row[order].astype(np.int32), H.col[order].astype(np.int32)
    colors = np.arange(n) % 2  # a path: two alternating colors are acyclic
    products = np.stack([H @ (colors == c) for c in (0, 1)])
    solve = substitution_program(rows, cols, n, colors)
    np.testing.assert_allclose(solve(products), H.data[order], rtol=1e-12)


@pytest.mark.parametrize("colors", [[0, 1, 2, 0, 1, 2], [0, 1, 0, 1, 0, 2], [2, 0, 1, 0, 1, 0]])
def test_substitution_solves_a_cycle_from_its_hvps(colors):
    # a 6-cycle: three colors make it acyclic, in any of these placements
    rows, cols = _cycle(6)
    colors = np.array(colors)
    assert is_acyclic_coloring(rows, cols, colors)
    rng = np.random.default_rng(3)
    H = np.zeros((6, 6))
    H[rows, cols] = rng.uniform(1.0, 2.0, len(rows))
    H = np.triu(H) + np.triu(H, 1).T
    seeds = np.stack([colors == c for c in range(colors.max() + 1)]).astype(float)
    products = np.stack([H @ s for s in seeds])
    solve = substitution_program(rows, cols, 6, colors)
    np.testing.assert_allclose(solve(products), H[rows, cols], rtol=1e-12)


# -- bicoloring.py ---------------------------------------------------------------------------------


def _arrowhead(m, n):
    """A dense first row and column beside the diagonal."""
    pattern = np.zeros((m, n), bool)
    pattern[0, :] = pattern[:, 0] = True
    pattern[np.arange(min(m, n)), np.arange(min(m, n))] = True
    return pattern


def _bicolor_and_read_back(pattern, order):
    rows, cols = np.nonzero(pattern)
    column_colors, row_colors, reads_column = bicolor(rows, cols, pattern.shape, order)
    p, q = int(column_colors.max(initial=-1)) + 1, int(row_colors.max(initial=-1)) + 1
    J = np.where(pattern, np.random.default_rng(5).uniform(1.0, 2.0, pattern.shape), 0.0)
    forward = [J @ (column_colors == c) for c in range(p)]
    reverse = [(row_colors == c) @ J for c in range(q)]
    stacked = np.concatenate([np.reshape(forward, -1), np.reshape(reverse, -1)])
    gather = bidirectional_gather(
        rows, cols, pattern.shape, column_colors, row_colors, reads_column
    )
    np.testing.assert_array_equal(stacked[gather], J[rows, cols])
    return p, q


@pytest.mark.parametrize("shape", [(8, 8), (6, 9)])
@pytest.mark.parametrize("order", ["largest_first", "dynamic_largest_first"])
def test_an_arrowhead_takes_two_pushforwards_and_one_pullback(shape, order):
    # the postprocessing keeps first the colors some entry can be read from only one way, then the
    # one serving most undecided entries (columns first on ties): the dense column and the diagonal
    # go to pushforwards, the dense row to one pullback
    assert _bicolor_and_read_back(_arrowhead(*shape), order) == (2, 1)


@pytest.mark.parametrize("order", ["natural", "random"])
def test_an_arrowhead_in_other_orders_takes_four_products(order):
    assert _bicolor_and_read_back(_arrowhead(8, 8), order) == (2, 2)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("shape", [(8, 8), (6, 9), (9, 6)])
def test_every_order_bicolors_an_arrowhead_read_back_right(shape, order):
    # some orders keep no column color at all (pullbacks only): the pullbacks then start at 0
    pattern = _arrowhead(*shape)
    rows, cols = np.nonzero(pattern)
    column_colors, row_colors, _ = bicolor(rows, cols, pattern.shape, order)
    p, q = _bicolor_and_read_back(pattern, order)
    # the colors kept are numbered 0, 1, ... and the others are -1: in no seed
    assert set(column_colors.tolist()) <= {-1, *range(p)} and set(range(p)) <= set(column_colors)
    assert set(row_colors.tolist()) <= {-1, *range(q)} and set(range(q)) <= set(row_colors)


def test_bicolor_refuses_a_coloring_that_is_not_a_star_coloring(monkeypatch):
    # a path column 0 - row 0 - column 1 - row 1 colored 0, 1, 0, 1: proper, but entry (0, 1) is
    # readable neither from column 1's color (column 0 shares it in row 0) nor from row 0's
    monkeypatch.setattr(bicoloring, "star_coloring", lambda graph, order: np.array([0, 0, 1, 1]))
    with pytest.raises(
        AssertionError, match="^internal error: the bicoloring is not a star coloring$"
    ):
        bicolor(np.array([0, 0, 1]), np.array([0, 1, 1]), (2, 2), "natural")


# -- greedy.py: the checks -------------------------------------------------------------------------


def test_structural_orthogonality_is_checked_by_columns_unless_asked_by_rows():
    rows, cols = np.array([0, 0]), np.array([0, 1])  # one row, two columns
    alike = np.array([0, 0])
    assert not is_structurally_orthogonal(rows, cols, alike)  # the two columns share row 0
    assert is_structurally_orthogonal(rows, cols, alike, by="rows")  # one row: nothing to share
    assert is_structurally_orthogonal(rows, cols, np.array([0, -1]))  # -1 (unneeded) is no color


def test_a_star_coloring_is_proper_first():
    # a single edge whose ends share a color: each is "alone" in its color next to the other
    rows, cols = np.array([0, 1]), np.array([1, 0])
    assert not is_star_coloring(rows, cols, np.array([0, 0]))
    assert not is_acyclic_coloring(rows, cols, np.array([0, 0]))
    assert is_star_coloring(rows, cols, np.array([0, 1]))


def test_is_valid_coloring_checks_the_kind_it_is_given():
    rows, cols = np.array([0, 0]), np.array([0, 1])
    assert not is_valid_coloring("columns", rows, cols, np.array([0, 0]))
    assert is_valid_coloring("rows", rows, cols, np.array([0, 0]))
    # a path 0-1-2-3 in two alternating colors: acyclic, not star (a two-colored path on four)
    path = np.eye(4, dtype=bool) | np.eye(4, k=1, dtype=bool) | np.eye(4, k=-1, dtype=bool)
    rows, cols = np.nonzero(path)
    assert is_valid_coloring("acyclic", rows, cols, np.array([0, 1, 0, 1]))
    assert not is_valid_coloring("symmetric", rows, cols, np.array([0, 1, 0, 1]))
    assert is_valid_coloring("symmetric", rows, cols, np.array([0, 1, 2, 0]))
    rows, cols = _cycle(4)
    assert not is_valid_coloring("acyclic", rows, cols, np.array([0, 1, 0, 1]))
