"""Colorings beyond asdex: vertex orders, star bicoloring (MixedMode), acyclic coloring with substitution.

Every coloring is checked structurally valid with the checks of
``diffinterface/wrappers/sparse/greedy.py``, which are themselves checked to
reject invalid colorings.
"""

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.sparse import to_dense_numpy
from diffinterface.wrappers.sparse.config import ORDERS
from diffinterface.wrappers.sparse.greedy import (
    acyclic_coloring,
    distance2_coloring,
    is_acyclic_coloring,
    is_star_coloring,
    is_structurally_orthogonal,
    star_coloring,
)
from diffinterface.wrappers.sparse.orders import csr, identity_csr, vertex_order


def random_pattern(n, density, seed):
    rng = np.random.default_rng(seed)
    dense = rng.random((n, n)) < density
    dense[np.arange(n), rng.integers(0, n, n)] = True  # no empty row
    return np.nonzero(dense)


def column_graph(rows, cols, shape):
    m, n = shape
    return (n, *csr(cols, rows, n), *csr(rows, cols, m))


def row_graph(rows, cols, shape):
    m, n = shape
    return (m, *csr(rows, cols, m), *csr(cols, rows, n))


def symmetric(rows, cols, n):
    both = np.unique(np.concatenate([rows * n + cols, cols * n + rows, np.arange(n) * (n + 1)]))
    return both // n, both % n


def adjacency(rows, cols, n):
    off = rows != cols
    ptr, indices = csr(rows[off], cols[off], n)
    return (n, ptr, indices), (n, ptr, indices, *identity_csr(n))


def arrowhead(x):
    xp = di.array_namespace(x)
    return xp.concat([xp.reshape(xp.sum(xp.sin(x)), (1,)), x[1:] ** 2 + x[0] * x[1:]])


def arrowhead_jacobian(x):
    J = np.diag(np.concatenate([[0.0], 2 * x[1:] + x[0]]))
    J[0] = np.cos(x)
    J[1:, 0] += x[1:]
    J[0, 0] = np.cos(x[0])
    return J


# -- the checks reject what they must ------------------------------------------------------------


def test_checks_reject_invalid_colorings():
    rows, cols = np.array([0, 0, 1]), np.array([0, 1, 1])
    assert is_structurally_orthogonal(rows, cols, np.array([0, 1]))
    assert not is_structurally_orthogonal(rows, cols, np.array([0, 0]))
    assert not is_structurally_orthogonal(rows, cols, np.array([0, 0]), by="rows")
    # a path 0-1-2-3 colored 0, 1, 0, 1: proper and acyclic, not a star coloring (a two-colored P4)
    path = symmetric(np.array([0, 1, 2]), np.array([1, 2, 3]), 4)
    alternating = np.array([0, 1, 0, 1])
    assert is_acyclic_coloring(*path, alternating) and not is_star_coloring(*path, alternating)
    assert is_star_coloring(*path, np.array([0, 1, 2, 0]))
    # a 4-cycle in two colors is proper but neither acyclic nor star; a repeated neighbour color is improper
    cycle = symmetric(np.array([0, 1, 2, 3]), np.array([1, 2, 3, 0]), 4)
    assert not is_acyclic_coloring(*cycle, alternating) and not is_star_coloring(
        *cycle, alternating
    )
    assert not is_acyclic_coloring(*path, np.array([0, 0, 1, 2]))


# -- orders --------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ORDERS)
def test_every_order_colors_a_random_pattern_validly(order):
    rows, cols = random_pattern(3000, 0.002, seed=1)
    shape = (3000, 3000)
    for graph, by in (
        (column_graph(rows, cols, shape), "columns"),
        (row_graph(rows, cols, shape), "rows"),
    ):
        ordering = vertex_order(order, graph)
        assert sorted(ordering.tolist()) == list(range(3000)), "an order is a permutation"
        assert is_structurally_orthogonal(rows, cols, distance2_coloring(graph, ordering), by=by)
    srows, scols = symmetric(rows, cols, 3000)
    adj, graph = adjacency(srows, scols, 3000)
    ordering = vertex_order(order, graph)
    assert is_star_coloring(srows, scols, star_coloring(adj, ordering))
    assert is_acyclic_coloring(srows, scols, acyclic_coloring(adj, ordering))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_largest_first_colors_as_asdex(seed):
    import asdex

    for shape, density in (((300, 200), 0.02), ((200, 300), 0.05)):
        rng = np.random.default_rng(seed)
        rows, cols = np.nonzero(rng.random(shape) < density)
        pattern = asdex.SparsityPattern.from_coo(rows, cols, shape)
        for graph, mode in (
            (column_graph(rows, cols, shape), "fwd"),
            (row_graph(rows, cols, shape), "rev"),
        ):
            ours = distance2_coloring(graph, vertex_order("largest_first", graph))
            theirs = asdex.jacobian_coloring_from_sparsity(pattern, mode=mode)
            assert ours.max() + 1 == theirs.num_colors
            np.testing.assert_array_equal(ours, np.asarray(theirs.colors))


