"""diffinterface.scipy inside real scipy runs: minimize, solve_ivp, least_squares and root.

Every test runs once per backend of the kit's table (``BACKENDS``, with its
ids). Evaluations of ``f`` are counted with the kit's ``CountingFunction``;
the cost of one prepared call is measured directly in the same test, so the
assertions hold on every backend (on JAX a counted "call" is a trace, so a
prepared call costs 0 and the runs must not trace again).

The claim checked in the optimizer runs: consecutive requests for ``fun``
and ``jac`` at one iterate share one ``value_and_gradient`` call, so ``f`` is
evaluated for an iterate's value and gradient at most once.
"""

import doctest

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.optimize

import diffinterface as di
from diffinterface.core.registry import get_adapter
import diffinterface.scipy as di_scipy
from diffinterface.scipy import objective, ode, residuals
from diffinterface.testing import BACKENDS, CountingFunction
from diffinterface.testing.analytic_functions import rosenbrock

BACKEND_PARAMS = pytest.mark.parametrize("backend", list(BACKENDS.values()), ids=list(BACKENDS))

#: the classic start at the origin: (-1.2, 1, ...) starts may end in the 4-D function's local minimum
ROSENBROCK_START = np.zeros(4)


def robertson(y, t):
    """Robertson's chemical kinetics: the classic stiff system (autonomous)."""
    xp = di.array_namespace(y)
    a, b, c = y[0], y[1], y[2]
    return xp.stack([-0.04 * a + 1e4 * b * c, 0.04 * a - 1e4 * b * c - 3e7 * b**2, 3e7 * b**2])


#: u' = RATES u for u = y - cos t: stiff (eigenvalues near -1e3 and -2e3), weakly coupled
RATES = np.array([[-1e3, 1e-3], [1e-3, -2e3]])


def relaxation(y, t):
    """y' = RATES (y - cos t) - sin t: stiff, time-dependent, y(t) = cos t + expm(RATES t) (y0 - 1)."""
    xp = di.array_namespace(y)
    u = y - xp.cos(t)
    return xp.stack([-1e3 * u[0] + 1e-3 * u[1], 1e-3 * u[0] - 2e3 * u[1]]) - xp.sin(t)


class Spy:
    """Records the points scipy asks about, in order, before passing them on."""

    def __init__(self):
        self.points = []

    def wrap(self, method):
        def recorded(x, *args):
            self.points.append(np.array(x, copy=True))
            return method(x, *args)

        return recorded

    def runs(self):
        """Number of maximal runs of equal consecutive points: the most calls sharing can save."""
        runs = 0
        for i, point in enumerate(self.points):
            if i == 0 or not np.array_equal(point, self.points[i - 1]):
                runs += 1
        return runs


def cost_of_prepared_call(f, prepare, call):
    """Evaluations of ``f`` by one prepared call (at a point other than the preparation's)."""
    prep = prepare()
    f.take()
    call(prep)
    return f.take()


# -- minimize ------------------------------------------------------------------------------------


def _direct_gradient_cost(f, backend):
    x = ROSENBROCK_START + 0.25
    return cost_of_prepared_call(
        f,
        lambda: di.prepare_gradient(f, backend, ROSENBROCK_START, strict=True),
        lambda prep: di.value_and_gradient(f, backend, x, prep=prep),
    )


def _check_shared_value_and_gradient(problem, spy, evaluations_in_gradients, per_call):
    calls = problem.calls["value_and_gradient"]
    # fun and jac requested at one point cost one value_and_gradient ...
    assert calls == spy.runs()
    # ... and scipy did request both at the same points, so sharing was exercised
    assert calls < len(spy.points)
    assert evaluations_in_gradients == per_call * calls


