"""SecondOrder(AutoFiniteDiff(), AutoJAX()): the outer's differences compiled whole with the inner's gradients.

The finite-difference formula (steps, points, differences) is handed to the JAX
inner, which traces it with its gradients into one function
(``backends/finitediff/batched.py``). These tests pin what that must keep: the
step rule of the host path to the last bit, and the products of the per-point
differences (two prepared gradients per tangent) up to the rounding of the
compiled arithmetic.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.backends.finitediff.adapter import FiniteDiffAdapter
from diffinterface.backends.finitediff.batched import traceable_step_rule
from diffinterface.testing.analytic_functions import rosenbrock

import jax

jnp = jax.numpy


def _host_and_traceable(method, dtype, rel=None, absolute=None):
    adapter = FiniteDiffAdapter(di.AutoFiniteDiff(method=method, rel_step=rel, abs_step=absolute))
    host = adapter._step_rule(np.dtype(dtype))
    return host, traceable_step_rule(*adapter._rel_abs(np.dtype(dtype)), np.dtype(dtype))


@pytest.mark.parametrize("method", ["central", "forward"])
def test_the_traceable_step_rule_is_the_host_rule_to_the_last_bit(method):
    host, traceable = _host_and_traceable(method, "float64")
    rng = np.random.default_rng(0)
    cases = [(rng.normal(size=7) * scale, rng.normal(size=7)) for scale in (1e-9, 1e-3, 1.0, 1e4)]
    sparse = np.zeros(7)
    sparse[2] = -3.0
    cases += [
        (rng.normal(size=7), sparse),
        (np.zeros(7), rng.normal(size=7)),
        (rng.normal(size=7), np.zeros(7)),
        (np.array(2.5), np.array(-0.5)),
    ]
    compiled = jax.jit(lambda x, tangents: traceable(jnp, x, tangents))
    with jax.enable_x64(True):
        for x, t in cases:
            expected = host(x, t)
            assert float(traceable(np, x, t[None])[0]) == expected
            assert float(compiled(x, t[None])[0]) == expected
        # several tangents at once: each its own step
        x, tangents = cases[0][0], np.stack([t for _, t in cases[:5]])
        assert np.asarray(compiled(x, tangents)).tolist() == [host(x, t) for t in tangents]


def test_the_traceable_step_rule_takes_per_entry_steps_of_a_mixed_dtype_tree():
    rel = np.array([1e-3, 1e-3, 5e-6, 5e-6])
    absolute = np.array([1e-3, 1e-3, 5e-6, 5e-6])
    steps = traceable_step_rule(rel, absolute, np.dtype("float64"))
    x, t = np.array([0.5, -2.0, 300.0, 1.0]), np.array([0.0, 1.0, 2.0, 0.0])
    # the largest of rel_i |x_i| and abs_i over t's support, over max |t_i|; the largest abs_i at t = 0
    assert steps(np, x, np.stack([t, np.zeros(4)])).tolist() == [
        max(1e-3 * 2.0, 5e-6 * 300.0, 1e-3) / 2.0,
        1e-3,
    ]


def _per_point(method, x, t, steps_backend):
    """The products of the per-point differences: two (central) or one (forward) prepared JAX gradients."""
    gradient_backend = di.AutoJAX()
    prep = di.prepare_gradient(rosenbrock, gradient_backend, x)
    h = FiniteDiffAdapter(steps_backend)._step_rule(x.dtype)(x, t)
    plus = di.gradient(rosenbrock, gradient_backend, x + h * t, prep=prep)
    if method == "central":
        minus = di.gradient(rosenbrock, gradient_backend, x - h * t, prep=prep)
        return (plus - minus) / (2 * h)
    return (plus - di.gradient(rosenbrock, gradient_backend, x, prep=prep)) / h


@pytest.mark.parametrize("method", ["central", "forward"])
@pytest.mark.parametrize("ntangents", [1, 3])
@pytest.mark.parametrize("jit", [True, False], ids=["compiled", "eager"])
def test_hvps_are_the_per_point_differences_of_prepared_gradients(method, ntangents, jit):
    outer = di.AutoFiniteDiff(method=method)
    backend = di.SecondOrder(outer, di.AutoJAX(jit=jit))
    x = np.linspace(-1.0, 1.5, 12)
    tangents = tuple(np.cos(np.arange(12.0) * (i + 1)) for i in range(ntangents))
    prep = di.prepare_hvp(rosenbrock, backend, x, tangents)
    gradient, products = di.gradient_and_hvp(rosenbrock, backend, x, tangents, prep=prep)
    plain = di.hvp(rosenbrock, backend, x, tangents, prep=prep)
    # the gradient at x is one of the batch's points (compiled with the others: rounding may differ)
    np.testing.assert_allclose(gradient, di.gradient(rosenbrock, di.AutoJAX(), x), rtol=1e-12)
    assert len(products) == len(plain) == ntangents
    for t, product, again in zip(tangents, products, plain):
        expected = _per_point(method, x, t, outer)
        # the gradients' rounding, amplified by 1 / h (about 1e-5 central, 1e-8 forward) in the quotient
        tolerance = (
            64
            * np.finfo(float).eps
            * np.max(np.abs(di.gradient(rosenbrock, di.AutoJAX(), x)))
            / (FiniteDiffAdapter(outer)._step_rule(x.dtype)(x, t))
        )
        np.testing.assert_allclose(product, expected, rtol=0, atol=tolerance)
        np.testing.assert_array_equal(product, again)
        assert (
            isinstance(product, np.ndarray) and product.flags.writeable and product.shape == x.shape
        )


def test_an_hvp_at_a_zero_tangent_is_zero_and_a_scalar_x_works():
    backend = di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX())
    x = np.linspace(-1.0, 1.5, 6)
    (zero,) = di.hvp(rosenbrock, backend, x, (np.zeros(6),))
    np.testing.assert_array_equal(zero, np.zeros(6))
    (product,) = di.hvp(lambda s: s**4, backend, np.array(1.5), (np.array(2.0),))
    np.testing.assert_allclose(product, 12 * 1.5**2 * 2.0, rtol=1e-8)


def test_float32_stays_float32_within_its_rounding():
    backend = di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX())
    x = np.linspace(-1.0, 1.5, 8, dtype=np.float32)
    t = np.cos(np.arange(8, dtype=np.float32))
    (product,) = di.hvp(rosenbrock, backend, x, (t,))
    assert product.dtype == np.float32
    exact = di.hvp(rosenbrock, di.AutoJAX(), x.astype(np.float64), (t.astype(np.float64),))[0]
    np.testing.assert_allclose(product, exact, rtol=0, atol=1e-2 * np.max(np.abs(exact)))


def test_a_context_reaches_the_compiled_products():
    def f(x, c):
        xp = di.array_namespace(x)
        return xp.sum(c * x**4)

    backend = di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX())
    x, c = np.linspace(-1.0, 1.5, 6), np.linspace(1.0, 2.0, 6)
    t = np.cos(np.arange(6.0))
    (product,) = di.hvp(f, backend, x, (t,), di.Constant(c))
    np.testing.assert_allclose(product, 12 * c * x**2 * t, rtol=1e-6, atol=1e-6)