def reference_star_coloring(n, rows, cols, order):
    """The simple star coloring written plainly: a color is forbidden at distance two through an
    uncolored vertex, or through a colored w when the vertex there has another neighbour of w's color."""
    neighbours = [set() for _ in range(n)]
    for i, j in zip(rows.tolist(), cols.tolist()):
        if i != j:
            neighbours[i].add(j)
            neighbours[j].add(i)
    colors = [-1] * n
    for v in order.tolist():
        forbidden = {colors[w] for w in neighbours[v] if colors[w] >= 0}
        for w in neighbours[v]:
            for x in neighbours[w] - {v}:
                if colors[x] < 0:
                    continue
                if colors[w] < 0 or any(colors[y] == colors[w] for y in neighbours[x] - {w}):
                    forbidden.add(colors[x])
        colors[v] = min(set(range(len(forbidden) + 1)) - forbidden)
    return np.array(colors)


@pytest.mark.parametrize("seed", range(6))
def test_star_coloring_equals_its_plain_definition(seed):
    n = 120
    rows, cols = symmetric(*random_pattern(n, 0.03 + 0.01 * seed, seed), n)
    if seed % 2:  # a dense row and column: the vertex whose neighbours are kept up to date
        rows, cols = symmetric(
            np.concatenate([rows, np.zeros(n, int)]), np.concatenate([cols, np.arange(n)]), n
        )
    adj, graph = adjacency(rows, cols, n)
    for order in ORDERS:
        ordering = vertex_order(order, graph, seed)
        ours = star_coloring(adj, ordering)
        np.testing.assert_array_equal(
            ours, reference_star_coloring(n, rows, cols, ordering), err_msg=order
        )
        assert is_star_coloring(rows, cols, ours)


def test_random_order_is_seeded():
    rows, cols = random_pattern(500, 0.01, seed=3)
    graph = column_graph(rows, cols, (500, 500))
    np.testing.assert_array_equal(
        vertex_order("random", graph, 5), vertex_order("random", graph, 5)
    )
    assert not np.array_equal(vertex_order("random", graph, 5), vertex_order("random", graph, 6))


def random_linear_map(n, seed):
    from scipy.sparse import csr_array

    rows, cols = random_pattern(n, 0.002, seed)
    weights = csr_array(
        (np.random.default_rng(seed).normal(size=len(rows)), (rows, cols)), shape=(n, n)
    )
    return weights, (lambda x: weights @ np.sin(x)), (rows, cols)


def test_tuple_of_orders_keeps_the_fewest_and_values_equal_the_jacobian():
    weights, f, (rows, cols) = random_linear_map(3000, seed=4)
    x = np.linspace(0.1, 2.0, 3000)
    expected = weights.toarray() * np.cos(x)
    known = di.KnownSparsity(weights)
    counts = {}
    for order in (*ORDERS, ORDERS):
        backend = di.AutoSparse(di.AutoFiniteDiff(), known, di.GreedyColoring(order=order, seed=2))
        prep = di.prepare_jacobian(f, backend, x)
        counts[order] = di.ncolors(prep)
        assert is_structurally_orthogonal(
            rows, cols, di.coloring(prep).colors, by=di.coloring(prep).kind
        )
        np.testing.assert_allclose(
            di.jacobian(f, backend, x, prep=prep).toarray(),
            expected,
            rtol=1e-7,
            atol=1e-9,
            err_msg=str(order),
        )
    assert counts[ORDERS] == min(counts[order] for order in ORDERS)


