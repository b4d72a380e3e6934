"""AutoJAX specifics: families, devices, float64 without global config, compilation, contexts, modes.

Values on the standard scenarios are the conformance kit's job (tests/core/test_conformance.py);
these tests check what only JAX has.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import get_adapter
from diffinterface.testing import CountingFunction

import jax

jnp = jax.numpy

BACKENDS = [di.AutoJAX(), di.AutoJAX(mode="forward"), di.AutoJAX(mode="reverse")]
IDS = ["jax", "jax-forward", "jax-reverse"]
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


@pytest.fixture
def compiles():
    """A list that gets one entry per XLA compilation while the test runs."""
    events = []

    def listener(event, duration, **kwargs):
        if event == COMPILE_EVENT:
            events.append(event)

    jax.monitoring.register_event_duration_secs_listener(listener)
    yield events
    jax.monitoring.unregister_event_duration_listener(listener)


@pytest.fixture(autouse=True)
def x64_off():
    """Each test starts from JAX's defaults (x64 off, whatever an earlier test module left
    globally) and must leave the switch off, globally and in this thread."""
    previous = jax.enable_x64.get_global()
    jax.config.update("jax_enable_x64", False)
    try:
        yield
        assert (jax.config.jax_enable_x64, jax.enable_x64.get_global()) == (False, False)
    finally:
        jax.config.update("jax_enable_x64", previous)


def x64_array(a):
    with jax.enable_x64(np.asarray(a).dtype == np.float64):
        return jnp.asarray(a)


def sumsq(x):
    xp = di.array_namespace(x)
    return xp.sum(x**2)


def weighted(x, w):
    xp = di.array_namespace(x)
    return xp.sum(w * xp.sin(x))


def square(x):
    return x**2


def seed003(x):
    xp = di.array_namespace(x)
    a = xp.reshape(xp.stack([x + k for k in range(1, 10)]), (3, 3))
    b = xp.reshape(xp.stack([x - k for k in range(1, 10)]), (3, 3))
    return xp.sum(a.T @ (b * 1.5))


# -- selector, capabilities ---------------------------------------------------------------------


def test_capabilities():
    adapter = get_adapter(di.AutoJAX())
    assert adapter.capabilities.families == ("numpy", "jax")
    assert adapter.capabilities.framework == "jax"
    assert di.check_available(di.AutoJAX())
    assert di.check_inplace(di.AutoJAX()) is False


def test_two_argument_functions_raise_a_clear_error():
    def f_in_place(y, x):
        y[...] = x**2

    x, y = np.ones(3), np.zeros(3)
    with pytest.raises(di.UnsupportedError, match="check_inplace"):
        di.prepare_jacobian(f_in_place, di.AutoJAX(), x, y=y)
    with pytest.raises(di.UnsupportedError, match="two-argument"):
        di.jacobian(f_in_place, di.AutoJAX(), x, y=y)


def test_array_namespace_is_jax_numpy_for_arrays_and_tracers():
    seen = []

    def f(x):
        seen.append(di.array_namespace(x))
        return jnp.sum(x)

    assert di.array_namespace(jnp.ones(2)) is jnp
    jax.grad(f)(jnp.ones(2))
    jax.jit(f)(jnp.ones(2))
    jax.jit(jax.vmap(jax.grad(f)))(jnp.ones((3, 2)))
    assert seen and all(xp is jnp for xp in seen)


# -- array families and devices -----------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_numpy_in_numpy_out_and_jax_in_jax_out(backend):
    for x in (np.array([1.0, 2.0, 3.0], dtype=np.float32), jnp.array([1.0, 2.0, 3.0])):
        want = type(x) if isinstance(x, np.ndarray) else jax.Array
        t = (x,)
        results = [
            di.gradient(sumsq, backend, x),
            *di.value_and_gradient(sumsq, backend, x),
            di.jacobian(square, backend, x),
            *di.value_and_jacobian(square, backend, x),
            *di.pushforward(square, backend, x, t),
            *di.pullback(square, backend, x, t),
            di.hessian(sumsq, backend, x),
            *di.hvp(sumsq, backend, x, t),
        ]
        for r in results:
            assert isinstance(r, want), type(r)
            assert r.dtype == np.float32


def test_results_stay_on_the_input_device():
    device = jax.devices()[-1]
    x = jax.device_put(jnp.arange(1.0, 4.0), device)
    for r in (di.gradient(sumsq, di.AutoJAX(), x), di.jacobian(square, di.AutoJAX(), x)):
        assert r.devices() == {device}


def test_python_float_is_numpy_family():
    d = di.derivative(seed003, di.AutoJAX(), 1.0)
    assert isinstance(d, np.ndarray) and d.dtype == np.float64 and d.shape == ()
    value, d2 = di.value_and_derivative(seed003, di.AutoJAX(mode="reverse"), 1.0)
    assert isinstance(value, np.ndarray) and value.dtype == np.float64
    np.testing.assert_allclose(d, d2)


def test_out_buffers():
    x = np.array([1.0, 2.0])
    out = np.zeros(2)
    assert di.gradient(sumsq, di.AutoJAX(), x, out=out) is out
    np.testing.assert_allclose(out, [2.0, 4.0])
    with pytest.raises(ValueError, match="immutable"):
        di.gradient(sumsq, di.AutoJAX(), jnp.asarray(x, dtype=jnp.float32), out=jnp.zeros(2))


# -- float64 without global configuration --------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
@pytest.mark.parametrize("family", ["numpy", "jax"])
def test_float64_in_float64_out_config_untouched(backend, family):
    x = np.linspace(0.1, 0.9, 5)
    if family == "jax":
        x = x64_array(x)
    grad = di.gradient(weighted, backend, x, di.Constant(np.full(5, 0.5)))
    assert grad.dtype == np.float64
    # float64 precision, not float32's
    np.testing.assert_allclose(np.asarray(grad), 0.5 * np.cos(np.linspace(0.1, 0.9, 5)), rtol=1e-14)
    jac = di.jacobian(square, backend, x)
    assert jac.dtype == np.float64
    d = di.derivative(seed003, backend, np.float64(1.0) if family == "numpy" else x64_array(1.0))
    assert d.dtype == np.float64
    assert jax.config.jax_enable_x64 is False


def test_float32_stays_float32():
    x = np.ones(3, dtype=np.float32)
    assert di.gradient(sumsq, di.AutoJAX(), x).dtype == np.float32
    assert di.derivative(seed003, di.AutoJAX(), np.float32(1.0)).dtype == np.float32


def test_x64_restored_when_f_raises():
    def broken(x):
        raise RuntimeError("boom")

    def vectors_only(x):
        if x.ndim != 1:
            raise RuntimeError("boom")
        return jnp.sum(x)

    with pytest.raises(RuntimeError, match="boom"):
        di.gradient(broken, di.AutoJAX(), np.ones(2))
    # a prepared float64 call that raises (a new shape, traced again) restores the switch too
    prep = di.prepare_gradient(vectors_only, di.AutoJAX(), np.ones(2), strict=False)
    with pytest.raises(RuntimeError, match="boom"):
        di.gradient(vectors_only, di.AutoJAX(), np.ones((2, 2)), prep=prep)
    assert jax.config.jax_enable_x64 is False


def test_float64_under_global_x64_skips_the_switch():
    jax.config.update("jax_enable_x64", True)
    try:
        x = jnp.arange(1.0, 4.0)
        prep = di.prepare_gradient(sumsq, di.AutoJAX(), x)
        assert isinstance(prep.impl.gradient, type(jax.jit(sumsq)))  # the jitted function itself
        assert di.gradient(sumsq, di.AutoJAX(), x, prep=prep).dtype == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("x64", [False, True], ids=["x64-switch", "x64-global"])
def test_another_x_is_refused_before_jax_traces_again(x64):
    # the preparation's check refuses an x of another shape before the compiled function sees it
    # (JAX would trace and compile it anew, silently); strict=False lets JAX trace again
    jax.config.update("jax_enable_x64", x64)
    try:
        f = CountingFunction(sumsq)
        x = (
            jnp.arange(1.0, 4.0, dtype=jnp.float64 if x64 else jnp.float32)
            if x64
            else np.arange(1.0, 4.0)
        )
        prep = di.prepare_gradient(f, di.AutoJAX(), x)
        traced = f.count
        with pytest.raises(
            di.PreparationMismatchError, match=r"x: MISMATCH, prepared .* \(3,\), given .* \(4,\)"
        ):
            di.gradient(f, di.AutoJAX(), np.arange(1.0, 5.0), prep=prep)
        assert f.count == traced
        loose = di.prepare_gradient(f, di.AutoJAX(), x, strict=False)
        np.testing.assert_allclose(
            di.gradient(f, di.AutoJAX(), np.arange(1.0, 5.0), prep=loose), 2 * np.arange(1.0, 5.0)
        )
    finally:
        jax.config.update("jax_enable_x64", False)


def test_float32_with_x64_off_is_checked_per_call():
    # JAX would trace a float64 x as float32 there: the core compares the dtype itself
    prep = di.prepare_gradient(sumsq, di.AutoJAX(), np.ones(3, dtype=np.float32))
    with pytest.raises(di.PreparationMismatchError, match=r"x: MISMATCH, prepared .*float32"):
        di.gradient(sumsq, di.AutoJAX(), np.ones(3), prep=prep)


# -- compilation -------------------------------------------------------------------------------


def test_prepared_float32_jax_call_is_the_jitted_function():
    x = jnp.ones(4)
    prep = di.prepare_gradient(sumsq, di.AutoJAX(), x)
    assert isinstance(prep.impl.gradient, type(jax.jit(sumsq)))


def test_preparation_compiles_the_operators_method_and_traces_the_valued_one(compiles):
    f = CountingFunction(sumsq)
    x, x2 = jnp.ones(4), jnp.arange(4.0)
    prep = di.prepare_gradient(f, di.AutoJAX(), x)
    assert compiles, "preparation compiles"
    traced, compiled = f.count, len(compiles)
    for _ in range(3):
        di.gradient(f, di.AutoJAX(), x2, prep=prep)
    assert (f.count, len(compiles) - compiled) == (traced, 0)
    # value_and_gradient was traced at preparation and is compiled at its first call, once, f not traced again
    for _ in range(3):
        di.value_and_gradient(f, di.AutoJAX(), x, prep=prep)
    assert (f.count, len(compiles) - compiled) == (traced, 1)


@pytest.mark.parametrize("family", ["numpy", "jax"])
def test_new_constant_value_does_not_recompile(compiles, family):
    f = CountingFunction(weighted)
    x, w = np.linspace(0.1, 0.9, 5).astype(np.float32), np.ones(5, dtype=np.float32)
    if family == "jax":
        x, w = jnp.asarray(x), jnp.asarray(w)
    prep = di.prepare_gradient(f, di.AutoJAX(), x, di.Constant(w))
    traced, compiled = f.count, len(compiles)
    for scale in (2.0, 3.0, -1.0):
        grad = di.gradient(f, di.AutoJAX(), x, di.Constant(scale * w), prep=prep)
        np.testing.assert_allclose(np.asarray(grad), scale * np.cos(np.asarray(x)), rtol=1e-6)

    # a Python float Constant too, then a NumPy scalar and a 0-d array of the same dtype (one kind)
    def scaled_sine(x, c):
        return jnp.sin(c * x)

    prep = di.prepare_derivative(scaled_sine, di.AutoJAX(), np.float32(0.5), di.Constant(1.0))
    compiled = len(compiles)
    for c in (2.0, 3.0, np.float64(1.5), np.array(2.5)):
        d = di.derivative(scaled_sine, di.AutoJAX(), np.float32(0.5), di.Constant(c), prep=prep)
        np.testing.assert_allclose(d, c * np.cos(c * 0.5), rtol=1e-6)
    assert (f.count, len(compiles) - compiled) == (traced, 0)


def test_non_array_constant_is_static():
    def f(x, kind):
        return jnp.sum(x**2) if kind == "square" else jnp.sum(x**3)

    x = np.array([1.0, 2.0], dtype=np.float32)
    prep = di.prepare_gradient(f, di.AutoJAX(), x, di.Constant("square"))
    np.testing.assert_allclose(
        di.gradient(f, di.AutoJAX(), x, di.Constant("square"), prep=prep), [2.0, 4.0]
    )
    np.testing.assert_allclose(
        di.gradient(f, di.AutoJAX(), x, di.Constant("cube"), prep=prep), [3.0, 12.0]
    )


@pytest.mark.parametrize(
    "operator", ["gradient", "jacobian", "derivative", "pushforward", "pullback", "hessian"]
)
def test_unprepared_calls_compile_nothing_and_run_f_afresh(compiles, operator):
    # an unprepared call is eager, as jax.grad is: it compiles nothing, and runs f as it is now
    # (issue #36: reusing a trace keyed by the function object returned a stale derivative)
    f = CountingFunction(sumsq if operator in ("gradient", "hessian") else square)
    x = np.float32(0.5) if operator == "derivative" else np.ones(3, dtype=np.float32)
    extra = ((x,),) if operator in ("pushforward", "pullback") else ()
    call = getattr(di, operator)
    call(f, di.AutoJAX(), x, *extra)
    traced, compiled = f.count, len(compiles)
    for _ in range(3):
        call(f, di.AutoJAX(), x, *extra)
    assert len(compiles) == compiled
    assert f.count > traced


def test_unprepared_calls_and_new_preparations_see_a_changed_global():
    state = {"scale": 1.0}

    def loss(x):
        return state["scale"] * jnp.sum(x**2)

    x = np.array([1.0, 2.0])
    for backend in (di.AutoJAX(), di.AutoJAX(jit=False)):
        state["scale"] = 1.0
        np.testing.assert_allclose(di.gradient(loss, backend, x), 2 * x)
        first = di.prepare_gradient(loss, backend, x)
        state["scale"] = 3.0
        np.testing.assert_allclose(di.gradient(loss, backend, x), 6 * x)
        np.testing.assert_allclose(
            di.gradient(loss, backend, x, prep=di.prepare_gradient(loss, backend, x)), 6 * x
        )
        if (
            backend.jit
        ):  # a compiled preparation keeps the trace it made: JAX's own jit does the same
            np.testing.assert_allclose(di.gradient(loss, backend, x, prep=first), 2 * x)


def test_batched_tangents_are_one_compiled_call():
    f = CountingFunction(square)
    x = jnp.arange(1.0, 4.0)
    tangents = tuple(jnp.eye(3)[i] for i in range(3))
    prep = di.prepare_pushforward(f, di.AutoJAX(), x, tangents)
    traced = f.count
    results = di.pushforward(f, di.AutoJAX(), x, tangents, prep=prep)
    assert f.count == traced
    np.testing.assert_allclose(np.stack(results), np.diag([2.0, 4.0, 6.0]))
    back = di.pullback(f, di.AutoJAX(), x, tangents)
    np.testing.assert_allclose(np.stack(back), np.diag([2.0, 4.0, 6.0]))


# -- no host round trip --------------------------------------------------------------------------


def _operators(x, t, c, scalar):
    """(name, prepare args, call) for every operator on jax inputs."""
    return [
        (
            "gradient",
            lambda: di.prepare_gradient(weighted, B, x, c),
            lambda p: di.gradient(weighted, B, x, c, prep=p),
        ),
        (
            "value_and_gradient",
            lambda: di.prepare_gradient(weighted, B, x, c),
            lambda p: di.value_and_gradient(weighted, B, x, c, prep=p),
        ),
        (
            "jacobian",
            lambda: di.prepare_jacobian(square, B, x),
            lambda p: di.jacobian(square, B, x, prep=p),
        ),
        (
            "pushforward",
            lambda: di.prepare_pushforward(square, B, x, (t, t)),
            lambda p: di.value_and_pushforward(square, B, x, (t, t), prep=p),
        ),
        (
            "pullback",
            lambda: di.prepare_pullback(weighted, B, x, (scalar,), c),
            lambda p: di.value_and_pullback(weighted, B, x, (scalar,), c, prep=p),
        ),
        (
            "derivative",
            lambda: di.prepare_derivative(seed003, B, scalar),
            lambda p: di.value_and_derivative(seed003, B, scalar, prep=p),
        ),
        (
            "hessian",
            lambda: di.prepare_hessian(weighted, B, x, c),
            lambda p: di.value_gradient_and_hessian(weighted, B, x, c, prep=p),
        ),
        (
            "hvp",
            lambda: di.prepare_hvp(weighted, B, x, (t,), c),
            lambda p: di.gradient_and_hvp(weighted, B, x, (t,), c, prep=p),
        ),
        (
            "second_derivative",
            lambda: di.prepare_second_derivative(seed003, B, scalar),
            lambda p: di.value_derivative_and_second_derivative(seed003, B, scalar, prep=p),
        ),
    ]


B = di.AutoJAX()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prepared_calls_with_jax_inputs_do_not_transfer(dtype):
    x = x64_array(np.linspace(0.1, 0.9, 4).astype(dtype))
    t = x64_array(np.ones(4, dtype=dtype))
    c = di.Constant(x64_array(np.full(4, 0.5, dtype=dtype)))
    scalar = x64_array(np.asarray(1.0, dtype=dtype))
    for name, prepare, call in _operators(x, t, c, scalar):
        prep = prepare()
        call(prep)  # the first call may fill JAX's dispatch caches
        with jax.transfer_guard("disallow"):
            result = call(prep)
            jax.block_until_ready(result)
        leaves = jax.tree_util.tree_leaves(result)
        assert all(isinstance(r, jax.Array) and r.dtype == dtype for r in leaves), name


# -- evaluations ---------------------------------------------------------------------------------


def test_reverse_derivative_is_native_grad_with_no_extra_evaluation():
    """Seed 003 in reverse mode: the compiled program is jax.grad's; a prepared call evaluates nothing more."""
    f = CountingFunction(seed003)
    x = jnp.asarray(1.0)
    backend = di.AutoJAX(mode="reverse")
    prep = di.prepare_derivative(f, backend, x)
    traced = f.count
    np.testing.assert_allclose(
        di.derivative(f, backend, x, prep=prep), jax.grad(seed003)(x), rtol=1e-6
    )
    assert f.count == traced
    ours = prep.impl.derivative  # float32 jax input: the jitted function itself
    native = jax.jit(jax.grad(f))
    strip = lambda text: text.split("\n", 1)[1]  # noqa: E731 - drop the module name line
    assert strip(ours.lower(x).as_text()) == strip(native.lower(x).as_text())


