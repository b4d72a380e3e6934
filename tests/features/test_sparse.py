"""AutoSparse: sparse results equal the dense ones on every backend, and what the wrapper promises.

The kit's sparse scenarios (``diffinterface/testing/sparse.py``: banded, block
diagonal, arrow, random, a dense row, a dense column; Hessians banded, block
diagonal, arrow, random) run against every backend of
``diffinterface.testing.BACKENDS`` in every array family it accepts.
"""

import warnings

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing import BACKENDS, CountingFunction
from diffinterface.testing.sparse import sparse_pytest_cases, sparse_scenarios, to_dense_numpy


@pytest.fixture(autouse=True)
def _dense_colorings_are_expected():
    # The dense-row scenario colors as many columns as it has under a forward backend: asdex warns.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Coloring used")
        yield


@pytest.mark.parametrize("case", sparse_pytest_cases(BACKENDS))
def test_sparse_equals_dense(case):
    case.check()


def chain(x):
    xp = di.array_namespace(x)
    r1, r2 = x[1:] - x[:-1], x[2:] - x[:-2]
    return xp.sum(r1**2 + r1**4 + xp.exp(-r1)) + xp.sum(-0.1 * r2**3)


def banded(x):
    xp = di.array_namespace(x)
    return x[1:-1] ** 2 * x[:-2] - xp.sin(x[2:])


X = np.linspace(0.2, 1.3, 30)


def test_forward_differences_use_ncolors_plus_one_evaluations():
    backend = di.AutoSparse(di.AutoFiniteDiff(method="forward"))
    f = CountingFunction(banded)
    prep = di.prepare_jacobian(f, backend, X)
    assert di.ncolors(prep) == 3
    for call in (di.jacobian, di.value_and_jacobian):
        before = f.count
        call(f, backend, X, prep=prep)
        assert f.count - before == di.ncolors(prep) + 1, call.__name__


def test_central_differences_use_two_evaluations_per_color():
    backend = di.AutoSparse(di.AutoFiniteDiff())
    f = CountingFunction(banded)
    prep = di.prepare_jacobian(f, backend, X)
    before = f.count
    di.jacobian(f, backend, X, prep=prep)
    assert f.count - before == 2 * di.ncolors(prep)


def test_chain_hessian_has_five_colors_no_more_than_asdex():
    import asdex
    import jax
    import jax.numpy as jnp

    prep = di.prepare_hessian(chain, di.AutoSparse(di.AutoJAX()), X)
    with jax.enable_x64(True):
        reference = asdex.hessian_coloring(chain, jnp.asarray(X))
    assert di.ncolors(prep) <= min(5, reference.num_colors)
    assert di.coloring(prep).kind == "symmetric"


def test_row_coloring_for_reverse_backends_column_coloring_for_forward():
    for backend, kind in (
        (di.AutoJAX(mode="reverse"), "rows"),
        (di.AutoJAX(mode="forward"), "columns"),
    ):
        prep = di.prepare_jacobian(banded, di.AutoSparse(backend), X)
        assert di.coloring(prep).kind == kind
    # A both-modes backend takes the coloring with fewer colors: columns for a dense column,
    # rows for a dense row (either would need one color per column or row the other way).
    functions = {s.name: s.f for s in sparse_scenarios()}
    dense_column, dense_row = functions["jacobian-dense_column"], functions["jacobian-dense_row"]
    prep = di.prepare_jacobian(dense_column, di.AutoSparse(di.AutoJAX()), X)
    assert (di.coloring(prep).kind, di.ncolors(prep)) == ("columns", 2)
    prep = di.prepare_jacobian(dense_row, di.AutoSparse(di.AutoJAX()), X)
    assert di.coloring(prep).kind == "rows" and di.ncolors(prep) <= 4