@pytest.mark.parametrize(
    "build",
    [
        lambda: di.GreedyColoring(order="fastest"),
        lambda: di.GreedyColoring(order=()),
        lambda: di.GreedyColoring(order=("natural", "bogus")),
        lambda: di.GreedyColoring(order=["natural"]),
    ],
    ids=["unknown", "empty-tuple", "unknown-in-tuple", "list"],
)
def test_invalid_orders_name_order(build):
    with pytest.raises(
        ValueError, match=r"GreedyColoring\(order=\.\.\.\) expected one of .*natural"
    ):
        build()


def test_invalid_decompression_and_seed_are_named():
    with pytest.raises(ValueError, match="decompression"):
        di.GreedyColoring(decompression="star")
    with pytest.raises(TypeError, match="seed"):
        di.GreedyColoring(seed=1.5)
    with pytest.raises(TypeError, match="reverse_backend"):
        di.MixedMode(di.AutoJAX(), "torch")


def test_smallest_last_colors_a_banded_pattern_with_at_most_bandwidth_plus_one_colors():
    n, bandwidth = 100_000, 5  # diagonals -2..2
    offsets = np.arange(bandwidth) - bandwidth // 2
    rows = np.repeat(np.arange(n), bandwidth)
    cols = rows + np.tile(offsets, n)
    keep = (cols >= 0) & (cols < n)
    rows, cols = rows[keep], cols[keep]
    graph = column_graph(rows, cols, (n, n))
    colors = distance2_coloring(graph, vertex_order("smallest_last", graph))
    assert colors.max() + 1 <= bandwidth + 1
    assert is_structurally_orthogonal(rows, cols, colors)


# -- MixedMode: star bicoloring ------------------------------------------------------------------


@pytest.mark.parametrize("framework", ["jax", "torch"])
def test_arrowhead_through_mixed_mode_takes_at_most_four_products(framework):
    x = np.linspace(0.1, 1.0, 200)
    if framework == "jax":
        dense, xin = di.AutoJAX(), x
    else:
        import torch

        dense, xin = di.AutoTorch(), torch.tensor(x)
    backend = di.AutoSparse(di.MixedMode(dense, dense))
    prep = di.prepare_jacobian(arrowhead, backend, xin)
    J = di.jacobian(arrowhead, backend, xin, prep=prep)
    np.testing.assert_allclose(to_dense_numpy(J), arrowhead_jacobian(x), rtol=1e-13, atol=1e-14)
    coloring = di.coloring(prep)
    assert coloring.kind == "bidirectional" and coloring.ncolors <= 4
    assert coloring.ncolors == len(coloring.groups()) + len(coloring.row_groups())
    assert len(coloring.groups()) >= 1 and len(coloring.row_groups()) >= 1, "both sides are used"
    # one-sided colorings need a color per column or per row (asdex warns so)
    with pytest.warns(UserWarning, match="Coloring used"):
        one_sided = di.prepare_jacobian(arrowhead, di.AutoSparse(dense), xin)
    assert di.ncolors(one_sided) >= 199


def test_mixed_mode_with_finite_differences_forward_and_its_value():
    x = np.linspace(0.1, 1.0, 60)
    backend = di.AutoSparse(di.MixedMode(di.AutoFiniteDiff(), di.AutoJAX()))
    value, J = di.value_and_jacobian(arrowhead, backend, x)
    np.testing.assert_allclose(value, arrowhead(x), rtol=1e-15)
    np.testing.assert_allclose(J.toarray(), arrowhead_jacobian(x), rtol=1e-7, atol=1e-8)


def test_mixed_mode_on_a_constant_and_on_a_diagonal():
    x = np.linspace(0.1, 1.0, 6)
    backend = di.AutoSparse(di.MixedMode(di.AutoJAX(), di.AutoTorch()))
    value, J = di.value_and_jacobian(lambda x: x[:3] * 0.0 + 1.0, backend, x)
    assert J.nnz == 0 and J.shape == (3, 6)
    np.testing.assert_array_equal(value, np.ones(3))
    square = lambda x: x**2  # noqa: E731
    prep = di.prepare_jacobian(square, backend, x)
    assert di.ncolors(prep) == 1
    np.testing.assert_allclose(di.jacobian(square, backend, x, prep=prep).toarray(), np.diag(2 * x))


def test_mixed_mode_outside_autosparse_is_its_forward_backend():
    x = np.linspace(0.1, 1.0, 5)
    mixed = di.MixedMode(di.AutoJAX(), di.AutoTorch())
    np.testing.assert_allclose(di.jacobian(arrowhead, mixed, x), arrowhead_jacobian(x), rtol=1e-14)