def test_value_and_derivative_reverse_is_one_pass():
    """value_and_derivative in reverse mode is value_and_grad: one forward pass, one backward pass."""
    f = CountingFunction(seed003)
    backend = di.AutoJAX(mode="reverse")
    x = jnp.asarray(1.0)
    prep = di.prepare_derivative(f, backend, x)
    ours = prep.impl.value_and_derivative
    native = jax.jit(jax.value_and_grad(f))
    strip = lambda text: text.split("\n", 1)[1]  # noqa: E731
    assert strip(ours.lower(x).as_text()) == strip(native.lower(x).as_text())


def test_output_spec_learned_without_evaluation():
    calls = []

    def f(x):
        calls.append(type(x).__name__)
        return x**2

    prep = di.prepare_pullback(f, di.AutoJAX(), np.ones(3), (np.ones(3),))
    assert prep is not None
    assert calls and all("Tracer" in name for name in calls), calls


# -- modes and second order ----------------------------------------------------------------------


def test_jacobian_mode_follows_shape_or_selector():
    adapter = get_adapter(di.AutoJAX())
    from diffinterface.core import Problem

    def problem(x, f):
        return Problem(adapter, f, x, None, (), None)

    wide = problem(np.ones(5), lambda x: x[:2])
    tall = problem(np.ones(2), lambda x: jnp.concatenate([x, x, x]))
    assert wide.mode("jacobian") == "reverse"
    assert tall.mode("jacobian") == "forward"
    for mode in ("forward", "reverse"):
        pinned = Problem(get_adapter(di.AutoJAX(mode=mode)), wide.f, wide.x, None, (), None)
        assert pinned.mode("jacobian") == mode
    # a square Jacobian: jit(jacrev) is as fast as jit(jacfwd) or faster; eagerly jacfwd is faster
    square = problem(np.ones(3), lambda x: x**2)
    assert square.mode("jacobian") == "reverse"
    eager = Problem(get_adapter(di.AutoJAX(jit=False)), square.f, square.x, None, (), None)
    assert eager.mode("jacobian") == "forward"


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_second_order_impls_directly(backend):
    from diffinterface.core import Problem

    adapter = get_adapter(backend)
    x = np.array([0.3, -0.2, 0.5])
    w = np.array([1.0, 2.0, 3.0])
    hess = np.diag(-w * np.sin(x))
    problem = Problem(adapter, weighted, x, None, (di.Constant(w),), None)
    impl = adapter.prepare_hessian(problem)
    np.testing.assert_allclose(impl.hessian(x, w), hess, atol=1e-12)
    value, grad, h = impl.value_gradient_and_hessian(x, w)
    np.testing.assert_allclose(value, np.sum(w * np.sin(x)))
    np.testing.assert_allclose(grad, w * np.cos(x))
    np.testing.assert_allclose(h, hess, atol=1e-12)

    t = (np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 1.0]))
    impl = adapter.prepare_hvp(problem.replace(tangents=t))
    products = impl.hvp(x, t, w)
    assert isinstance(products, tuple) and len(products) == 2
    for p, ti in zip(products, t):
        np.testing.assert_allclose(p, hess @ ti, atol=1e-12)
    grad2, products2 = impl.gradient_and_hvp(x, t, w)
    np.testing.assert_allclose(grad2, w * np.cos(x))
    np.testing.assert_allclose(products2[1], hess @ t[1], atol=1e-12)

    s = np.float64(0.7)
    scalar_problem = Problem(adapter, lambda x: jnp.sin(3 * x) * x, s, None, (), None)
    impl = adapter.prepare_second_derivative(scalar_problem)
    want = -9 * np.sin(2.1) * 0.7 + 6 * np.cos(2.1)
    np.testing.assert_allclose(impl.second_derivative(s), want, rtol=1e-12)
    v, d, d2 = impl.value_derivative_and_second_derivative(s)
    np.testing.assert_allclose(
        (v, d, d2), (np.sin(2.1) * 0.7, 3 * np.cos(2.1) * 0.7 + np.sin(2.1), want), rtol=1e-12
    )