@BACKEND_PARAMS
def test_bfgs_shares_value_and_gradient(backend):
    f = CountingFunction(rosenbrock)
    per_call = _direct_gradient_cost(f, backend)
    problem = objective(f, backend, ROSENBROCK_START)
    f.take()
    spy = Spy()
    result = scipy.optimize.minimize(
        spy.wrap(problem.fun), problem.x0, jac=spy.wrap(problem.jac), method="BFGS"
    )
    np.testing.assert_allclose(result.x, np.ones(4), atol=1e-4)
    _check_shared_value_and_gradient(problem, spy, f.take(), per_call)


def _each_iterate(backend):
    """Whether ``hessp`` makes a same-point preparation per iterate (else one ``prepare_hvp`` in all)."""
    return get_adapter(backend).capabilities.cheap_same_point


@BACKEND_PARAMS
def test_newton_cg_with_hessp(backend):
    f = CountingFunction(rosenbrock)
    per_gradient = _direct_gradient_cost(f, backend)
    tangent = (np.linspace(0.1, 0.4, 4),)
    each_iterate = _each_iterate(backend)
    prepare = di.prepare_hvp_same_point if each_iterate else di.prepare_hvp

    # the costs at an iterate after the first (a preparation serving every iterate is made once)
    prep = prepare(f, backend, ROSENBROCK_START, tangent)
    f.take()
    if each_iterate:
        prep = prepare(f, backend, ROSENBROCK_START + 0.5, tangent)
    per_preparation = f.take()
    di.hvp(f, backend, ROSENBROCK_START + 0.5, tangent, prep=prep)
    per_hvp = f.take()
    problem = objective(f, backend, ROSENBROCK_START)
    for warm_up in (ROSENBROCK_START + 1.0, ROSENBROCK_START):  # so the run below counts calls only
        problem.hessp(warm_up, tangent[0])
    f.take()
    before = dict(problem.calls)
    spy = Spy()
    result = scipy.optimize.minimize(
        spy.wrap(problem.fun),
        problem.x0,
        jac=spy.wrap(problem.jac),
        hessp=problem.hessp,
        method="Newton-CG",
        options={"xtol": 1e-10},
    )
    np.testing.assert_allclose(result.x, np.ones(4), atol=1e-4)
    assert problem.calls["hvp"] - before["hvp"] == result.nhev > 0
    preparations = problem.calls["hvp_preparations"] - before["hvp_preparations"]
    # per iterate (torch, autograd), or the one made at the warm-up serves the run
    assert (preparations > 1) if each_iterate else (preparations == 0)
    assert problem.calls["hvp_preparations"] == (2 + preparations if each_iterate else 1)
    in_hvps = per_hvp * result.nhev + per_preparation * preparations
    _check_shared_value_and_gradient(problem, spy, f.take() - in_hvps, per_gradient)


def _scaled_cubes(x, c):
    xp = di.array_namespace(x)
    return xp.sum(xp.asarray(c, dtype=x.dtype) * x**3) / 3


@BACKEND_PARAMS
def test_hessp_answers_at_each_iterate_of_a_reused_array(backend):
    # scipy may write each new iterate into the array it passed before: the products must follow
    # the values, with a Constant, at one seed after another
    scale = np.array([2.0, 0.5, 3.0])

    problem = objective(_scaled_cubes, backend, np.zeros(3), di.Constant(scale))
    iterate, seeds = np.zeros(3), (np.array([1.0, -2.0, 0.5]), np.array([0.25, 1.0, -1.0]))
    points = (np.array([0.5, -0.25, 1.0]), np.array([1.5, 0.75, -2.0]), np.array([-0.5, 2.0, 0.25]))
    for point in points:
        iterate[...] = point
        for seed in seeds:
            np.testing.assert_allclose(
                problem.hessp(iterate, seed), 2 * scale * point * seed, rtol=1e-5, atol=1e-6
            )
    assert problem.calls["hvp"] == len(points) * len(seeds)
    assert problem.calls["hvp_preparations"] == (len(points) if _each_iterate(backend) else 1)
    np.testing.assert_array_equal(iterate, points[-1])  # the caller's array is never written


