"""AutoFiniteDiff's second order (``backends/finitediff/second_order.py``): the points each recipe
evaluates f at, the outer steps they are moved by, and the accuracy that follows.

The outer step of entry i is ``max(rel * |x_i|, abs)`` made exact in x's dtype (``(x_i + h) -
x_i``), with the selector's ``rel_step`` and ``abs_step`` or ``eps**(1/4)`` for both; the complex
step's outer central differences take ``eps**(1/3)`` whatever the selector's steps (those set the
imaginary step). An hvp's central differences take half steps, along t by the step of the largest
``|x_i|`` on t's support over ``max |t|``.

Written against the survivors of a mutation run (docs/testing.md, "Mutation testing"); numpy
only, so that mutmut's forked children never start JAX.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import diffinterface as di

F = di.AutoFiniteDiff
EPS = float(np.finfo(np.float64).eps)
X = np.array([0.0, 5.0, -40.0])
#: the selector's steps: rel_step 1e-3 decides the steps of |x_i| > 10, abs_step 1e-2 the others
STEPPED = F(rel_step=1e-3, abs_step=1e-2)


class Recorded:
    """f(x) = sum(x**3) / 6 + x[0] * x[-1] (Hessian diag(x) + the pair), keeping a copy of each point."""

    def __init__(self):
        self.points = []

    def __call__(self, x):
        self.points.append(np.array(x, copy=True))
        return np.sum(x**3) / 6 + x[0] * x[-1]


def hessian_of_recorded(x):
    expected = np.diag(np.asarray(x, dtype=float))
    expected[0, -1] += 1
    expected[-1, 0] += 1
    return expected


def exact(x, h):
    """The steps h made exact at x: what x + h and x - h differ from x by."""
    return (x + h) - x


def points_of(call, f):
    """The points f is evaluated at by ``call()`` (the preparation's evaluations left out)."""
    f.points.clear()
    call()
    return f.points


def as_set(points):
    return {tuple(np.asarray(p).tolist()) for p in points}


def moved(x, *moves):
    """x with ``h`` added to entry ``i`` for each ``(i, h)``, in that order."""
    point = np.array(x, copy=True)
    for i, h in moves:
        point[i] += h
    return point


# -- the Hessian -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "backend, rel, absolute",
    [
        (STEPPED, 1e-3, 1e-2),
        (F(method="forward", rel_step=1e-3, abs_step=1e-2), 1e-3, 1e-2),
        (F(), EPS ** (1 / 4), EPS ** (1 / 4)),
        (F(rel_step=1e-3), 1e-3, 1e-3),
    ],
    ids=["selector-steps", "forward", "default-steps", "abs-step-defaults-to-rel-step"],
)
def test_the_hessian_of_the_real_methods_evaluates_f_at_x_moved_by_one_or_two_outer_steps(
    backend, rel, absolute
):
    f = Recorded()
    prep = di.prepare_hessian(f, backend, X)
    points = points_of(lambda: di.hessian(f, backend, X, prep=prep), f)
    h = exact(X, np.maximum(rel * np.abs(X), absolute))
    expected = [X]
    for i in range(3):
        expected += [moved(X, (i, h[i])), moved(X, (i, -h[i]))]
    for i, j in itertools.combinations(range(3), 2):
        for si, sj in itertools.product((1, -1), repeat=2):
            expected.append(moved(X, (i, si * h[i]), (j, sj * h[j])))
    assert len(points) == len(expected) == 2 * 3**2 + 1
    assert as_set(points) == as_set(expected)


def test_value_gradient_and_hessian_reuses_f_at_x_for_the_second_differences():
    f = Recorded()
    prep = di.prepare_hessian(f, STEPPED, X)
    points = points_of(lambda: di.value_gradient_and_hessian(f, STEPPED, X, prep=prep), f)
    assert sum(np.array_equal(p, X) for p in points) == 1
    # the gradient's 2n points, the Hessian's 2n**2 others
    assert len(points) == 1 + 2 * 3 + 2 * 3**2


