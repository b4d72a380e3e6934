"""AutoSparse's configuration and what a preparation keeps: every argument validated with an error that
names it and what was given, the patterns each detector finds, every decompression's matrices equal
to the dense ones (sparse and dense results, in x's dtype), MixedMode's declared capabilities, and the
introspection (coloring, pattern, spy plot).

No JAX: derivatives from autograd and finite differences, patterns known or found from one dense
derivative (torch only gives sparse matrices to draw, MLX only its declared accuracy). The mutation
testing of ``wrappers/sparse/`` (docs/testing.md) runs these tests in forked children, where JAX can
hang when it compiles.
"""

from __future__ import annotations

import re
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse

import diffinterface as di
from diffinterface.core import get_adapter
from diffinterface.testing.tolerances import float64_accuracy, is_approximate
from diffinterface.wrappers.sparse.config import ORDERS
from diffinterface.wrappers.sparse.introspection import Coloring
from diffinterface.wrappers.sparse.matrices import assembler


@pytest.fixture(autouse=True)
def _dense_colorings_are_expected():
    # small patterns color every column: asdex warns that there is no speedup
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Coloring used")
        warnings.filterwarnings("ignore", message="No speedup")
        # torch's sparse CSR tensors, drawn by the spy plot
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        yield


def _exactly(message):
    return re.escape(message)


# -- configuration ---------------------------------------------------------------------------------


def test_dense_sparsity_detector_names_a_bad_backend_or_atol_and_what_was_given():
    with pytest.raises(
        TypeError,
        match=_exactly(
            "DenseSparsityDetector(backend=...) expected a backend selector such as di.AutoJAX(); got 'jax'"
        ),
    ):
        di.DenseSparsityDetector("jax")
    for atol in (True, "0.1", -1e-12, float("nan"), None, 1j):
        with pytest.raises(
            ValueError,
            match=_exactly(f"DenseSparsityDetector(atol=...) expected a float >= 0; got {atol!r}"),
        ):
            di.DenseSparsityDetector(di.AutoFiniteDiff(), atol=atol)
    assert di.DenseSparsityDetector(di.AutoFiniteDiff()).atol == 0.0
    assert di.DenseSparsityDetector(di.AutoFiniteDiff(), 0).atol == 0
    assert di.DenseSparsityDetector(di.AutoFiniteDiff(), atol=2).atol == 2


def test_known_sparsity_keeps_the_entries_of_every_kind_of_pattern_row_major():
    dense = np.array([[True, False, True, False], [False, True, False, False]])
    expected_rows, expected_cols = [0, 0, 1], [0, 2, 1]
    # a 0/1, counting or float array; a scipy matrix whose stored entries count even where zero,
    # duplicated and out of order
    coo = scipy.sparse.coo_array(([1.0, 0.0, 2.0, 0.0], ([1, 0, 1, 0], [1, 2, 1, 0])), shape=(2, 4))
    for pattern in (
        dense,
        dense.astype(np.int8),
        dense.astype(np.uint16) * 3,
        dense * 0.5,
        coo,
        scipy.sparse.csr_array(dense),
    ):
        known = di.KnownSparsity(pattern)
        assert known.shape == (2, 4) and known.nnz == 3
        rows, cols = known.coordinates()
        assert rows.dtype == np.int64 and cols.dtype == np.int64
        assert rows.tolist() == expected_rows and cols.tolist() == expected_cols
        assert known == di.KnownSparsity(dense) and hash(known) == hash(di.KnownSparsity(dense))
        assert repr(known) == "KnownSparsity(shape=(2, 4), nnz=3)"
    tall = di.KnownSparsity(dense.T)
    assert tall.shape == (4, 2) and [r.tolist() for r in tall.coordinates()] == [
        [0, 1, 2],
        [0, 1, 0],
    ]
    assert di.KnownSparsity(np.zeros((3, 5))).nnz == 0


def test_known_sparsity_of_a_large_scipy_pattern_with_int32_indices():
    # scipy keeps 32-bit indices for a 50,000 x 50,000 matrix; its flat indices pass 2**31
    n = 50_000
    rows, cols = np.array([n - 1, 3], dtype=np.int32), np.array([n - 2, 7], dtype=np.int32)
    for pattern in (
        scipy.sparse.coo_array((np.ones(2), (rows, cols)), shape=(n, n)),
        scipy.sparse.csr_array((np.ones(2), (rows, cols)), shape=(n, n)),
    ):
        known = di.KnownSparsity(pattern)
        assert known.shape == (n, n) and known.nnz == 2
        assert [c.tolist() for c in known.coordinates()] == [[3, n - 1], [7, n - 2]]


class _Unconvertible:
    def __array__(self, *args, **kwargs):
        raise RuntimeError("no array here")


