"""``compress`` (``wrappers/sparse/coloring.py``) on its own: every entry of a pattern read back from
the products its seeds give, for each kind of coloring, in asdex's order and in this folder's.

Written against the survivors of a mutation run (docs/testing.md, "Mutation testing"): the sparse
operators' tests reach these lines through a backend, where a wrong side, seed or position can still
give right values on their patterns.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.wrappers.sparse.coloring import _fewest, _seeds, compress

RNG = np.random.default_rng(11)

# asdex warns where a side needs as many colors as the dense case: the read-back is the point here
pytestmark = pytest.mark.filterwarnings("ignore:Coloring used")


def _entries(pattern):
    rows, cols = np.nonzero(pattern)  # row-major: the CSR order of results
    return rows.astype(np.int32), cols.astype(np.int32)


def _matrix(pattern, symmetric=False):
    values = np.where(pattern, RNG.uniform(1.0, 2.0, pattern.shape), 0.0)
    return np.triu(values) + np.triu(values, 1).T if symmetric else values


def _products(compression, matrix):
    """The products a prepared call runs, stacked as the gather reads them."""
    if compression.kind == "columns":  # pushforwards J @ seed_c
        return np.stack([matrix @ s for s in compression.seeds])
    if compression.kind == "rows":  # pullbacks seed_c @ J
        return np.stack([s @ matrix for s in compression.seeds])
    if compression.kind == "symmetric":  # hvps H @ seed_c
        return np.stack([matrix @ s for s in compression.seeds])
    assert compression.kind == "bidirectional"
    forward = [matrix @ s for s in compression.seeds]
    reverse = [s @ matrix for s in compression.row_seeds]
    return np.concatenate([np.reshape(forward, -1), np.reshape(reverse, -1)])


def _read_back(compression, matrix):
    stacked = np.asarray(_products(compression, matrix), dtype=float).reshape(-1)
    return stacked[compression.gather]


#: a dense row over sparse columns: one pullback does it, columns need one color per column
WIDE = np.zeros((4, 9), bool)
WIDE[0, :] = True
WIDE[np.arange(1, 4), np.arange(1, 4)] = True
#: its transpose: one pushforward
TALL = WIDE.T.copy()
BAND = np.abs(np.subtract.outer(np.arange(8), np.arange(8))) <= 1
ARROW = np.eye(8, dtype=bool)
ARROW[0, :] = ARROW[:, 0] = True


@pytest.mark.parametrize("order", ["largest_first", "natural", "smallest_last"])
@pytest.mark.parametrize("kind", ["columns", "rows", None])
@pytest.mark.parametrize("name", ["wide", "tall", "band"])
def test_one_sided_entries_read_back(name, kind, order):
    pattern = {"wide": WIDE, "tall": TALL, "band": BAND}[name]
    rows, cols = _entries(pattern)
    compression = compress(rows, cols, pattern.shape, kind, di.GreedyColoring(order=order))
    if kind is not None:
        assert compression.kind == kind
    m, n = pattern.shape
    side = n if compression.kind == "columns" else m
    assert compression.seeds.shape == (compression.ncolors, side)
    assert compression.product_size == (m if compression.kind == "columns" else n)
    assert compression.row_seeds is None and compression.row_colors is None
    matrix = _matrix(pattern)
    np.testing.assert_array_equal(_read_back(compression, matrix), matrix[rows, cols])


@pytest.mark.parametrize("order", ["largest_first", "natural"])
def test_either_side_takes_the_one_with_fewer_colors(order):
    algorithm = di.GreedyColoring(order=order)
    wide = compress(*_entries(WIDE), WIDE.shape, None, algorithm)
    assert (wide.kind, wide.ncolors) == ("rows", 2)
    tall = compress(*_entries(TALL), TALL.shape, None, algorithm)
    assert (tall.kind, tall.ncolors) == ("columns", 2)


@pytest.mark.parametrize("order", ["largest_first", "natural", "smallest_last"])
@pytest.mark.parametrize("name", ["arrow", "band"])
def test_symmetric_entries_read_back(name, order):
    pattern = {"arrow": ARROW, "band": BAND}[name]
    rows, cols = _entries(pattern)
    compression = compress(rows, cols, pattern.shape, "symmetric", di.GreedyColoring(order=order))
    assert compression.kind == "symmetric"
    assert compression.seeds.shape == (compression.ncolors, pattern.shape[0])
    matrix = _matrix(pattern, symmetric=True)
    np.testing.assert_array_equal(_read_back(compression, matrix), matrix[rows, cols])


@pytest.mark.parametrize("order", ["largest_first", "natural"])
def test_bidirectional_entries_read_back(order):
    pattern = ARROW[:6, :]  # dense first row and column: neither side alone does it in few colors
    rows, cols = _entries(pattern)
    compression = compress(
        rows, cols, pattern.shape, "bidirectional", di.GreedyColoring(order=order)
    )
    assert compression.kind == "bidirectional"
    assert compression.ncolors == len(compression.seeds) + len(compression.row_seeds)
    assert compression.row_seeds.shape[1] == pattern.shape[0]
    matrix = _matrix(pattern)
    np.testing.assert_array_equal(_read_back(compression, matrix), matrix[rows, cols])


def test_seeds_one_row_per_color_none_for_no_color():
    seeds = _seeds(np.array([1, 0, -1, 1]))
    np.testing.assert_array_equal(seeds, [[False, True, False, False], [True, False, False, True]])
    assert _seeds(np.array([-1, -1])).shape == (0, 2)


def test_fewest_colors_first_of_equals():
    assert _fewest([(3, 0, "a"), (2, 1, "b"), (2, 2, "c")]) == (2, 1, "b")
    assert _fewest([(1, 5, "z"), (2, 0, "a")]) == (1, 5, "z")


def _uneven():
    """A 10 x 12 pattern on which the orders color differently (natural beats largest_first)."""
    rng = np.random.default_rng(0)
    for _ in range(29):
        pattern = rng.random((10, 12)) < 0.25
    return pattern


@pytest.mark.parametrize("kind", ["columns", "bidirectional"])
def test_a_tuple_of_orders_keeps_the_fewest_colors(kind):
    pattern = _uneven()
    rows, cols = _entries(pattern)
    orders = ("largest_first", "natural", "smallest_last")
    alone = [compress(rows, cols, pattern.shape, kind, di.GreedyColoring(order=o)) for o in orders]
    assert len({c.ncolors for c in alone}) > 1  # the orders disagree here
    best = compress(rows, cols, pattern.shape, kind, di.GreedyColoring(order=orders))
    assert best.ncolors == min(c.ncolors for c in alone)
    matrix = _matrix(pattern)
    np.testing.assert_array_equal(_read_back(best, matrix), matrix[rows, cols])


@pytest.mark.parametrize("kind", ["columns", "symmetric", "bidirectional", "substitution"])
def test_the_random_order_follows_its_seed(kind):
    pattern = _uneven()[:, :10]
    pattern = pattern | pattern.T | np.eye(10, dtype=bool)
    rows, cols = _entries(pattern)

    def colors(seed):
        algorithm = di.GreedyColoring(
            order="random",
            seed=seed,
            decompression="substitution" if kind == "substitution" else "direct",
        )
        coloring = "symmetric" if kind == "substitution" else kind
        return compress(rows, cols, pattern.shape, coloring, algorithm).colors

    runs = [colors(seed) for seed in range(6)]
    for seed, first in enumerate(runs):
        np.testing.assert_array_equal(colors(seed), first)  # the same seed, the same coloring
    assert any(not np.array_equal(runs[0], other) for other in runs[1:])


@pytest.mark.parametrize("order", ["largest_first", "natural", "smallest_last"])
def test_substitution_solves_every_entry_from_the_products(order):
    rows, cols = _entries(BAND)
    algorithm = di.GreedyColoring(order=order, decompression="substitution")
    compression = compress(rows, cols, BAND.shape, "symmetric", algorithm)
    assert compression.kind == "acyclic" and compression.gather is None
    # the band is a path: two colors alternate along it acyclically, while a star coloring needs
    # three (two alternating colors make a two-colored path on four vertices)
    assert compression.ncolors == 2
    direct = compress(rows, cols, BAND.shape, "symmetric", di.GreedyColoring(order=order))
    assert direct.ncolors == 3
    matrix = _matrix(BAND, symmetric=True)
    products = np.stack([matrix @ s for s in compression.seeds])
    np.testing.assert_allclose(compression.solve(products), matrix[rows, cols], rtol=1e-12)


#: a hub joined to five leaves, no diagonal (the Hessian of ``x[0] * sum(x[1:])``)
HUB = np.zeros((6, 6), bool)
HUB[0, 1:] = HUB[1:, 0] = True


@pytest.mark.parametrize("postprocess", [False, True])
def test_postprocessing_drops_the_color_no_entry_is_read_from(postprocess):
    # every entry is read in the hub's product: asdex's postprocessing leaves the leaves uncolored
    rows, cols = _entries(HUB)
    algorithm = di.GreedyColoring(postprocess=postprocess)
    compression = compress(rows, cols, HUB.shape, "symmetric", algorithm)
    assert compression.ncolors == (1 if postprocess else 2)
    assert (compression.colors[1:] == -1).all() == postprocess
    matrix = _matrix(HUB, symmetric=True)
    np.testing.assert_array_equal(_read_back(compression, matrix), matrix[rows, cols])


@pytest.mark.parametrize("kind", ["columns", "rows", "symmetric", "bidirectional"])
def test_the_compression_keeps_the_pattern_and_sizes(kind):
    pattern = ARROW[:6, :] if kind != "symmetric" else ARROW
    rows, cols = _entries(pattern)
    compression = compress(rows, cols, pattern.shape, kind, di.GreedyColoring())
    assert compression.rows is rows and compression.cols is cols
    assert compression.shape == pattern.shape
    # largest-first one-sided and star colorings are asdex's: its object is kept
    assert (compression.colored is not None) == (kind != "bidirectional")
    m, n = pattern.shape
    assert compression.product_size == (m if kind in ("columns", "bidirectional") else n)
    if kind == "bidirectional":
        assert compression.row_colors is not None and len(compression.row_colors) == m
    assert repr(compression) == (
        f"<Compression {kind}: {m}x{n}, {len(rows)} entries, {compression.ncolors} colors>"
    )


def test_seeds_of_no_entries():
    assert _seeds(np.zeros(0, dtype=np.int64)).shape == (0, 0)