def test_second_order_pairs_of_jax_backends():
    x = np.array([0.3, -0.2, 0.5])
    want = np.diag(-np.sin(x))
    forward, reverse = di.AutoJAX(mode="forward"), di.AutoJAX(mode="reverse")
    for outer, inner in ((forward, reverse), (reverse, forward)):
        h = di.hessian(lambda x: jnp.sum(jnp.sin(x)), di.SecondOrder(outer, inner), x)
        np.testing.assert_allclose(h, want, atol=1e-12)


def test_without_jit():
    backend = di.AutoJAX(jit=False)
    x = np.array([1.0, 2.0])
    assert di.gradient(sumsq, backend, x).dtype == np.float64
    np.testing.assert_allclose(di.gradient(sumsq, backend, x), [2.0, 4.0])
    np.testing.assert_allclose(di.jacobian(square, backend, x), np.diag([2.0, 4.0]))


# -- issue #36: eager where there are values, no invented points, owned results ------------------


def branchy(x):
    xp = di.array_namespace(x)
    if x[0] > 0:
        return xp.sum(x**2)
    return xp.sum(x**3)


def test_jit_false_differentiates_branches_on_values_eagerly():
    # preparation may trace f once without values, only to look for numbers taken out of x (.item());
    # the derivatives themselves are computed eagerly, with values, so Python branches on x work
    seen = []

    def f(x):
        seen.append(type(x).__name__)
        return branchy(x)

    backend, x = di.AutoJAX(jit=False), np.array([1.0, 2.0])
    prep = di.prepare_gradient(f, backend, x)
    seen.clear()
    np.testing.assert_allclose(di.gradient(f, backend, x, prep=prep), [2.0, 4.0])
    np.testing.assert_allclose(di.gradient(f, backend, -x, prep=prep), [3.0, 12.0])
    assert seen and not any("Jaxpr" in name for name in seen), seen
    np.testing.assert_allclose(di.hessian(f, backend, x), 2 * np.eye(2))
    np.testing.assert_allclose(di.jacobian(lambda x: x * branchy(x), backend, x)[0], [7.0, 4.0])