def test_known_sparsity_refuses_what_is_no_2d_pattern_naming_what_was_given():
    expected = (
        "KnownSparsity(pattern=...) expected a scipy.sparse matrix or a 2-D boolean array; got "
    )
    for pattern, given in [
        ("eye", "a <U3 array of shape ()"),
        (np.ones(3), "a float64 array of shape (3,)"),
        (np.ones((2, 2, 2), dtype=bool), "a bool array of shape (2, 2, 2)"),
        (np.ones((2, 2), dtype=complex), "a complex128 array of shape (2, 2)"),
        (np.array([[None, 1]]), "a object array of shape (1, 2)"),
        (_Unconvertible(), "_Unconvertible"),
        ([[1], [1, 0]], "list"),
    ]:
        with pytest.raises(TypeError, match=_exactly(expected + given) + "$"):
            di.KnownSparsity(pattern)
    with pytest.raises(TypeError) as raised:
        di.KnownSparsity(_Unconvertible())
    assert isinstance(raised.value.__cause__, RuntimeError)


def test_greedy_coloring_defaults_and_orders():
    assert ORDERS == (
        "natural",
        "largest_first",
        "smallest_last",
        "incidence_degree",
        "dynamic_largest_first",
        "random",
    )
    default = di.GreedyColoring()
    assert (default.order, default.postprocess, default.decompression, default.seed) == (
        "largest_first",
        False,
        "direct",
        0,
    )
    assert default.orders == ("largest_first",)
    for order in ORDERS:
        assert di.GreedyColoring(order=order).orders == (order,)
    both = di.GreedyColoring(("natural", "random"), True, "substitution", 4)
    assert both.orders == ("natural", "random") and both.order == ("natural", "random")
    assert (both.postprocess, both.decompression, both.seed) == (True, "substitution", 4)


def test_greedy_coloring_names_each_bad_argument_and_what_was_given():
    orders = (
        f"GreedyColoring(order=...) expected one of {ORDERS} or a non-empty tuple of them; got "
    )
    for order in ((), ["natural"], ("natural", 3), ("natural", "fastest"), 3, None, "Natural"):
        with pytest.raises(ValueError, match=_exactly(orders + repr(order)) + "$"):
            di.GreedyColoring(order=order)
    for postprocess in (1, None, "yes"):
        with pytest.raises(
            TypeError,
            match=_exactly(
                f"GreedyColoring(postprocess=...) expected True or False; got {postprocess!r}"
            ),
        ):
            di.GreedyColoring(postprocess=postprocess)
    for decompression in ("star", None, "Direct"):
        with pytest.raises(
            ValueError,
            match=_exactly(
                "GreedyColoring(decompression=...) expected one of ('direct', 'substitution'); "
                f"got {decompression!r}"
            ),
        ):
            di.GreedyColoring(decompression=decompression)
    for seed in (True, 1.5, "1", None):
        with pytest.raises(
            TypeError, match=_exactly(f"GreedyColoring(seed=...) expected an int; got {seed!r}")
        ):
            di.GreedyColoring(seed=seed)


def test_auto_sparse_defaults_and_every_detector():
    backend = di.AutoSparse(di.AutoFiniteDiff())
    assert backend.sparsity_detector == di.TracerSparsityDetector()
    assert backend.coloring_algorithm == di.GreedyColoring()
    assert backend.dense_result is False
    for detector in (
        di.TracerSparsityDetector(),
        di.DenseSparsityDetector(di.AutoAutograd()),
        di.KnownSparsity(np.eye(2)),
    ):
        assert di.AutoSparse(di.AutoAutograd(), detector).sparsity_detector is detector
    mixed = di.MixedMode(di.AutoFiniteDiff(), di.AutoAutograd())
    assert di.AutoSparse(mixed, dense_result=True).dense_backend is mixed