@pytest.mark.parametrize("rel_step", [None, 1e-3])
def test_the_complex_steps_hessian_moves_x_by_cbrt_eps_whatever_the_selectors_steps(rel_step):
    f = Recorded()
    backend = F(method="complex", rel_step=rel_step, abs_step=rel_step)
    prep = di.prepare_hessian(f, backend, X)
    points = points_of(lambda: di.hessian(f, backend, X, prep=prep), f)
    h = exact(X, EPS ** (1 / 3) * np.maximum(np.abs(X), 1.0))
    # the complex-step gradient (one complex point per entry) at x +- h_j e_j
    centres = [moved(X, (j, s * h[j])) for j in range(3) for s in (1, -1)]
    assert len(points) == 3 * len(centres)
    assert as_set(np.real(p) for p in points) == as_set(centres)
    assert all(np.count_nonzero(np.imag(p)) == 1 for p in points)


@pytest.mark.parametrize("operator", ["hessian", "hvp", "second_derivative"])
def test_the_complex_step_evaluates_f_at_points_of_xs_precision(operator):
    # complex64 points for a float32 x: f computes in x's precision, as at real points
    f = Recorded()
    backend = F(method="complex")
    for dtype, complex_dtype in (("float32", "complex64"), ("float64", "complex128")):
        x = X.astype(dtype) if operator != "second_derivative" else np.asarray(-4.0, dtype)
        extra = ((np.ones(3, dtype),),) if operator == "hvp" else ()
        call = getattr(di, operator)
        g = f if operator != "second_derivative" else (lambda x: f(np.atleast_1d(x)))
        points = points_of(lambda: call(g, backend, x, *extra), f)
        assert {p.dtype.name for p in points if np.iscomplexobj(p)} == {complex_dtype}


@pytest.mark.parametrize("method", ["central", "complex"])
def test_the_hessian_is_symmetric_of_x_dtype_and_accurate(method):
    x = np.array([0.5, -1.5, 2.0])
    for dtype, bound in (("float64", 1e-6), ("float32", 2e-2)):
        hessian = di.hessian(Recorded(), F(method=method), x.astype(dtype))
        assert hessian.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(hessian, hessian.T)
        np.testing.assert_allclose(hessian, hessian_of_recorded(x), rtol=0, atol=bound)


def test_a_hessian_at_a_matrix_x_has_the_shape_x_shape_twice():
    def f(x):
        return np.sum(x[0] * x[1] ** 2)

    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    for method in ("central", "complex"):
        _, gradient, hessian = di.value_gradient_and_hessian(f, F(method=method), x)
        assert gradient.shape == (2, 2) and hessian.shape == (2, 2, 2, 2)
        np.testing.assert_array_equal(di.hessian(f, F(method=method), x), hessian)
        flat = hessian.reshape(4, 4)
        # f = x00 x10**2 + x01 x11**2: d2/dx00 dx10 = 2 x10, d2/dx10**2 = 2 x00, ...
        expected = np.zeros((4, 4))
        expected[0, 2] = expected[2, 0] = 2 * x[1, 0]
        expected[2, 2] = 2 * x[0, 0]
        expected[1, 3] = expected[3, 1] = 2 * x[1, 1]
        expected[3, 3] = 2 * x[0, 1]
        np.testing.assert_allclose(flat, expected, rtol=0, atol=1e-6)