def test_eager_jax_refuses_a_number_taken_out_of_x():
    # eager jax.grad silently drops what x[0].item() depended on; the preparation's abstract pass finds it
    def f(x):
        return x[0].item() * di.array_namespace(x).sum(x)

    for backend in (di.AutoJAX(jit=False), di.AutoJAX()):
        with pytest.raises(di.DifferentiationError, match="di.array_namespace"):
            di.gradient(f, backend, np.array([7.0, 1.0, 1.0]))


def test_prepared_jit_branch_on_values_names_jit_false():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(
        di.gradient(branchy, di.AutoJAX(), x), [2.0, 4.0]
    )  # unprepared: eager
    with pytest.raises(di.TracedArrayError, match=r"AutoJAX\(jit=False\)"):
        di.prepare_gradient(branchy, di.AutoJAX(), x)


@pytest.mark.parametrize("backend", [di.AutoJAX(), di.AutoJAX(jit=False)], ids=["jit", "eager"])
def test_numpy_results_are_owned(backend):
    x = np.array([0.5, 1.0, 2.0])
    tangents = (np.ones(3), np.arange(3.0))
    results = [
        di.gradient(sumsq, backend, x),
        *di.value_and_gradient(sumsq, backend, x),
        *di.pushforward(square, backend, x, tangents),
        *di.pushforward(
            square, backend, x, tangents, prep=di.prepare_pushforward(square, backend, x, tangents)
        ),
        *di.pullback(square, backend, x, tangents[:1]),
        di.hessian(sumsq, backend, x),
    ]
    for r in results:
        assert isinstance(r, np.ndarray) and r.flags.writeable and not np.shares_memory(r, x)
    first, second = results[3], results[4]
    first[...] = 0.0
    np.testing.assert_allclose(
        second, 2 * x * np.arange(3.0)
    )  # one tangent's result is not another's