def test_auto_sparse_and_mixed_mode_name_each_bad_argument_and_what_was_given():
    dense = "expected a dense backend selector such as di.AutoJAX(); got "
    nested = di.AutoSparse(di.AutoFiniteDiff())
    mixed = di.MixedMode(di.AutoFiniteDiff(), di.AutoAutograd())
    cases = [
        (lambda: di.AutoSparse("jax"), f"AutoSparse(dense_backend=...) {dense}'jax'"),
        (lambda: di.AutoSparse(nested), f"AutoSparse(dense_backend=...) {dense}{nested!r}"),
        (
            lambda: di.AutoSparse(di.AutoFiniteDiff(), "tracer"),
            "AutoSparse(sparsity_detector=...) expected di.TracerSparsityDetector(), "
            "di.DenseSparsityDetector(backend) or di.KnownSparsity(pattern); got 'tracer'",
        ),
        (
            lambda: di.AutoSparse(di.AutoFiniteDiff(), coloring_algorithm="greedy"),
            "AutoSparse(coloring_algorithm=...) expected di.GreedyColoring(); got 'greedy'",
        ),
        (
            lambda: di.AutoSparse(di.AutoFiniteDiff(), dense_result=1),
            "AutoSparse(dense_result=...) expected True or False; got 1",
        ),
        (
            lambda: di.MixedMode("fd", di.AutoAutograd()),
            f"MixedMode(forward_backend=...) {dense}'fd'",
        ),
        (
            lambda: di.MixedMode(nested, di.AutoAutograd()),
            f"MixedMode(forward_backend=...) {dense}{nested!r}",
        ),
        (
            lambda: di.MixedMode(di.AutoFiniteDiff(), mixed),
            f"MixedMode(reverse_backend=...) {dense}{mixed!r}",
        ),
        (
            lambda: di.MixedMode(di.AutoFiniteDiff(), None),
            f"MixedMode(reverse_backend=...) {dense}None",
        ),
    ]
    for build, message in cases:
        with pytest.raises(TypeError, match=_exactly(message) + "$"):
            build()


def test_mixed_mode_declares_what_its_two_backends_share():
    fd, autograd = di.AutoFiniteDiff(), di.AutoAutograd()
    exact = get_adapter(di.MixedMode(autograd, autograd)).capabilities
    assert exact.mode == "both" and exact.framework == "autograd"
    assert exact.families == ("numpy", "autograd") and not exact.approximate
    forward_fd = get_adapter(di.MixedMode(fd, autograd)).capabilities
    assert forward_fd.mode == "both" and forward_fd.framework is None
    assert forward_fd.families == ("numpy",) and forward_fd.approximate
    reverse_fd = get_adapter(di.MixedMode(autograd, fd)).capabilities
    assert reverse_fd.framework == "autograd" and reverse_fd.families == ("numpy",)
    assert reverse_fd.approximate
    # MLX declares its float64 functions less accurate than float64's: so does a MixedMode with it
    mlx = di.AutoMLX()
    declared = get_adapter(mlx).capabilities.float64_accuracy
    assert declared is not None and exact.float64_accuracy is None
    assert get_adapter(di.MixedMode(mlx, autograd)).capabilities.float64_accuracy == declared
    assert get_adapter(di.MixedMode(autograd, mlx)).capabilities.float64_accuracy == declared
    # the kit's tolerances follow the declarations, through AutoSparse
    assert is_approximate(di.AutoSparse(di.MixedMode(autograd, fd)))
    assert not is_approximate(di.AutoSparse(di.MixedMode(autograd, autograd)))
    assert float64_accuracy(di.AutoSparse(di.MixedMode(autograd, mlx))) == declared[0]


# -- detection -------------------------------------------------------------------------------------


def _four_outputs(x):
    xp = di.array_namespace(x)
    # at x = (1, 2, 0): J = [[2, -0.5, 0], [0, 0, -3], [x2 = 0, 0, x0 = 1], [0, 2 x1 = 4, 0]]
    return xp.stack([2 * x[0] - 0.5 * x[1], -3 * x[2], x[0] * x[2], x[1] ** 2])


X3 = np.array([1.0, 2.0, 0.0])


def _pattern(backend, f, x, operator="jacobian"):
    prepare = di.prepare_jacobian if operator == "jacobian" else di.prepare_hessian
    return di.sparsity_pattern(prepare(f, backend, x)).toarray()


def test_dense_detector_keeps_the_jacobian_entries_above_atol_whatever_their_sign():
    def found(atol):
        detector = di.DenseSparsityDetector(di.AutoAutograd(), atol=atol)
        return _pattern(di.AutoSparse(di.AutoAutograd(), detector), _four_outputs, X3)

    # the entry x2 is zero at x: the pattern is local
    assert found(0.0).astype(int).tolist() == [[1, 1, 0], [0, 0, 1], [0, 0, 1], [0, 1, 0]]
    # |-0.5| <= 0.5 counts as a zero; -3 stays
    assert found(0.5).astype(int).tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 1], [0, 1, 0]]
    assert found(2.0).astype(int).tolist() == [[0, 0, 0], [0, 0, 1], [0, 0, 0], [0, 1, 0]]
    backend = di.AutoSparse(di.AutoAutograd(), di.DenseSparsityDetector(di.AutoAutograd()))
    J = di.jacobian(_four_outputs, backend, X3)
    assert J.shape == (4, 3)
    np.testing.assert_array_equal(J.toarray(), di.jacobian(_four_outputs, di.AutoAutograd(), X3))