@BACKEND_PARAMS
def test_hessp_follows_a_constant_written_in_place_at_one_iterate(backend):
    # every backend's products follow the Constant's values, whichever recipe hessp takes
    scale = np.array([2.0, 0.5, 3.0])

    problem = objective(_scaled_cubes, backend, np.zeros(3), di.Constant(scale))
    point, seed = np.array([0.5, -0.25, 1.0]), np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(problem.hessp(point, seed), 2 * scale * point * seed, rtol=1e-5)
    scale[...] = [1.0, 4.0, -1.0]
    np.testing.assert_allclose(
        problem.hessp(point, seed), 2 * scale * point * seed, rtol=1e-5, atol=1e-6
    )
    assert problem.calls["hvp"] == 2


@BACKEND_PARAMS
def test_trust_exact_with_hess(backend):
    f = CountingFunction(rosenbrock)
    per_gradient = _direct_gradient_cost(f, backend)
    per_hessian = cost_of_prepared_call(
        f,
        lambda: di.prepare_hessian(f, backend, ROSENBROCK_START, strict=True),
        lambda prep: di.hessian(f, backend, ROSENBROCK_START + 0.25, prep=prep),
    )
    problem = objective(f, backend, ROSENBROCK_START)
    problem.hess(
        ROSENBROCK_START + 1.0
    )  # prepares the Hessian now (at a point the run never visits)
    f.take()
    spy = Spy()
    result = scipy.optimize.minimize(
        spy.wrap(problem.fun),
        problem.x0,
        jac=spy.wrap(problem.jac),
        hess=problem.hess,
        method="trust-exact",
        options={"gtol": 1e-7},
    )
    np.testing.assert_allclose(result.x, np.ones(4), atol=1e-4)
    hessians = problem.calls["hessian"] - 1
    assert 0 < hessians <= result.nhev
    _check_shared_value_and_gradient(problem, spy, f.take() - per_hessian * hessians, per_gradient)


def test_objective_keeps_the_starting_dtype_and_shape():
    seen = []

    def f(x):
        seen.append((x.dtype, x.shape, type(x)))
        return ((x - 2.0) ** 2).sum()

    x0 = np.zeros((2, 2), dtype=np.float32)
    problem = objective(f, di.AutoFiniteDiff(), x0)
    result = scipy.optimize.minimize(problem.fun, problem.x0, jac=problem.jac, method="BFGS")
    np.testing.assert_allclose(result.x, np.full(4, 2.0), atol=1e-2)
    assert problem.x0.shape == (4,)
    assert set(seen) == {(np.dtype(np.float32), (2, 2), np.ndarray)}
    assert np.array_equal(x0, np.zeros((2, 2)))  # the starting point is not modified


def test_objective_cache_is_keyed_on_a_copy_of_x():
    f = CountingFunction(lambda x: (x**2).sum())
    problem = objective(f, di.AutoTorch(), np.ones(3))
    x = np.array([1.0, 2.0, 3.0])
    assert problem.fun(x) == 14.0
    x[0] = 0.0  # scipy may overwrite its iterate in place
    np.testing.assert_allclose(problem.jac(x), [0.0, 4.0, 6.0])
    assert problem.calls["value_and_gradient"] == 2


def test_objective_passes_contexts():
    problem = objective(
        lambda x, c: ((x - c) ** 2).sum(), di.AutoFiniteDiff(), np.zeros(2), di.Constant(5.0)
    )
    result = scipy.optimize.minimize(problem.fun, problem.x0, jac=problem.jac, method="BFGS")
    np.testing.assert_allclose(result.x, [5.0, 5.0], atol=1e-5)


# -- solve_ivp -----------------------------------------------------------------------------------

ROBERTSON_START = np.array([1.0, 0.0, 0.0])


def _robertson_jacobian(t, y):
    a, b, c = y
    return np.array(
        [[-0.04, 1e4 * c, 1e4 * b], [0.04, -1e4 * c - 6e7 * b, -1e4 * b], [0.0, 6e7 * b, 0.0]]
    )