def test_gather_positions_agree_with_asdex_decompression():
    # The products of a matrix with the pattern (symmetric for a Hessian) and the seeds, read back
    # by the gather positions and by asdex.decompress: both give the matrix's entries. (A star
    # coloring may read an off-diagonal entry from either of its two symmetric products, so the
    # positions themselves need not be asdex's.)
    import asdex
    import jax
    import jax.numpy as jnp

    preps = [di.prepare_hessian(chain, di.AutoSparse(di.AutoJAX()), X)]
    for mode in ("forward", "reverse"):
        preps.append(di.prepare_jacobian(banded, di.AutoSparse(di.AutoJAX(mode=mode)), X))
    rng = np.random.default_rng(0)
    for prep in preps:
        compression = prep.impl.sparse.compression
        matrix = np.zeros(compression.shape)
        matrix[compression.rows, compression.cols] = rng.normal(size=len(compression.rows))
        if compression.kind == "symmetric":
            matrix = (matrix + matrix.T) / 2
        seeds = compression.seeds.astype(float)
        compressed = seeds @ matrix if compression.kind == "rows" else seeds @ matrix.T
        expected = matrix[compression.rows, compression.cols]
        ours = compressed.reshape(-1)[compression.gather]
        np.testing.assert_allclose(ours, expected, rtol=1e-14, err_msg=compression.kind)
        with jax.enable_x64(True):
            reference = asdex.decompress(jnp.asarray(compressed), compression.colored)
        np.testing.assert_allclose(
            np.asarray(reference.data), expected, rtol=1e-14, err_msg=compression.kind
        )


def test_one_source_function_detected_with_jax_differentiated_with_torch():
    import torch

    x = torch.linspace(0.2, 1.3, 30, dtype=torch.float64)
    prep = di.prepare_hessian(chain, di.AutoSparse(di.AutoTorch()), x)
    H = di.hessian(chain, di.AutoSparse(di.AutoTorch()), x, prep=prep)
    assert H.layout == torch.sparse_csr and H.dtype == torch.float64
    np.testing.assert_allclose(
        H.to_dense().numpy(), di.hessian(chain, di.AutoTorch(), x).numpy(), rtol=1e-12
    )


def test_tracer_error_names_the_alternatives_when_jax_cannot_trace():
    import torch

    def torch_only(x):
        return torch.sin(torch.as_tensor(x)) * 2

    with pytest.raises(di.UnsupportedError, match="DenseSparsityDetector.*KnownSparsity"):
        di.prepare_jacobian(
            torch_only, di.AutoSparse(di.AutoTorch()), torch.ones(4, dtype=torch.float64)
        )


def test_dense_detector_and_known_sparsity_work_where_jax_cannot_trace():
    import torch

    def torch_only(x):
        return torch.sin(x[1:]) * x[:-1]

    x = torch.linspace(0.2, 1.3, 9, dtype=torch.float64)
    expected = di.jacobian(torch_only, di.AutoTorch(), x).numpy()
    pattern = np.abs(expected) > 0
    for detector in (di.DenseSparsityDetector(di.AutoTorch()), di.KnownSparsity(pattern)):
        backend = di.AutoSparse(di.AutoTorch(), sparsity_detector=detector)
        prep = di.prepare_jacobian(torch_only, backend, x)
        assert di.ncolors(prep) == 2
        np.testing.assert_allclose(
            to_dense_numpy(di.jacobian(torch_only, backend, x, prep=prep)), expected
        )


def test_dense_detector_is_local():
    # At x[0] == 0 the entry d(x0 + x0 * x1)/dx1 = x0 vanishes: the dense detector leaves it out.
    f = lambda x: x[:1] + x[:1] * x[1:]  # noqa: E731
    x = np.array([0.0, 2.0])
    local = di.prepare_jacobian(
        f, di.AutoSparse(di.AutoJAX(), di.DenseSparsityDetector(di.AutoJAX())), x
    )
    global_ = di.prepare_jacobian(f, di.AutoSparse(di.AutoJAX()), x)
    assert di.sparsity_pattern(local).nnz == 1 and di.sparsity_pattern(global_).nnz == 2