def _energy(x):
    # at x = (1, 2, 0): H = [[2, -1, 0], [-1, 0, 0], [0, 0, 6 x2 = 0]] (and 1-D x of 3)
    return -x[0] * x[1] + x[0] ** 2 + x[2] ** 3


def test_dense_detector_keeps_the_hessian_entries_above_atol_whatever_their_sign():
    def found(atol):
        detector = di.DenseSparsityDetector(di.AutoAutograd(), atol=atol)
        return _pattern(di.AutoSparse(di.AutoAutograd(), detector), _energy, X3, "hessian")

    assert found(0.0).astype(int).tolist() == [[1, 1, 0], [1, 0, 0], [0, 0, 0]]
    assert found(1.0).astype(int).tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]
    backend = di.AutoSparse(di.AutoAutograd(), di.DenseSparsityDetector(di.AutoAutograd()))
    np.testing.assert_array_equal(
        di.hessian(_energy, backend, X3).toarray(), di.hessian(_energy, di.AutoAutograd(), X3)
    )
    # the detector's Hessian sees f's contexts: at c = 0 the coupling x0 * x1 has no entry
    scaled = lambda x, c: c * x[0] * x[1] + x[2] ** 2  # noqa: E731
    for c, entries in [(2.0, 3), (0.0, 1)]:
        H = di.hessian(scaled, backend, X3, di.Constant(c))
        assert H.nnz == entries
        np.testing.assert_array_equal(
            H.toarray(), di.hessian(scaled, di.AutoAutograd(), X3, di.Constant(c))
        )


def test_dense_detector_evaluates_f_with_its_contexts_and_in_place():
    scaled = lambda x, c: x[1:] * c - x[:-1]  # noqa: E731
    detector = di.DenseSparsityDetector(di.AutoFiniteDiff(method="forward"))
    backend = di.AutoSparse(di.AutoFiniteDiff(method="forward"), detector)
    x = np.linspace(1.0, 2.0, 5)
    J = di.jacobian(scaled, backend, x, di.Constant(2.0))
    expected = np.eye(4, 5, 1) * 2.0 - np.eye(4, 5)
    np.testing.assert_allclose(J.toarray(), expected, atol=1e-6)
    # at c = 0 the detector finds no entry x[1:] * c
    assert di.jacobian(scaled, backend, x, di.Constant(0.0)).nnz == 4

    def in_place(y, x):
        y[:] = x[1:] ** 2 - x[:-1]

    y = np.zeros(4)
    J = di.jacobian(in_place, backend, x, y=y)
    np.testing.assert_allclose(J.toarray(), np.diag(2 * x[1:], 1)[:4] - np.eye(4, 5), atol=1e-5)
    assert J.nnz == 8


def test_known_pattern_is_checked_against_the_shapes_the_operator_needs():
    wide = di.AutoSparse(di.AutoAutograd(), di.KnownSparsity(np.ones((3, 3))))
    with pytest.raises(
        ValueError,
        match=_exactly(
            "sparsity_detector: KnownSparsity for this jacobian needs a pattern of shape "
            "f(x).size x x.size = (4, 3); got (3, 3)"
        ),
    ):
        di.prepare_jacobian(_four_outputs, wide, X3)
    tall = di.AutoSparse(di.AutoAutograd(), di.KnownSparsity(np.ones((4, 3))))
    with pytest.raises(
        ValueError,
        match=_exactly(
            "sparsity_detector: KnownSparsity for this hessian needs a pattern of shape "
            "x.size x x.size = (3, 3); got (4, 3)"
        ),
    ):
        di.prepare_hessian(_energy, tall, X3)
    for pattern, missing in [
        (np.triu(np.ones((3, 3))), 3),
        (np.eye(3) + np.eye(3, k=1) * [0, 0, 1], 1),
    ]:
        asymmetric = di.AutoSparse(di.AutoAutograd(), di.KnownSparsity(pattern))
        with pytest.raises(
            ValueError,
            match=_exactly(
                "sparsity_detector: KnownSparsity for a Hessian needs a symmetric pattern; "
                f"{missing} entries have no transposed entry"
            ),
        ):
            di.prepare_hessian(_energy, asymmetric, X3)
    symmetric = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]])
    backend = di.AutoSparse(di.AutoAutograd(), di.KnownSparsity(symmetric))
    assert (_pattern(backend, _energy, X3, "hessian") == symmetric).all()
    np.testing.assert_array_equal(
        di.hessian(_energy, backend, X3).toarray(), di.hessian(_energy, di.AutoAutograd(), X3)
    )
    # a Jacobian's pattern need not be symmetric; its entries are kept where the derivative is zero
    known = np.array([[1, 1, 1], [0, 0, 1], [1, 0, 1], [0, 1, 0]], dtype=bool)
    backend = di.AutoSparse(di.AutoAutograd(), di.KnownSparsity(known))
    assert (_pattern(backend, _four_outputs, X3) == known).all()