def test_cache_written_inside_f_is_refused_naming_it():
    def f(x, cache):
        cache[...] = x
        return jnp.sum(x**2)

    for backend in (di.AutoJAX(), di.AutoJAX(jit=False)):
        with pytest.raises(di.UnsupportedError, match=r"contexts\[0\].*cannot write into a buffer"):
            di.gradient(f, backend, np.ones(2), di.Cache(np.zeros(2)))
        with pytest.raises(di.UnsupportedError, match=r"contexts\[0\]"):
            di.gradient(f, backend, np.ones(2), di.Cache(jnp.zeros(2)))


def test_torch_function_on_a_jax_array_is_explained():
    import torch

    for backend in (di.AutoJAX(), di.AutoJAX(jit=False)):
        with pytest.raises(di.TracedArrayError, match=r"di\.array_namespace"):
            di.gradient(lambda x: torch.sum(torch.sin(x)), backend, np.ones(2))
        with pytest.raises(di.TracedArrayError, match=r"di\.array_namespace"):
            di.gradient(lambda x: torch.as_tensor(x).sum(), backend, np.ones(2))


def positive_only(seen):
    def f(x):
        x = np.asarray(x)
        seen.append(x.copy())
        if np.any(x <= 0):
            raise ValueError("defined for x > 0 only")
        return np.sum(np.log(x))

    return f


