"""Regression probe: ``DifferentiateWith(f, backend)`` inside JAX's compiled transforms, the backend as the inner.

Under ``jax.jit`` a bridged function is traced without values, and its
derivatives go through host callbacks to the backend's prepared operators.
A scalar ``f`` on a reverse-mode inner takes the gradient route: one callback
returns the value with the gradient, and every cotangent scales that
gradient in JAX. The probe checks what that route must keep: the right
gradient for a vector of cotangents (``jacrev`` of several outputs built from
the same scalar), under ``vmap``, at second order, with the value alongside
(``value_and_grad``), and a compiled call without derivatives that evaluates
``f`` once and no more, so it never computes a gradient it throws away.

    >>> [probe.name for probe in probes()]
    ['differentiate_with_inside_jax_jit']
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ...wrappers import DifferentiateWith
from ..analytic_functions import (
    sin_weighted_sum,
    sin_weighted_sum_gradient,
    sin_weighted_sum_hessian_diagonal,
)
from ..counting import CountingFunction
from ..probes import BadInput

X = np.array([0.5, -1.0, 1.25, 2.0])


def _expected(x):
    """``u = sum(sin(x) x^2)``: its value, gradient and the diagonal of its Hessian."""
    return sin_weighted_sum(x), sin_weighted_sum_gradient(x), sin_weighted_sum_hessian_diagonal(x)


def _inside_jax_jit(backend, problems, zero):
    if (
        importlib.util.find_spec("jax") is None
    ):  # no JAX outer to bridge into: nothing this probe can call
        return
    import jax
    import jax.numpy as jnp

    f = CountingFunction(sin_weighted_sum)
    g = DifferentiateWith(f, backend)
    value, gradient, curvature = _expected(X)
    second = 2 * X
    _, gradient_at_second, _ = _expected(second)
    # float64 without touching the global setting: the switch is thread-local and undone on exit
    with jax.enable_x64(True):
        x = jnp.asarray(X)
        cases = (
            (
                "jit(grad(2 g(x) + sum(x)))",
                jax.jit(jax.grad(lambda x: 2.0 * g(x) + jnp.sum(x))),
                (x,),
                2 * gradient + 1,
                1e-4,
            ),
            (
                "jit(value_and_grad(2 g)), the gradient",
                jax.jit(lambda x: jax.value_and_grad(lambda x: 2.0 * g(x))(x)[1]),
                (x,),
                2 * gradient,
                1e-4,
            ),
            (
                "jit(value_and_grad(2 g)), the value",
                jax.jit(lambda x: jax.value_and_grad(lambda x: 2.0 * g(x))(x)[0]),
                (x,),
                np.array(2 * value),
                1e-4,
            ),
            (
                "jit(jacrev(x -> [g(x), 3 g(x) + x[0], g(x)**2])): one cotangent per output",
                jax.jit(jax.jacrev(lambda x: jnp.stack([g(x), 3.0 * g(x) + x[0], g(x) ** 2]))),
                (x,),
                np.stack([gradient, 3 * gradient + np.eye(4)[0], 2 * value * gradient]),
                1e-4,
            ),
            (
                "jit(vmap(grad(g))) over two points",
                jax.jit(jax.vmap(jax.grad(g))),
                (jnp.stack([x, 2.0 * x]),),
                np.stack([gradient, gradient_at_second]),
                1e-4,
            ),
            ("jit(hessian(g))", jax.jit(jax.hessian(g)), (x,), np.diag(curvature), 1e-3),
            ("jit(g)", jax.jit(g), (x,), np.array(value), 1e-4),
        )
        for what, fn, args, expected, rtol in cases:
            problems.expect_result(
                f"{what} with g = DifferentiateWith(f, backend)",
                lambda: fn(*args),
                expected,
                like=x,
                zero=zero,
                rtol=rtol,
                atol=1e-5,
            )
        value_only = cases[-1][1]
        f.take()
        try:
            value_only(x).block_until_ready()
        except Exception:  # noqa: BLE001 - reported by the case above
            return
    if f.count > 1:
        problems.found.append(
            f"jax.jit(g) with g = DifferentiateWith(f, backend), compiled already, evaluated f "
            f"{f.count} times in one call: a value needs one evaluation, no derivative"
        )


def probes():
    """This module's probe (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "differentiate_with_inside_jax_jit",
            "DifferentiateWith(f, backend) inside jax.jit of grad, value_and_grad, jacrev, vmap, hessian: right "
            "derivatives; a compiled value evaluates f once",
            _inside_jax_jit,
        ),
    ]