# -- decompression: every kind of coloring, sparse and dense results -------------------------------


def _coupled(x):
    # R^(2 x 3) -> R^5: y0 reads all of x (a dense row: columns need a color each), y[1 + i] reads
    # x.flat[i] and x.flat[i + 1]
    xp = di.array_namespace(x)
    flat = xp.reshape(x, (-1,))
    return xp.concat([xp.reshape(xp.sum(flat**2), (1,)), flat[:4] * xp.sin(flat[1:5])])


def _coupled_pattern():
    pattern = np.zeros((5, 6), dtype=bool)
    pattern[0] = True
    for i in range(4):
        pattern[1 + i, [i, i + 1]] = True
    return pattern


def _chain(x):
    xp = di.array_namespace(x)
    flat = xp.reshape(x, (-1,))
    return xp.sum(xp.sin(flat[1:] * flat[:-1])) + xp.sum(flat**3)


def _chain_pattern(n):
    return np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= 1


X23 = np.array([[0.3, -0.8, 1.1], [0.5, 1.7, -0.4]])
FD = di.AutoFiniteDiff(method="forward")
JACOBIAN_BACKENDS = {
    "columns": FD,
    "rows": di.AutoAutograd(),
    "bidirectional": di.MixedMode(FD, di.AutoAutograd()),
}