def test_plot_shows_the_bicoloring():
    import matplotlib

    matplotlib.use("Agg")
    prep = di.prepare_jacobian(
        arrowhead, di.AutoSparse(di.MixedMode(di.AutoJAX(), di.AutoJAX())), np.ones(30)
    )
    ax = di.plot_sparsity(prep)
    assert ax.get_title() == "30 x 30, 88 entries, 3 colors (2 column + 1 row)"
    assert len(np.unique(ax.collections[0].get_array())) == 3


# -- acyclic coloring and substitution -----------------------------------------------------------


def banded_energy(x):
    """A Hessian of bandwidth 3: entries (i, j) with |i - j| <= 3."""
    xp = di.array_namespace(x)
    return (
        xp.sum(xp.sin(x[3:] * x[:-3]))
        + xp.sum(xp.cos(x[1:] * x[:-1]))
        + xp.sum(x[2:] ** 2 * x[:-2])
    )


def test_substitution_takes_fewer_colors_than_star_for_the_same_hessian():
    x = np.linspace(0.1, 1.0, 2000)
    star = di.AutoSparse(di.AutoJAX())
    acyclic = di.AutoSparse(
        di.AutoJAX(), coloring_algorithm=di.GreedyColoring(decompression="substitution")
    )
    star_prep, acyclic_prep = (
        di.prepare_hessian(banded_energy, star, x),
        di.prepare_hessian(banded_energy, acyclic, x),
    )
    assert di.ncolors(acyclic_prep) < di.ncolors(star_prep)
    coloring = di.coloring(acyclic_prep)
    pattern = di.sparsity_pattern(acyclic_prep).tocoo()
    assert coloring.kind == "acyclic" and is_acyclic_coloring(
        pattern.row, pattern.col, coloring.colors
    )
    H_star = di.hessian(banded_energy, star, x, prep=star_prep).toarray()
    H_acyclic = di.hessian(banded_energy, acyclic, x, prep=acyclic_prep).toarray()
    np.testing.assert_allclose(H_acyclic, H_star, rtol=1e-12, atol=1e-12)
    value, gradient, H = di.value_gradient_and_hessian(banded_energy, acyclic, x, prep=acyclic_prep)
    np.testing.assert_allclose(H.toarray(), H_star, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gradient, di.gradient(banded_energy, di.AutoJAX(), x), rtol=1e-13)


def test_substitution_with_torch_and_dense_results():
    import torch

    x = torch.linspace(0.1, 1.0, 40, dtype=torch.float64)
    algorithm = di.GreedyColoring(order=("smallest_last", "natural"), decompression="substitution")
    H = di.hessian(banded_energy, di.AutoSparse(di.AutoTorch(), coloring_algorithm=algorithm), x)
    assert H.layout == torch.sparse_csr
    expected = di.hessian(banded_energy, di.AutoTorch(), x).numpy()
    np.testing.assert_allclose(H.to_dense().numpy(), expected, rtol=1e-12, atol=1e-12)
    dense = di.AutoSparse(di.AutoJAX(), coloring_algorithm=algorithm, dense_result=True)
    np.testing.assert_allclose(
        di.hessian(banded_energy, dense, x.numpy()), expected, rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("postprocess", [False, True])
def test_star_hessian_read_by_the_star_rule_or_by_asdex_after_postprocessing(postprocess):
    # largest-first is asdex's star coloring: read by the star rule in numpy, or, postprocessed
    # (vertices left without a color), by asdex's own decompression
    x = np.linspace(0.1, 1.0, 300)
    backend = di.AutoSparse(
        di.AutoJAX(), coloring_algorithm=di.GreedyColoring(postprocess=postprocess)
    )
    prep = di.prepare_hessian(banded_energy, backend, x)
    dense = np.asarray(di.hessian(banded_energy, di.AutoJAX(), x))
    np.testing.assert_allclose(
        di.hessian(banded_energy, backend, x, prep=prep).toarray(), dense, rtol=1e-12, atol=1e-12
    )
    _, _, H = di.value_gradient_and_hessian(banded_energy, backend, x, prep=prep)
    np.testing.assert_allclose(H.toarray(), dense, rtol=1e-12, atol=1e-12)