# -- the hvp ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["central", "complex"])
def test_an_hvp_at_a_matrix_x_has_xs_shape(method):
    def f(x):
        return np.sum(x[0] * x[1] ** 2)

    x, t = np.array([[1.0, 2.0], [3.0, -1.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])
    gradient, (product,) = di.gradient_and_hvp(f, F(method=method), x, (t,))
    assert gradient.shape == product.shape == (2, 2)
    np.testing.assert_allclose(gradient, [[9.0, 1.0], [6.0, -4.0]], rtol=0, atol=1e-6)
    # H t: t moves x01 and x10; d2f/dx01 dx11 = 2 x11, d2f/dx10 dx00 = 2 x10, d2f/dx10**2 = 2 x00
    expected = [[2 * x[1, 0], 0.0], [2 * x[0, 0], 2 * x[1, 1]]]
    np.testing.assert_allclose(product, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("method", ["central", "complex"])
def test_gradient_and_hvp_evaluates_the_gradients_points_and_the_hvps_only(method):
    f, t = Recorded(), np.ones(3)
    backend = F(method=method)
    prep = di.prepare_hvp(f, backend, X, (t,))
    points = points_of(lambda: di.gradient_and_hvp(f, backend, X, (t,), prep=prep), f)
    # central: the gradient's 2n points (not f(x)) and 4n per tangent; complex: n and 2n
    assert len(points) == (2 * 3 + 4 * 3 if method == "central" else 3 + 2 * 3)


@pytest.mark.parametrize("method", ["central", "complex"])
def test_second_order_preparations_sweep_one_seed_at_a_time(method):
    backend = F(method=method)
    assert di.batch_size(di.prepare_hessian(Recorded(), backend, X)) == 1
    assert di.batch_size(di.prepare_hvp(Recorded(), backend, X, (np.ones(3),))) == 1


@pytest.mark.parametrize("operator", ["hessian", "hvp"])
def test_a_vector_f_is_refused_naming_the_operator(operator):
    extra = ((np.ones(3),),) if operator == "hvp" else ()
    with pytest.raises(
        ValueError, match=f"^f: {operator} needs f to return a scalar; it returns shape"
    ):
        getattr(di, operator)(np.sin, F(), X, *extra)


def test_the_real_hvp_evaluates_f_at_x_moved_by_half_steps_along_e_i_and_along_t():
    f = Recorded()
    t = np.array([0.0, 2.0, 0.0])
    prep = di.prepare_hvp(f, STEPPED, X, (t,))
    points = points_of(lambda: di.hvp(f, STEPPED, X, (t,), prep=prep), f)
    h = exact(X, 0.5 * np.maximum(1e-3 * np.abs(X), 1e-2))
    # t's support is entry 1 (|x_1| = 5): the step of |x| = 5, over max |t| = 2
    d = exact(5.0, 0.5 * max(1e-3 * 5.0, 1e-2)) / 2.0
    expected = [
        moved(X, (i, si * h[i])) + sd * d * t for i in range(3) for si in (1, -1) for sd in (1, -1)
    ]
    assert len(points) == 4 * 3
    assert as_set(points) == as_set(expected)


@pytest.mark.parametrize("method", ["central", "forward", "complex"])
def test_an_hvp_is_accurate_along_each_tangent_and_zero_along_a_zero_tangent(method):
    f, x = Recorded(), np.array([0.5, -1.5, 2.0])
    tangents = (np.array([1.0, 0.0, 0.0]), np.array([0.0, -2.0, 3.0]), np.zeros(3))
    products = di.hvp(f, F(method=method), x, tangents)
    bound = 1e-9 if method == "complex" else 1e-5
    for t, product in zip(tangents, products):
        np.testing.assert_allclose(product, hessian_of_recorded(x) @ t, rtol=0, atol=bound)
    np.testing.assert_array_equal(products[-1], np.zeros(3))
    gradient, products_again = di.gradient_and_hvp(f, F(method=method), x, tangents)
    np.testing.assert_allclose(gradient, x**2 / 2 + [x[-1], 0, x[0]], rtol=0, atol=1e-5)
    np.testing.assert_array_equal(products_again[1], products[1])


@pytest.mark.parametrize("rel_step", [None, 1e-3])
def test_the_complex_steps_hvp_moves_x_along_t_by_cbrt_eps(rel_step):
    f = Recorded()
    t = np.array([0.0, 2.0, 0.0])
    backend = F(method="complex", rel_step=rel_step)
    prep = di.prepare_hvp(f, backend, X, (t,))
    points = points_of(lambda: di.hvp(f, backend, X, (t,), prep=prep), f)
    d = exact(5.0, EPS ** (1 / 3) * 5.0) / 2.0
    centres = [X + d * t, X - d * t]
    assert len(points) == 2 * 3
    assert as_set(np.real(p) for p in points) == as_set(centres)


# -- the second derivative -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "backend, step",
    [
        (STEPPED, exact(-40.0, 4e-2)),
        (F(), exact(-40.0, 40 * EPS ** (1 / 4))),
        (F(method="complex", rel_step=1e-3), exact(-40.0, 40 * EPS ** (1 / 3))),
    ],
    ids=["selector-steps", "default-steps", "complex"],
)
def test_the_second_derivative_evaluates_f_at_x_moved_by_the_outer_step(backend, step):
    points = []

    def f(x):
        points.append(np.array(x, copy=True))
        return x**3 / 6

    prep = di.prepare_second_derivative(f, backend, -40.0)
    points.clear()
    second = di.second_derivative(f, backend, -40.0, prep=prep)
    assert abs(second + 40.0) < 1e-6 * 40
    centres = {-40.0 + step, -40.0 - step}
    if backend.method == "complex":
        assert {float(np.real(p)) for p in points} == centres and len(points) == 2
    else:
        assert {float(p) for p in points} == centres | {-40.0} and len(points) == 3


@pytest.mark.parametrize("method", ["central", "forward"])
def test_value_derivative_and_second_derivative_evaluate_f_at_x_once(method):
    points = []

    def f(x):
        points.append(float(x))
        return np.sin(x)

    backend = F(method=method)
    prep = di.prepare_second_derivative(f, backend, 0.5)
    points.clear()
    value, first, second = di.value_derivative_and_second_derivative(f, backend, 0.5, prep=prep)
    assert points.count(0.5) == 1
    assert value == np.sin(0.5) and abs(second + np.sin(0.5)) < 1e-6


@pytest.mark.parametrize("method", ["central", "forward", "complex"])
def test_value_derivative_and_second_derivative_of_a_vector_function(method):
    def f(x):
        return np.stack([np.sin(x), x**3])

    value, first, second = di.value_derivative_and_second_derivative(f, F(method=method), 0.5)
    np.testing.assert_array_equal(value, f(0.5))
    np.testing.assert_allclose(first, [np.cos(0.5), 0.75], rtol=0, atol=1e-6)
    np.testing.assert_allclose(second, [-np.sin(0.5), 3.0], rtol=0, atol=1e-5)
    assert second.dtype == np.float64
    second32 = di.second_derivative(f, F(method=method), np.float32(0.5))
    assert second32.dtype == np.float32


# -- trees whose leaves have several dtypes --------------------------------------------------------


def quadratic_tree(x):
    """Exactly quadratic: second differences are exact up to rounding, whatever the steps."""
    a, b = x["a"], x["b"] + np.zeros(1)  # b in double precision (complex at complex points)
    return a[0] * a[1] + 3 * a[0] * b[0] + 2 * b[0] ** 2


MIXED = {"a": np.array([1.5, -2.0]), "b": np.array([3.0], np.float32)}
#: the Hessian of quadratic_tree, in the order a[0], a[1], b[0]
MIXED_HESSIAN = np.array([[0.0, 1.0, 3.0], [1.0, 0.0, 0.0], [3.0, 0.0, 4.0]])


@pytest.mark.parametrize("method", ["central", "complex"])
def test_a_float32_leafs_outer_steps_are_exact_in_float32(method):
    # a step not representable in float32 would divide by a step the point was not moved by:
    # about eps32 |x| / h (1e-5) wrong, where exact steps leave rounding alone
    backend = F(method=method)
    hessian = di.hessian(quadratic_tree, backend, MIXED)
    flat = np.array([[float(hessian[r][c][i, k]) for c, k in ENTRIES] for r, i in ENTRIES])
    np.testing.assert_allclose(flat, MIXED_HESSIAN, rtol=0, atol=1e-7)
    for t, along in ((MIXED, MIXED_HESSIAN @ [1.5, -2.0, 3.0]), (E_B, MIXED_HESSIAN[:, 2])):
        (product,) = di.hvp(quadratic_tree, backend, MIXED, (t,))
        got = np.concatenate([np.asarray(product["a"], float), np.asarray(product["b"], float)])
        np.testing.assert_allclose(got, along, rtol=0, atol=1e-6)


def test_a_float32_xs_outer_steps_are_exact_in_float32():
    # f computes in float64: its quadratic's second differences are exact up to float64's
    # rounding, when divided by the steps x was moved by (a float64 step is 1e-5 off them)
    def f(x):
        x = x.astype(np.float64)
        return x[0] ** 2 + 3 * x[0] * x[1] + 2 * x[2] ** 2

    x = np.array([1.3, -2.7, 3.1], np.float32)
    expected = np.array([[2.0, 3.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 4.0]])
    hessian = di.hessian(f, F(), x)
    assert hessian.dtype == np.float32
    np.testing.assert_allclose(hessian, expected, rtol=0, atol=1e-6)
    (product,) = di.hvp(f, F(), x, (np.array([1.0, 0.0, 2.0], np.float32),))
    np.testing.assert_allclose(product, expected @ [1.0, 0.0, 2.0], rtol=0, atol=1e-6)


class RecordedTree:
    """quadratic_tree, keeping a copy of each point's leaves."""

    def __init__(self):
        self.points = []

    def __call__(self, x):
        self.points.append({k: np.array(v, copy=True) for k, v in x.items()})
        return quadratic_tree(x)


def offsets(points, leaf, entry):
    """The moves of one entry of x among the points f was evaluated at."""
    return {float(p[leaf][entry]) - float(MIXED[leaf][entry]) for p in points}


def leaf_step(value, dtype, scale=1.0):
    """The outer step of an entry of a leaf of ``dtype``: its dtype's eps**(1/4), exact there."""
    rel = scale * float(np.finfo(dtype).eps) ** (1 / 4)
    return float(np.asarray(value + max(rel * abs(value), rel)).astype(dtype)) - value


def test_a_trees_hessian_moves_each_entry_by_the_outer_step_of_its_leafs_dtype():
    f = RecordedTree()
    prep = di.prepare_hessian(f, F(), MIXED)
    points = points_of(lambda: di.hessian(f, F(), MIXED, prep=prep), f)
    for leaf, entry in ENTRIES:
        h = leaf_step(float(MIXED[leaf][entry]), MIXED[leaf].dtype)
        assert offsets(points, leaf, entry) == {0.0, h, -h}, (leaf, entry)


def test_a_trees_hvp_moves_each_entry_by_half_steps_and_along_t():
    f = RecordedTree()
    t = {"a": np.zeros(2), "b": np.array([2.0], np.float32)}
    prep = di.prepare_hvp(f, F(), MIXED, (t,))
    points = points_of(lambda: di.hvp(f, F(), MIXED, (t,), prep=prep), f)
    for leaf, entry in ENTRIES[:2]:
        h = leaf_step(float(MIXED[leaf][entry]), "float64", 0.5)
        assert offsets(points, leaf, entry) == {0.0, h, -h}, (leaf, entry)
    # along t (support: b, max |t| = 2): d t moves b by its half step, as does the step along e_b
    h = leaf_step(3.0, "float32", 0.5)
    assert offsets(points, "b", 0) == {0.0, h, -h, 2 * h, -2 * h}
    # along a zero tangent, zeros (its step is the step at 0)
    zero = {"a": np.zeros(2), "b": np.zeros(1, np.float32)}
    (product,) = di.hvp(quadratic_tree, F(), MIXED, (zero,))
    assert not np.any(product["a"]) and not np.any(product["b"])


#: (leaf, entry) of each flat position
ENTRIES = (("a", 0), ("a", 1), ("b", 0))
E_B = {"a": np.zeros(2), "b": np.ones(1, np.float32)}