def test_known_sparsity_is_checked():
    with pytest.raises(ValueError, match=r"shape .*\(28, 30\).* got \(3, 3\)"):
        di.prepare_jacobian(banded, di.AutoSparse(di.AutoJAX(), di.KnownSparsity(np.eye(3))), X)
    upper = np.triu(np.ones((30, 30), dtype=bool))
    with pytest.raises(ValueError, match="symmetric"):
        di.prepare_hessian(chain, di.AutoSparse(di.AutoJAX(), di.KnownSparsity(upper)), X)


def test_dense_result_has_the_dense_operators_shapes():
    backend = di.AutoSparse(di.AutoJAX(), dense_result=True)
    x = X.reshape(5, 6)
    f = lambda x: di.array_namespace(x).sin(x) * x[:, :1]  # noqa: E731
    J = di.jacobian(f, backend, x)
    assert isinstance(J, np.ndarray) and J.shape == (5, 6, 5, 6)
    np.testing.assert_allclose(J, di.jacobian(f, di.AutoJAX(), x), rtol=1e-14)
    H = di.hessian(chain, backend, X)
    np.testing.assert_allclose(H, di.hessian(chain, di.AutoJAX(), X), rtol=1e-13)


def test_out_must_have_the_prepared_pattern():
    backend = di.AutoSparse(di.AutoJAX())
    prep = di.prepare_jacobian(banded, backend, X)
    from scipy.sparse import csr_array

    with pytest.raises(ValueError, match="prepared pattern"):
        di.jacobian(banded, backend, X, prep=prep, out=csr_array(np.eye(28, 30)))
    with pytest.raises(ValueError, match="out: expected"):
        di.jacobian(banded, backend, X, prep=prep, out=np.zeros((28, 30)))


def test_results_do_not_share_writable_indices_and_inputs_stay_unchanged():
    backend = di.AutoSparse(di.AutoFiniteDiff())
    x = X.copy()
    J = di.jacobian(banded, backend, x)
    np.testing.assert_array_equal(x, X)
    with pytest.raises(ValueError):
        J.indices[0] = 3


def test_other_operators_are_the_dense_backends():
    backend = di.AutoSparse(di.AutoJAX())
    np.testing.assert_allclose(
        di.gradient(chain, backend, X), di.gradient(chain, di.AutoJAX(), X), rtol=1e-14
    )
    t = (np.ones_like(X),)
    np.testing.assert_allclose(
        di.hvp(chain, backend, X, t)[0], di.hvp(chain, di.AutoJAX(), X, t)[0], rtol=1e-14
    )


def test_strict_preparation_checks_apply():
    backend = di.AutoSparse(di.AutoFiniteDiff())
    prep = di.prepare_jacobian(banded, backend, X, strict=True)
    with pytest.raises(di.PreparationMismatchError):
        di.jacobian(banded, backend, np.ones(31), prep=prep)


def test_second_order_dense_backend_for_hessians():
    backend = di.AutoSparse(di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX()))
    H = di.hessian(chain, backend, X)
    np.testing.assert_allclose(
        H.toarray(), di.hessian(chain, di.AutoJAX(), X), rtol=1e-5, atol=1e-6
    )


def test_constant_depending_on_context_and_zero_jacobian():
    f = lambda x, c: x[1:] * c - x[:-1]  # noqa: E731
    backend = di.AutoSparse(di.AutoTorch())
    J = di.jacobian(f, backend, X, di.Constant(np.float64(3.0)))
    np.testing.assert_allclose(
        J.toarray(), di.jacobian(f, di.AutoTorch(), X, di.Constant(3.0)), rtol=1e-14
    )
    value, J = di.value_and_jacobian(
        lambda x: x[:3] * 0.0 + 1.0, di.AutoSparse(di.AutoFiniteDiff()), X
    )
    assert J.nnz == 0 and J.shape == (3, 30)
    np.testing.assert_array_equal(value, np.ones(3))


