"""AutoSparse's products over dense backends without JAX: the hvps of a dense backend that bounds
its batches (``Capabilities.max_batch``), value, gradient and Hessian from one pass of a forward or
a reverse outer backend (or differences of differences), and the side a Jacobian is colored on when
the dense backend's mode is set (or a ``SecondOrder`` backend serves first order), each compared
with the dense result.

No JAX: the mutation testing of ``wrappers/sparse/`` (docs/testing.md) runs these tests in forked
children, where JAX can hang when it compiles.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Optional

import numpy as np
import pytest
import scipy.sparse

import diffinterface as di
from diffinterface.backends.autograd.adapter import AutogradAdapter
from tests.features.test_sparse_configuration import _coupled, _coupled_pattern  # R^6 -> R^5


@pytest.fixture(autouse=True)
def _dense_colorings_are_expected():
    # small patterns color every column: asdex warns that there is no speedup
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Coloring used")
        warnings.filterwarnings("ignore", message="No speedup")
        yield


@dataclasses.dataclass(frozen=True)
class AutoAutogradInPairs(di.AbstractBackend):
    """Autograd whose batched primitives take at most two seeds a call."""

    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None


#: the number of tangents each prepared hvp was prepared for, in order
HVP_BATCHES: list = []


class AutogradInPairsAdapter(AutogradAdapter):
    capabilities = AutogradAdapter.capabilities.replace(max_batch=2)

    def prepare_hvp(self, problem):
        HVP_BATCHES.append(len(problem.tangents))
        return super().prepare_hvp(problem)


# registered for the whole session: a selector of this module's own, which no other test lists
di.register_backend(AutoAutogradInPairs, AutogradInPairsAdapter)


@pytest.fixture(autouse=True)
def _fresh_batches():
    HVP_BATCHES.clear()


def _chain(x):
    xp = di.array_namespace(x)
    flat = xp.reshape(x, (-1,))
    couplings = xp.sum(xp.sin(flat[1:] * flat[:-1])) + xp.sum(xp.cos(flat[2:] * flat[:-2]))
    return couplings + xp.sum(flat**3) + 0.5 * xp.sum(flat)


def _chain_pattern(n):
    # entries up to two off the diagonal: three colors at least, for either decompression
    return np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= 2


X = np.linspace(-0.7, 0.9, 8).reshape(2, 4)


def _dense_hessian_parts(x):
    exact = di.AutoAutograd()
    value, gradient = di.value_and_gradient(_chain, exact, x)
    return value, gradient, di.hessian(_chain, exact, x).reshape(x.size, x.size)


@pytest.mark.parametrize("decompression", ["direct", "substitution"])
def test_hvps_go_in_batches_of_the_dense_backends_max_batch(decompression):
    known = di.KnownSparsity(_chain_pattern(8))
    coloring = di.GreedyColoring(decompression=decompression)
    value, gradient, expected = _dense_hessian_parts(X)
    backend = di.AutoSparse(AutoAutogradInPairs(), known, coloring)
    prep = di.prepare_hessian(_chain, backend, X)
    ncolors = di.ncolors(prep)
    assert ncolors >= 3  # more seeds than one batch takes
    # the seeds in batches of two, the last one what is left
    assert HVP_BATCHES[-((ncolors + 1) // 2) :] == [2] * (ncolors // 2) + [1] * (ncolors % 2)
    H = di.hessian(_chain, backend, X, prep=prep)
    assert isinstance(H, scipy.sparse.csr_array) and H.shape == (8, 8)
    np.testing.assert_allclose(H.toarray(), expected, rtol=1e-13, atol=1e-14)
    got_value, got_gradient, H = di.value_gradient_and_hessian(_chain, backend, X, prep=prep)
    np.testing.assert_allclose(got_value, value, rtol=1e-14)
    assert got_gradient.shape == X.shape
    np.testing.assert_allclose(got_gradient, gradient, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(H.toarray(), expected, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("decompression", ["direct", "substitution"])
@pytest.mark.parametrize(
    "dense, rtol",
    # batches of two hvps and one pass for the value, gradient and Hessian; differences of
    # differences, whose value and gradient come from the dense backend's own gradient
    [(AutoAutogradInPairs(), 1e-13), (di.AutoFiniteDiff(), 1e-5)],
    ids=["batched", "differences"],
)
def test_a_constant_reaches_every_product_and_the_value_and_gradient(dense, rtol, decompression):
    def scaled_chain(x, c):
        return c[0] * _chain(x)

    known = di.KnownSparsity(_chain_pattern(8))
    coloring = di.GreedyColoring(decompression=decompression)
    backend = di.AutoSparse(dense, known, coloring)
    scale = di.Constant(np.array([-1.5]))
    value, gradient, expected = (-1.5 * part for part in _dense_hessian_parts(X))
    prep = di.prepare_hessian(scaled_chain, backend, X, scale)
    assert di.ncolors(prep) >= 3  # a second batch of hvps where the dense backend takes two
    H = di.hessian(scaled_chain, backend, X, scale, prep=prep)
    np.testing.assert_allclose(H.toarray(), expected, rtol=rtol, atol=rtol)
    got = di.value_gradient_and_hessian(scaled_chain, backend, X, scale, prep=prep)
    np.testing.assert_allclose(got[0], value, rtol=1e-14)
    np.testing.assert_allclose(got[1], gradient, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got[2].toarray(), expected, rtol=rtol, atol=rtol)


def test_hvps_of_one_batch_when_the_dense_backend_sets_no_bound():
    known = di.KnownSparsity(_chain_pattern(8))
    backend = di.AutoSparse(di.AutoAutograd(), known)
    H = di.hessian(_chain, backend, X)
    np.testing.assert_allclose(H.toarray(), _dense_hessian_parts(X)[2], rtol=1e-13, atol=1e-14)


OUTER_BACKENDS = {
    # the outer's pushforwards of [f, gradient]
    "forward": di.SecondOrder(di.AutoTorch(mode="forward"), di.AutoAutograd()),
    # its pullbacks with cotangents [0, seed]
    "reverse": di.SecondOrder(di.AutoTorch(mode="reverse"), di.AutoAutograd()),
    # an outer of both modes and none set works forward
    "both": di.SecondOrder(di.AutoTorch(), di.AutoAutograd()),
    # finite differences of autograd's gradient: an outer that only pushes forward
    "differences_of_gradients": di.SecondOrder(di.AutoFiniteDiff(), di.AutoAutograd()),
    # differences of differences: the dense backend's own gradient and hvps
    "differences": di.AutoFiniteDiff(),
}


@pytest.mark.parametrize("outer", list(OUTER_BACKENDS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_value_gradient_and_hessian_of_every_outer_mode_equal_the_dense_ones(outer, dtype):
    dense = OUTER_BACKENDS[outer]
    x = X.astype(dtype)
    value, gradient, expected = _dense_hessian_parts(X)
    if dtype == np.float32 and outer == "differences":
        rtol, atol = 3e-2, 3e-2
    elif dtype == np.float32 or outer.startswith("differences"):
        rtol, atol = 2e-3, 2e-3
    else:
        rtol, atol = 1e-12, 1e-13
    for coloring in (di.GreedyColoring(), di.GreedyColoring(decompression="substitution")):
        backend = di.AutoSparse(dense, di.KnownSparsity(_chain_pattern(8)), coloring)
        prep = di.prepare_hessian(_chain, backend, x)
        got_value, got_gradient, H = di.value_gradient_and_hessian(_chain, backend, x, prep=prep)
        assert np.asarray(got_value).dtype == dtype and got_gradient.dtype == dtype
        assert H.dtype == dtype and H.shape == (8, 8)
        np.testing.assert_allclose(got_value, value, rtol=max(rtol, 1e-6))
        assert got_gradient.shape == x.shape
        np.testing.assert_allclose(got_gradient, gradient, rtol=rtol, atol=atol)
        np.testing.assert_allclose(H.toarray(), expected, rtol=rtol, atol=atol)
        H = di.hessian(_chain, backend, x, prep=prep)
        np.testing.assert_allclose(H.toarray(), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize(
    "dense, kind",
    [
        # a backend of both modes takes the side of fewer colors (rows here) unless mode= is set
        (di.AutoTorch(), "rows"),
        (di.AutoTorch(mode="forward"), "columns"),
        (di.AutoTorch(mode="reverse"), "rows"),
        # a SecondOrder backend's Jacobian is its inner's: the inner's mode, not the outer's
        (di.SecondOrder(di.AutoTorch(mode="reverse"), di.AutoTorch(mode="forward")), "columns"),
        (di.SecondOrder(di.AutoFiniteDiff(), di.AutoTorch(mode="reverse")), "rows"),
        (di.SecondOrder(di.AutoTorch(mode="forward"), di.AutoTorch()), "rows"),
    ],
    ids=str,
)
def test_the_dense_backends_mode_picks_the_side_a_jacobian_is_colored_on(dense, kind):
    x = np.linspace(0.2, 1.2, 6)
    expected = di.jacobian(_coupled, di.AutoAutograd(), x)
    backend = di.AutoSparse(dense, di.KnownSparsity(_coupled_pattern()))
    prep = di.prepare_jacobian(_coupled, backend, x)
    assert di.coloring(prep).kind == kind
    assert di.ncolors(prep) == (6 if kind == "columns" else 3)
    J = di.jacobian(_coupled, backend, x, prep=prep)
    np.testing.assert_allclose(J.toarray(), expected, rtol=1e-12, atol=1e-13)
    value, J = di.value_and_jacobian(_coupled, backend, x, prep=prep)
    np.testing.assert_allclose(value, _coupled(x), rtol=1e-14)
    np.testing.assert_allclose(J.toarray(), expected, rtol=1e-12, atol=1e-13)


def _norms(x):
    # two dense rows: a bicoloring reads them from pullbacks and takes no pushforward
    xp = di.array_namespace(x)
    return xp.stack([xp.sum(x**2), xp.sum(xp.sin(x))])


def test_a_bicoloring_of_pullbacks_only_or_of_no_color_equals_the_dense_jacobian():
    x = np.linspace(0.2, 1.2, 6)
    mixed = di.MixedMode(di.AutoFiniteDiff(method="forward"), di.AutoAutograd())
    backend = di.AutoSparse(mixed, di.KnownSparsity(np.ones((2, 6))))
    prep = di.prepare_jacobian(_norms, backend, x)
    coloring = di.coloring(prep)
    assert coloring.kind == "bidirectional"
    assert coloring.groups() == [] and len(coloring.row_groups()) >= 1
    expected = di.jacobian(_norms, di.AutoAutograd(), x)
    J = di.jacobian(_norms, backend, x, prep=prep).toarray()
    np.testing.assert_allclose(J, expected, rtol=1e-14)
    value, J = di.value_and_jacobian(_norms, backend, x, prep=prep)
    np.testing.assert_allclose(value, _norms(x), rtol=1e-15)
    np.testing.assert_allclose(J.toarray(), expected, rtol=1e-14)
    # f does not depend on x: no color at all, one product still gives the value
    constant = lambda x: np.array([1.5, -2.0]) + 0.0 * x[:2]  # noqa: E731
    backend = di.AutoSparse(mixed, di.KnownSparsity(np.zeros((2, 6))))
    prep = di.prepare_jacobian(constant, backend, x)
    assert di.ncolors(prep) == 0
    value, J = di.value_and_jacobian(constant, backend, x, prep=prep)
    np.testing.assert_allclose(value, [1.5, -2.0])
    assert J.shape == (2, 6) and J.nnz == 0
    assert di.jacobian(constant, backend, x, prep=prep).nnz == 0


def test_an_outer_pushing_forward_differences_the_gradient_once_per_color():
    # value, gradient and Hessian from the forward differences of [f, gradient]: one gradient at x
    # and one per color (not a pullback through the whole dense Jacobian of the gradient)
    calls = []

    def counted(x):
        calls.append(1)
        return _chain(x)

    dense = di.SecondOrder(di.AutoFiniteDiff(method="forward"), di.AutoAutograd())
    backend = di.AutoSparse(dense, di.KnownSparsity(_chain_pattern(8)))
    prep = di.prepare_hessian(counted, backend, X)
    calls.clear()
    value, gradient, H = di.value_gradient_and_hessian(counted, backend, X, prep=prep)
    assert len(calls) == di.ncolors(prep) + 1 < X.size
    np.testing.assert_allclose(H.toarray(), _dense_hessian_parts(X)[2], rtol=1e-4, atol=1e-5)


def test_a_bicoloring_of_both_sides_passes_the_contexts_to_each():
    x = np.linspace(0.2, 1.2, 6)
    scaled = lambda x, c: c * _coupled(x)  # noqa: E731
    mixed = di.MixedMode(di.AutoFiniteDiff(method="forward"), di.AutoAutograd())
    backend = di.AutoSparse(mixed, di.KnownSparsity(_coupled_pattern()))
    prep = di.prepare_jacobian(scaled, backend, x, di.Constant(1.0))
    assert di.coloring(prep).groups() and di.coloring(prep).row_groups()  # both sides
    expected = -3.0 * di.jacobian(_coupled, di.AutoAutograd(), x)
    J = di.jacobian(scaled, backend, x, di.Constant(-3.0), prep=prep)
    np.testing.assert_allclose(J.toarray(), expected, rtol=1e-6, atol=1e-7)
    value, J = di.value_and_jacobian(scaled, backend, x, di.Constant(-3.0), prep=prep)
    np.testing.assert_allclose(value, -3.0 * _coupled(x), rtol=1e-15)
    np.testing.assert_allclose(J.toarray(), expected, rtol=1e-6, atol=1e-7)