@pytest.mark.parametrize("kind", list(JACOBIAN_BACKENDS))
def test_jacobians_of_every_kind_equal_the_dense_one_sparse_or_dense(kind):
    dense = JACOBIAN_BACKENDS[kind]
    known = di.KnownSparsity(_coupled_pattern())
    expected = di.jacobian(_coupled, di.AutoAutograd(), X23)
    rtol, atol = (1e-6, 1e-7) if is_approximate(dense) else (1e-14, 1e-15)
    backend = di.AutoSparse(dense, known)
    prep = di.prepare_jacobian(_coupled, backend, X23)
    assert di.coloring(prep).kind == kind
    J = di.jacobian(_coupled, backend, X23, prep=prep)
    assert isinstance(J, scipy.sparse.csr_array) and J.shape == (5, 6) and J.nnz == 14
    np.testing.assert_allclose(J.toarray(), expected.reshape(5, 6), rtol=rtol, atol=atol)
    value, J = di.value_and_jacobian(_coupled, backend, X23, prep=prep)
    np.testing.assert_allclose(value, _coupled(X23), rtol=1e-15)
    np.testing.assert_allclose(J.toarray(), expected.reshape(5, 6), rtol=rtol, atol=atol)
    as_dense = di.AutoSparse(dense, known, dense_result=True)
    J = di.jacobian(_coupled, as_dense, X23)
    assert isinstance(J, np.ndarray) and J.shape == (5, 2, 3)
    np.testing.assert_allclose(J, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("kind", list(JACOBIAN_BACKENDS))
def test_float32_jacobians_stay_float32(kind):
    dense = JACOBIAN_BACKENDS[kind]
    known = di.KnownSparsity(_coupled_pattern())
    x = X23.astype(np.float32)
    expected = di.jacobian(_coupled, di.AutoAutograd(), X23).reshape(5, 6)
    for dense_result in (False, True):
        backend = di.AutoSparse(dense, known, dense_result=dense_result)
        prep = di.prepare_jacobian(_coupled, backend, x)
        assert di.coloring(prep).kind == kind
        J = di.jacobian(_coupled, backend, x, prep=prep)
        assert J.dtype == np.float32, (kind, dense_result)
        J = J if dense_result else J.toarray()
        np.testing.assert_allclose(J.reshape(5, 6), expected, rtol=2e-2, atol=2e-2)


def test_a_diagonal_takes_one_product_of_either_side():
    x = np.linspace(0.1, 1.0, 5)
    square = lambda x: x**2  # noqa: E731
    for dense in JACOBIAN_BACKENDS.values():
        backend = di.AutoSparse(dense, di.KnownSparsity(np.eye(5)))
        prep = di.prepare_jacobian(square, backend, x)
        assert di.ncolors(prep) == 1
        J = di.jacobian(square, backend, x, prep=prep)
        np.testing.assert_allclose(J.toarray(), np.diag(2 * x), rtol=1e-6)


@pytest.mark.parametrize(
    "decompression, kind", [("direct", "symmetric"), ("substitution", "acyclic")]
)
def test_hessians_of_both_decompressions_equal_the_dense_one_sparse_or_dense(decompression, kind):
    x = np.linspace(-0.7, 0.9, 8).reshape(2, 4)
    known = di.KnownSparsity(_chain_pattern(8))
    coloring = di.GreedyColoring(decompression=decompression)
    expected = di.hessian(_chain, di.AutoAutograd(), x)
    backend = di.AutoSparse(di.AutoAutograd(), known, coloring)
    prep = di.prepare_hessian(_chain, backend, x)
    assert di.coloring(prep).kind == kind
    H = di.hessian(_chain, backend, x, prep=prep)
    assert isinstance(H, scipy.sparse.csr_array) and H.shape == (8, 8) and H.nnz == 22
    np.testing.assert_allclose(H.toarray(), expected.reshape(8, 8), rtol=1e-13, atol=1e-14)
    H = di.hessian(_chain, di.AutoSparse(di.AutoAutograd(), known, coloring, True), x)
    assert isinstance(H, np.ndarray) and H.shape == (2, 4, 2, 4)
    np.testing.assert_allclose(H, expected, rtol=1e-13, atol=1e-14)


def test_assembler_scatters_the_entries_given_in_pattern_order():
    # the entries' values computed elsewhere (a dense adapter's compiled sparse Jacobian) in the
    # pattern's row-major order
    pattern = _coupled_pattern()
    backend = di.AutoSparse(FD, di.KnownSparsity(pattern))
    compression = di.prepare_jacobian(_coupled, backend, X23).impl.sparse.compression
    for dtype in (np.float64, np.float32):
        data = np.arange(1, 15, dtype=dtype)
        expected = np.zeros((5, 6), dtype=dtype)
        expected[pattern] = data
        matrix = assembler(compression, "numpy", X23.astype(dtype))(data)
        assert isinstance(matrix, scipy.sparse.csr_array) and matrix.dtype == dtype
        np.testing.assert_array_equal(matrix.toarray(), expected)
        dense = assembler(compression, "numpy", X23.astype(dtype), (5, 2, 3))(data)
        assert isinstance(dense, np.ndarray) and dense.dtype == dtype
        np.testing.assert_array_equal(dense, expected.reshape(5, 2, 3))


# -- introspection ---------------------------------------------------------------------------------


def test_introspection_refuses_what_is_no_sparse_preparation():
    dense_prep = di.prepare_jacobian(_four_outputs, di.AutoAutograd(), X3)
    for thing in (dense_prep, None, "prep"):
        for read in (di.coloring, di.ncolors, di.sparsity_pattern):
            with pytest.raises(
                TypeError,
                match=_exactly(
                    "prep: expected the result of prepare_jacobian or prepare_hessian with a "
                    f"di.AutoSparse backend; got {thing!r}"
                ),
            ):
                read(thing)


def test_coloring_groups_each_color_and_leaves_out_the_uncolored():
    columns = Coloring("columns", np.array([0, 1, 0, -1, 2]), 3)
    assert [g.tolist() for g in columns.groups()] == [[0, 2], [1], [4]]
    assert columns.row_groups() == [] and columns.row_colors is None
    assert Coloring("columns", np.array([-1, -1]), 0).groups() == []
    assert Coloring("columns", np.array([], dtype=int), 0).groups() == []
    both = Coloring("bidirectional", np.array([-1, 0]), 3, np.array([1, -1, 0, 1]))
    assert [g.tolist() for g in both.groups()] == [[1]]
    assert [g.tolist() for g in both.row_groups()] == [[2], [0, 3]]
    assert Coloring("bidirectional", np.array([0]), 1, np.array([-1, -1])).row_groups() == []
    # f(x) of size 0: no row to color
    assert Coloring("bidirectional", np.array([-1]), 0, np.array([], dtype=int)).row_groups() == []


def _arrowhead(x):
    xp = di.array_namespace(x)
    return xp.concat([xp.reshape(xp.sum(xp.sin(x)), (1,)), x[1:] ** 2 + x[0] * x[1:]])


def _arrowhead_pattern(n):
    pattern = np.eye(n, dtype=bool)
    pattern[0, :] = pattern[:, 0] = True
    return pattern


def test_coloring_of_a_bicoloring_and_copies_of_its_colors():
    n = 12
    backend = di.AutoSparse(
        di.MixedMode(FD, di.AutoAutograd()), di.KnownSparsity(_arrowhead_pattern(n))
    )
    x = np.linspace(0.1, 1.0, n)
    prep = di.prepare_jacobian(_arrowhead, backend, x)
    coloring = di.coloring(prep)
    assert coloring.kind == "bidirectional"
    columns, rows = coloring.groups(), coloring.row_groups()
    assert len(columns) >= 1 and len(rows) >= 1
    assert di.ncolors(prep) == coloring.ncolors == len(columns) + len(rows)
    # every entry is read from a column color it alone has in its row, or a row color it alone
    # has in its column
    entries = np.argwhere(_arrowhead_pattern(n))
    for i, j in entries:
        column_color, row_color = coloring.colors[j], coloring.row_colors[i]
        alone_in_row = column_color >= 0 and all(
            coloring.colors[k] != column_color
            for k in np.flatnonzero(_arrowhead_pattern(n)[i])
            if k != j
        )
        alone_in_column = row_color >= 0 and all(
            coloring.row_colors[k] != row_color
            for k in np.flatnonzero(_arrowhead_pattern(n)[:, j])
            if k != i
        )
        assert alone_in_row or alone_in_column, (i, j)
    expected = di.jacobian(_arrowhead, di.AutoAutograd(), x)
    coloring.colors[:] = 0
    coloring.row_colors[:] = 0
    again = di.coloring(prep)
    assert len(again.groups()) == len(columns) and len(again.row_groups()) == len(rows)
    np.testing.assert_allclose(
        di.jacobian(_arrowhead, backend, x, prep=prep).toarray(), expected, rtol=1e-6, atol=1e-7
    )


def test_sparsity_pattern_is_the_prepared_boolean_pattern():
    known = _coupled_pattern()
    prep = di.prepare_jacobian(_coupled, di.AutoSparse(FD, di.KnownSparsity(known)), X23)
    pattern = di.sparsity_pattern(prep)
    assert isinstance(pattern, scipy.sparse.csr_array) and pattern.dtype == bool
    assert pattern.shape == (5, 6) and pattern.nnz == 14
    np.testing.assert_array_equal(pattern.toarray(), known)


def _drawn(prep, **options):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = di.plot_sparsity(prep, **options)
    points = ax.collections[0]
    cols, rows = np.asarray(points.get_offsets()).T
    products = np.asarray(points.get_array())
    plt.close(ax.figure)
    assert np.array_equal(products, np.round(products))  # one product per entry, no fraction
    return ax, rows.astype(int), cols.astype(int), products, points


def _two_dense_rows(x):
    # R^n -> R^(n - 3): y0 and y1 read all of x (two row colors), y[i] reads x[0] and x[i]
    xp = di.array_namespace(x)
    dense_rows = xp.stack([xp.sum(xp.sin(x)), xp.sum(x**2)])
    return xp.concat([dense_rows, x[2:-3] ** 2 + x[0] * x[2:-3]])


def _two_dense_rows_pattern(n):
    pattern = np.zeros((n - 3, n), dtype=bool)
    pattern[:2] = pattern[:, 0] = True
    pattern[np.arange(2, n - 3), np.arange(2, n - 3)] = True
    return pattern


def _prep(kind, n=8):
    x = np.linspace(0.1, 1.0, n)
    if kind in ("symmetric", "acyclic"):
        decompression = "direct" if kind == "symmetric" else "substitution"
        coloring = di.GreedyColoring(decompression=decompression)
        backend = di.AutoSparse(di.AutoAutograd(), di.KnownSparsity(_chain_pattern(n)), coloring)
        return di.prepare_hessian(_chain, backend, x)
    if kind in ("columns", "rows"):
        backend = di.AutoSparse(JACOBIAN_BACKENDS[kind], di.KnownSparsity(_coupled_pattern()))
        return di.prepare_jacobian(_coupled, backend, X23)
    # wider than tall (a product's size tells pushforwards and pullbacks apart), two pullbacks
    backend = di.AutoSparse(JACOBIAN_BACKENDS[kind], di.KnownSparsity(_two_dense_rows_pattern(n)))
    return di.prepare_jacobian(_two_dense_rows, backend, x)


@pytest.mark.parametrize("kind", ["columns", "rows", "symmetric", "acyclic", "bidirectional"])
def test_plot_colors_each_entry_by_the_product_it_is_read_from(kind):
    n = 8
    prep = _prep(kind, n)
    coloring = di.coloring(prep)
    assert coloring.kind == kind
    ax, rows, cols, products, _ = _drawn(prep)
    pattern = di.sparsity_pattern(prep)
    assert sorted(zip(rows.tolist(), cols.tolist())) == sorted(zip(*pattern.nonzero()))
    if kind == "columns":
        np.testing.assert_array_equal(products, coloring.colors[cols])
    elif kind == "rows":
        np.testing.assert_array_equal(products, coloring.colors[rows])
    elif kind == "acyclic":  # solved for, drawn in the color of its column
        np.testing.assert_array_equal(products, coloring.colors[cols])
    elif kind == "symmetric":  # read from the product of its column's color or of its row's
        assert all(
            p in (coloring.colors[i], coloring.colors[j]) for p, i, j in zip(products, rows, cols)
        )
        assert len(np.unique(products)) == coloring.ncolors
    else:
        pushforwards = len(coloring.groups())
        from_column = products < pushforwards
        np.testing.assert_array_equal(products[from_column], coloring.colors[cols[from_column]])
        np.testing.assert_array_equal(
            products[~from_column] - pushforwards, coloring.row_colors[rows[~from_column]]
        )
        assert from_column.any() and len(np.unique(products[~from_column])) == 2
    shape = pattern.shape
    title = f"{shape[0]} x {shape[1]}, {pattern.nnz} entries, {coloring.ncolors} colors"
    if kind == "bidirectional":
        title += f" ({len(coloring.groups())} column + {len(coloring.row_groups())} row)"
    assert ax.get_title() == title
    assert ax.get_xlim() == (-0.5, shape[1] - 0.5) and ax.get_ylim() == (shape[0] - 0.5, -0.5)
    assert ax.get_aspect() == 1.0


def test_plot_marker_size_and_options_of_a_preparation():
    import matplotlib
    from matplotlib.markers import MarkerStyle

    _, _, _, _, points = _drawn(_prep("columns", 8))
    assert points.get_sizes().tolist() == [36.0]  # the largest marker on a small pattern
    assert points.get_cmap().name == "tab10"
    square = MarkerStyle("s")
    np.testing.assert_array_equal(
        points.get_paths()[0].vertices,
        square.get_path().transformed(square.get_transform()).vertices,
    )
    _, _, _, _, points = _drawn(_prep("columns", 8), markersize=3.0, cmap="viridis")
    assert points.get_sizes().tolist() == [9.0] and points.get_cmap().name == "viridis"
    n = 1000
    diagonal = di.AutoSparse(FD, di.KnownSparsity(scipy.sparse.eye_array(n)))
    prep = di.prepare_jacobian(lambda x: x**2, diagonal, np.ones(n))
    _, _, _, _, points = _drawn(prep)
    assert points.get_sizes().tolist() == [0.25]  # the smallest marker on a large pattern
    n = 120
    diagonal = di.AutoSparse(FD, di.KnownSparsity(scipy.sparse.eye_array(n)))
    prep = di.prepare_jacobian(lambda x: x**2, diagonal, np.ones(n))
    _, _, _, _, points = _drawn(prep)
    np.testing.assert_allclose(points.get_sizes(), [(300.0 / n) ** 2])
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    _, ax = plt.subplots()
    assert di.plot_sparsity(_prep("columns"), ax=ax) is ax
    plt.close(ax.figure)


def test_plot_of_a_matrix_draws_its_nonzero_entries():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dense = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, -1.0], [3.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    import torch

    as_torch = torch.tensor(dense)
    for matrix in (
        dense,
        scipy.sparse.csr_array(dense),
        scipy.sparse.coo_array(dense),
        as_torch,
        as_torch.to_sparse(),  # torch's sparse matrices, never made dense
        as_torch.to_sparse_csr(),
    ):
        ax = di.plot_sparsity(matrix)
        assert ax.get_title() == "4 x 3, 4 entries"
        (line,) = ax.get_lines()
        assert line.get_markersize() == 6.0
        drawn = sorted(zip(*(np.asarray(v, dtype=int) for v in line.get_data()[::-1])))
        assert drawn == [(0, 0), (0, 2), (1, 2), (2, 0)]
        plt.close(ax.figure)
    ax = di.plot_sparsity(np.eye(1000, 2), markersize=2.0)
    assert ax.get_lines()[0].get_markersize() == 2.0 and ax.get_title() == "1000 x 2, 2 entries"
    plt.close(ax.figure)
    ax = di.plot_sparsity(np.eye(1000, 2))
    assert ax.get_lines()[0].get_markersize() == 0.5
    plt.close(ax.figure)
    ax = di.plot_sparsity(np.eye(100, 2))
    assert ax.get_lines()[0].get_markersize() == 3.0
    plt.close(ax.figure)
    with pytest.raises(
        ValueError,
        match=_exactly(
            "matrix: expected a 2-D matrix or a sparse preparation; got shape (2, 2, 2)"
        ),
    ):
        di.plot_sparsity(np.ones((2, 2, 2)))


def test_plot_without_matplotlib_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    message = (
        "plot_sparsity draws with matplotlib, which is not installed: "
        "pip install 'diffinterface[plot]'"
    )
    with pytest.raises(ImportError, match=f"^{_exactly(message)}$") as raised:
        di.plot_sparsity(np.eye(3))
    assert raised.value.name == "matplotlib"


def test_the_hessian_of_a_vector_f_is_refused_naming_the_hessian():
    backend = di.AutoSparse(di.AutoAutograd(), di.KnownSparsity(np.eye(3)))
    with pytest.raises(
        ValueError, match=_exactly("f: hessian needs f to return a scalar; it returns shape (3,)")
    ):
        di.hessian(np.sin, backend, np.ones(3))