def test_introspection_and_plot():
    import matplotlib

    matplotlib.use("Agg")
    prep = di.prepare_jacobian(banded, di.AutoSparse(di.AutoFiniteDiff()), X)
    pattern = di.sparsity_pattern(prep)
    assert pattern.shape == (28, 30) and pattern.nnz == 84
    groups = di.coloring(prep).groups()
    assert sorted(np.concatenate(groups).tolist()) == list(range(30))
    ax = di.plot_sparsity(prep)
    assert ax.get_title() == "28 x 30, 84 entries, 3 colors"
    ax = di.plot_sparsity(di.jacobian(banded, di.AutoSparse(di.AutoFiniteDiff()), X, prep=prep))
    assert ax.get_title() == "28 x 30, 84 entries"
    with pytest.raises(TypeError, match="AutoSparse"):
        di.ncolors(di.prepare_jacobian(banded, di.AutoFiniteDiff(), X))


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: di.AutoSparse("jax"), "dense_backend"),
        (lambda: di.AutoSparse(di.AutoSparse(di.AutoJAX())), "dense_backend"),
        (lambda: di.AutoSparse(di.AutoJAX(), sparsity_detector="tracer"), "sparsity_detector"),
        (lambda: di.AutoSparse(di.AutoJAX(), coloring_algorithm=None), "coloring_algorithm"),
        (lambda: di.GreedyColoring(order="fastest"), "order"),
        (lambda: di.DenseSparsityDetector(di.AutoJAX(), atol=-1.0), "atol"),
        (lambda: di.KnownSparsity("eye"), "pattern"),
    ],
    ids=["string-backend", "nested", "detector", "coloring", "order", "atol", "pattern"],
)
def test_bad_configuration_names_the_argument(build, message):
    with pytest.raises((TypeError, ValueError), match=message):
        build()


def test_selectors_are_hashable():
    known = di.KnownSparsity(np.eye(4, dtype=bool))
    assert hash(di.AutoSparse(di.AutoJAX(), known)) == hash(
        di.AutoSparse(di.AutoJAX(), di.KnownSparsity(np.eye(4)))
    )


def test_scenarios_cover_every_shape_asked():
    names = {s.name for s in sparse_scenarios()}
    for shape in ("banded", "block_diagonal", "arrow", "random", "dense_row", "dense_column"):
        assert f"jacobian-{shape}" in names


def _quartic_coupling(x):
    # A float32 program of the fuzz campaign whose sparse finite-difference Hessian was three
    # times less accurate than the dense one (the colors' tangents doubled the diagonal's step).
    xp = di.array_namespace(x)
    pairs = xp.reshape(x, (4, 2))
    coupled = xp.reshape(xp.square(pairs) * xp.sum(pairs**2, axis=1, keepdims=True), (-1,))
    return xp.sum(xp.sin(xp.tanh(x) + coupled))


@pytest.mark.parametrize("name", list(BACKENDS))
def test_sparse_hessian_is_as_accurate_as_the_dense_one_in_float32(name):
    backend = BACKENDS[name]
    x = np.float32([0.46, 0.02, 0.81, -0.54, -0.34, -0.91, 1.43, 1.44])
    reference = to_dense_numpy(
        di.hessian(_quartic_coupling, di.AutoFiniteDiff(), x.astype(np.float64))
    )
    if not di.check_available(backend):
        pytest.fail(f"{name} is requested but not available")
    dense = to_dense_numpy(di.hessian(_quartic_coupling, backend, x))
    sparse = to_dense_numpy(di.hessian(_quartic_coupling, di.AutoSparse(backend), x))
    scale = np.max(np.abs(reference))
    dense_error = np.max(np.abs(dense - reference)) / scale
    sparse_error = np.max(np.abs(sparse - reference)) / scale
    assert sparse.dtype == np.float32
    assert sparse_error <= 1.5 * dense_error + 1e-5, (sparse_error, dense_error)