@pytest.fixture(scope="module")
def robertson_reference():
    """Robertson at t = 40 from the hand-written Jacobian, at tight tolerances."""
    solution = scipy.integrate.solve_ivp(
        lambda t, y: robertson(y, t),
        (0.0, 40.0),
        ROBERTSON_START,
        method="Radau",
        jac=_robertson_jacobian,
        rtol=1e-10,
        atol=1e-14,
    )
    return solution.y[:, -1]


def _direct_jacobian_cost(f, backend, start):
    """Evaluations by one prepared jacobian call, ``t`` passed as ode() passes it (a 0-d array)."""
    return cost_of_prepared_call(
        f,
        lambda: di.prepare_jacobian(f, backend, start, di.Constant(np.asarray(0.0)), strict=True),
        lambda prep: di.jacobian(f, backend, start + 0.01, di.Constant(np.asarray(0.7)), prep=prep),
    )


@BACKEND_PARAMS
@pytest.mark.parametrize("method", ["BDF", "Radau"])
def test_robertson_with_exact_jacobian(backend, method, robertson_reference):
    f = CountingFunction(robertson)
    per_jacobian = _direct_jacobian_cost(f, backend, ROBERTSON_START)
    problem = ode(f, backend, ROBERTSON_START)
    f.take()
    solution = scipy.integrate.solve_ivp(
        problem.fun, (0.0, 40.0), problem.y0, method=method, jac=problem.jac, rtol=1e-7, atol=1e-10
    )
    assert solution.success, solution.message
    end = solution.y[:, -1]
    np.testing.assert_allclose(end, robertson_reference, rtol=1e-4, atol=1e-9)
    assert abs(end.sum() - 1.0) < 1e-8  # mass is conserved
    assert problem.calls["jacobian"] == solution.njev > 0
    # every step reuses the one preparation: no evaluation beyond fun's and the prepared calls'
    assert f.take() == problem.calls["fun"] + per_jacobian * problem.calls["jacobian"]


@BACKEND_PARAMS
@pytest.mark.parametrize("method", ["BDF", "Radau"])
def test_time_dependent_stiff_ode(backend, method):
    f = CountingFunction(relaxation)
    start = np.array([3.0, -1.0])
    per_jacobian = _direct_jacobian_cost(f, backend, start)
    problem = ode(f, backend, start)
    f.take()
    solution = scipy.integrate.solve_ivp(
        problem.fun, (0.0, 2.0), problem.y0, method=method, jac=problem.jac, rtol=1e-8, atol=1e-10
    )
    assert solution.success, solution.message
    exact = np.cos(2.0) + scipy.linalg.expm(RATES * 2.0) @ (start - 1.0)
    np.testing.assert_allclose(solution.y[:, -1], exact, rtol=1e-6)
    assert problem.calls["jacobian"] == solution.njev > 0
    assert f.take() == problem.calls["fun"] + per_jacobian * problem.calls["jacobian"]


def test_ode_jacobian_is_taken_at_the_given_time():
    problem = ode(lambda y, t: t * y, di.AutoFiniteDiff(), np.ones(2))
    np.testing.assert_allclose(problem.jac(0.5, np.ones(2)), 0.5 * np.eye(2), atol=1e-8)
    np.testing.assert_allclose(problem.jac(np.float64(4.0), np.ones(2)), 4.0 * np.eye(2), atol=1e-6)


# -- least_squares and root ----------------------------------------------------------------------

TIMES = np.linspace(0.0, 2.0, 9)
OBSERVED = 2.5 * np.exp(-1.3 * TIMES)


def decay_misfit(p, times, observed):
    """Residuals of an exponential decay a * exp(-k t) against data made with a = 2.5, k = 1.3."""
    xp = di.array_namespace(p)
    return p[0] * xp.exp(-p[1] * times) - observed