def test_differentiate_with_prepares_at_the_given_point():
    seen = []
    g = di.DifferentiateWith(positive_only(seen), di.AutoFiniteDiff())
    with jax.enable_x64(True):
        x = jnp.array([0.5, 2.0])
        np.testing.assert_allclose(jax.grad(g)(x), 1 / np.asarray(x), rtol=1e-6)
        # a jit trace has no values: this f is numpy only, so the error says how to give it one
        h = di.DifferentiateWith(positive_only(seen), di.AutoFiniteDiff())
        with pytest.raises(di.UnsupportedError, match=r"outside jax\.jit"):
            jax.jit(jax.grad(h))(x)
        h(x)  # a concrete call: later jit traces use what it learned
        np.testing.assert_allclose(jax.jit(jax.grad(h))(x), 1 / np.asarray(x), rtol=1e-6)
    # AutoJAX's preparation has the user's x: the bridge prepares there
    k = di.DifferentiateWith(positive_only(seen), di.AutoFiniteDiff())
    prep = di.prepare_hessian(k, di.AutoJAX(), np.array([0.5, 2.0]))
    np.testing.assert_allclose(
        di.hessian(k, di.AutoJAX(), np.array([0.5, 2.0]), prep=prep),
        np.diag([-4.0, -0.25]),
        rtol=1e-4,
    )
    assert all(np.all(p > 0) for p in seen)


