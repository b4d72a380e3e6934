"""Transformations of ``f(x, *ctx) -> y`` into its derivatives, all traceable (jit, vmap, and again)."""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax import lax


def _like(t, a):
    """``t`` cast to ``a``'s dtype (inside a trace: free when it already is)."""
    return lax.convert_element_type(t, jnp.result_type(a))


def _value_and(transform, f):
    """``value_and_D(x, *ctx) -> (f(x), D f(x))`` for ``transform`` = jacfwd/jacrev/grad, one pass."""

    def both(x, *ctx):
        y = f(x, *ctx)
        return y, y

    derivative = transform(both, has_aux=True)

    def value_and(x, *ctx):
        d, value = derivative(x, *ctx)
        return value, d

    return value_and


def _jacobian_transform(mode):
    return jax.jacfwd if mode == "forward" else jax.jacrev


def _gradient_pair(f, mode):
    """(gradient, value_and_gradient) of a scalar f in ``mode``."""
    if mode == "forward":
        return jax.jacfwd(f), _value_and(jax.jacfwd, f)
    return jax.grad(f), jax.value_and_grad(f)


def _derivative_pair(f, mode, scalar_output):
    """(derivative, value_and_derivative) at a scalar x."""
    if mode == "forward":

        def value_and_derivative(x, *ctx):
            return jax.jvp(lambda x: f(x, *ctx), (x,), (jnp.ones_like(x),))

        def derivative(x, *ctx):
            return value_and_derivative(x, *ctx)[1]

        return derivative, value_and_derivative
    if scalar_output:
        return jax.grad(f), jax.value_and_grad(f)
    return jax.jacrev(f), _value_and(jax.jacrev, f)


def _forward_products(g, x, tangents):
    """``(g(x), J @ t for each t)``: one ``jvp``, or ``vmap(jvp)`` stacked for a batch."""
    if len(tangents) == 1:
        return jax.jvp(g, (x,), (_like(tangents[0], x),))
    stacked = jnp.stack([_like(t, x) for t in tangents])
    return jax.vmap(lambda t: jax.jvp(g, (x,), (t,)), out_axes=(None, 0))(stacked)


def _reverse_products(g, x, cotangents):
    """``(g(x), c @ J for each c)``: one ``vjp``, its pullback vmapped over a batch."""
    y, vjp = jax.vjp(g, x)
    if len(cotangents) == 1:
        return y, vjp(_like(cotangents[0], y))[0]
    return y, jax.vmap(vjp)(jnp.stack([_like(c, y) for c in cotangents]))[0]


def _batched(f, products, batch, with_first, flat):
    """A batched operator: ``products`` (forward or reverse) of ``f(x, *ctx)`` over the tangents.

    With ``flat`` (numpy family): ``fn(x, *tangents, *ctx)`` returns the stacked
    products (the single product for a batch of one). Otherwise (jax family):
    ``fn(x, tangents, *ctx)`` returns them as a tuple. ``with_first`` puts
    ``f(x)`` (the value, or the gradient for hvp) before them.
    """
    fn: Callable[..., Any]
    if flat:

        def fn(x, *args):
            ctx = args[batch:]
            first, stacked = products(lambda x: f(x, *ctx), x, args[:batch])
            return (first, stacked) if with_first else stacked

    else:

        def fn(x, tangents, *ctx):
            first, stacked = products(lambda x: f(x, *ctx), x, tangents)
            split = (stacked,) if batch == 1 else tuple(stacked[i] for i in range(batch))
            return (first, split) if with_first else split

    return fn


def _second_order(value_and_first, outer_mode):
    """``(x, *ctx) -> (f(x), first, second)``: the ``outer_mode`` Jacobian of ``value_and_first``."""
    outer = _jacobian_transform(outer_mode)

    def value_first_and_second(x, *ctx):
        def first_with_aux(x):
            value, first = value_and_first(x, *ctx)
            return first, (value, first)

        second, (value, first) = outer(first_with_aux, has_aux=True)(x)
        return value, first, second

    return value_first_and_second