@BACKEND_PARAMS
def test_least_squares_fit(backend):
    f = CountingFunction(decay_misfit)
    start = np.array([1.0, 0.5])
    problem = residuals(f, backend, start, di.Constant(TIMES), di.Constant(OBSERVED))
    fit = scipy.optimize.least_squares(problem.fun, problem.x0, jac=problem.jac, xtol=1e-12)
    assert fit.success, fit.message
    np.testing.assert_allclose(fit.x, [2.5, 1.3], rtol=1e-6)
    assert problem.calls["jacobian"] == fit.njev


def circle_and_line(x):
    xp = di.array_namespace(x)
    return xp.stack([x[0] ** 2 + x[1] ** 2 - 2.0, x[0] - x[1]])


@BACKEND_PARAMS
def test_root_from_one_value_and_jacobian(backend):
    f = CountingFunction(circle_and_line)
    start = np.array([2.0, 0.5])
    per_call = cost_of_prepared_call(
        f,
        lambda: di.prepare_jacobian(f, backend, start, strict=True),
        lambda prep: di.value_and_jacobian(f, backend, start + 0.1, prep=prep),
    )
    problem = residuals(f, backend, start)
    f.take()
    solution = scipy.optimize.root(problem.fun_and_jac, problem.x0, jac=True, method="lm")
    assert solution.success, solution.message
    np.testing.assert_allclose(solution.x, [1.0, 1.0], rtol=1e-8)
    assert f.take() == per_call * problem.calls["value_and_jacobian"]


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, error, words",
    [
        (
            lambda: objective("f", di.AutoFiniteDiff(), np.ones(2)),
            TypeError,
            ["f:", "callable", "str"],
        ),
        (
            lambda: objective(rosenbrock, "jax", np.ones(2)),
            TypeError,
            ["backend:", "selector", "str"],
        ),
        (
            lambda: objective(rosenbrock, di.AutoFiniteDiff(), np.ones(2, dtype=int)),
            TypeError,
            ["x0:", "float", "int64"],
        ),
        (
            lambda: objective(rosenbrock, di.AutoFiniteDiff(), np.ones(2, dtype=complex)),
            TypeError,
            ["x0:", "complex128"],
        ),
        (
            lambda: objective(rosenbrock, di.AutoFiniteDiff(), np.ones(0)),
            ValueError,
            ["x0:", "empty"],
        ),
        (
            lambda: objective(rosenbrock, di.AutoFiniteDiff(), {"a": 1.0}),
            TypeError,
            ["x0:", "dict"],
        ),
        (lambda: ode(robertson, di.AutoFiniteDiff(), [1, 0, 0]), TypeError, ["y0:", "int64"]),
        (
            lambda: ode(robertson, di.AutoFiniteDiff(), ROBERTSON_START, t0="now"),
            TypeError,
            ["t:", "str"],
        ),
        (lambda: residuals(None, di.AutoFiniteDiff(), np.ones(2)), TypeError, ["f:", "NoneType"]),
    ],
    ids=[
        "f",
        "backend",
        "integer-x0",
        "complex-x0",
        "empty-x0",
        "dict-x0",
        "integer-y0",
        "time",
        "residual-f",
    ],
)
def test_bad_input_is_named(make, error, words):
    with pytest.raises(error) as raised:
        make()
    for word in words:
        assert word in str(raised.value)


def test_iterates_of_the_wrong_size_are_named():
    problem = objective(rosenbrock, di.AutoFiniteDiff(), ROSENBROCK_START)
    with pytest.raises(ValueError, match=r"x: expected 4 values .* got shape \(3,\)"):
        problem.fun(np.ones(3))
    with pytest.raises(ValueError, match=r"p: expected 4 values"):
        problem.hessp(np.ones(4), np.ones(5))
    with pytest.raises(ValueError, match=r"y: expected 3 values"):
        ode(robertson, di.AutoFiniteDiff(), ROBERTSON_START).jac(0.0, np.ones(2))


def test_docstring_examples_run():
    failures, tried = doctest.testmod(di_scipy, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0