def test_differentiate_with_of_jax_code_under_jit_prepares_at_the_first_value():
    seen = []

    def f(x):
        xp = di.array_namespace(x)
        if isinstance(x, np.ndarray):
            seen.append(x.copy())
        return xp.sum(xp.log(x))

    g = di.DifferentiateWith(f, di.AutoFiniteDiff())
    with jax.enable_x64(True):
        x = jnp.array([0.5, 2.0])
        np.testing.assert_allclose(jax.jit(jax.grad(g))(x), [2.0, 0.5], rtol=1e-6)
    assert seen and all(np.all(p > 0) for p in seen)


def test_forward_mode_through_a_custom_vjp_function_is_explained():
    # a jax.custom_vjp function has reverse-mode rules only: where a mode=None choice (a derivative,
    # a square Jacobian run eagerly) goes forward, the error names the way around
    @jax.custom_vjp
    def sine(x):
        return jnp.sin(x)

    sine.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (g * jnp.cos(x),))
    x = np.array([0.1, 0.2, 0.3])
    for call in (
        lambda: di.jacobian(lambda x: 2 * sine(x), di.AutoJAX(jit=False), x),
        lambda: di.derivative(lambda t: 2 * sine(t), di.AutoJAX(), 0.3),
    ):
        with pytest.raises(ValueError, match=r'custom_vjp.*pass AutoJAX\(mode="reverse"\)'):
            call()
    for backend in (di.AutoJAX(mode="reverse"), di.AutoJAX(jit=False, mode="reverse")):
        np.testing.assert_allclose(
            di.jacobian(lambda x: 2 * sine(x), backend, x), np.diag(2 * np.cos(x)), rtol=1e-6
        )
