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


def _jacobian_transform(mode, batch=None):
    """``jax.jacfwd`` or ``jax.jacrev``; with a ``batch`` smaller than the sweep, the same in batches."""
    if batch is not None:
        return _bounded_jacobian(mode, batch)
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


def _whole(batch, n):
    """True when a sweep over ``n`` seeds runs as one plain ``vmap`` (no batch bound, no devices)."""
    return batch is None or (isinstance(batch, int) and batch >= n)


def _mapped(fn, stacked, batch):
    """``fn`` over the leading axis of ``stacked``, stacked: one ``vmap`` when ``batch`` (None: all)
    takes every seed, else ``lax.map`` over batches of ``batch`` seeds, each vmapped, inside the one
    traced function (the last partial batch too: nothing is traced again per call). A ``batch`` with a
    ``map`` method (a ``sharding.ShardedSweep``: ``AutoJAX(devices=...)``) maps ``fn`` itself."""
    if _whole(batch, stacked.shape[0]):
        return jax.vmap(fn)(stacked)
    if hasattr(batch, "map"):
        return batch.map(fn, stacked)
    return lax.map(fn, stacked, batch_size=batch)


def _forward_products(g, x, tangents, batch=None):
    """``(g(x), J @ t for each t)``: one ``jvp``, or ``vmap(jvp)`` stacked for a batch (in batches of ``batch``)."""
    if len(tangents) == 1:
        return jax.jvp(g, (x,), (_like(tangents[0], x),))
    stacked = jnp.stack([_like(t, x) for t in tangents])
    if _whole(batch, len(tangents)):
        return jax.vmap(lambda t: jax.jvp(g, (x,), (t,)), out_axes=(None, 0))(stacked)
    return g(x), _mapped(lambda t: jax.jvp(g, (x,), (t,))[1], stacked, batch)


def _reverse_products(g, x, cotangents, batch=None):
    """``(g(x), c @ J for each c)``: one ``vjp``, its pullback vmapped over a batch (in batches of ``batch``)."""
    y, vjp = jax.vjp(g, x)
    if len(cotangents) == 1:
        return y, vjp(_like(cotangents[0], y))[0]
    return y, _mapped(lambda c: vjp(c)[0], jnp.stack([_like(c, y) for c in cotangents]), batch)


def _bounded_jacobian(mode, batch):
    """``jax.jacfwd`` / ``jax.jacrev`` (with ``has_aux``) whose sweep over the basis runs in batches of
    ``batch`` seeds (:func:`_mapped`), for an array ``x`` and an array output."""

    def transform(f, has_aux=False):
        def jacobian(x, *ctx):
            if mode == "forward":
                if has_aux:
                    y, aux = f(x, *ctx)
                    g = lambda z: f(z, *ctx)[0]  # noqa: E731
                else:
                    g = lambda z: f(z, *ctx)  # noqa: E731
                    y = jax.eval_shape(g, x)
                basis = jnp.eye(x.size, dtype=jnp.result_type(x)).reshape((x.size, *x.shape))
                columns = _mapped(lambda t: jax.jvp(g, (x,), (t,))[1], basis, batch)
                jac = jnp.moveaxis(columns, 0, -1).reshape(tuple(y.shape) + x.shape)
            else:
                y, vjp, *rest = jax.vjp(lambda z: f(z, *ctx), x, has_aux=has_aux)
                aux = rest[0] if has_aux else None
                basis = jnp.eye(y.size, dtype=jnp.result_type(y)).reshape((y.size, *y.shape))
                jac = _mapped(lambda c: vjp(c)[0], basis, batch).reshape(y.shape + x.shape)
            return (jac, aux) if has_aux else jac

        return jacobian

    return transform


def _batched(f, products, batch, with_first, flat, sweep_batch=None):
    """A batched operator: ``products`` (forward or reverse) of ``f(x, *ctx)`` over the tangents.

    With ``flat`` (numpy family): ``fn(x, *tangents, *ctx)`` returns the stacked
    products (the single product for a batch of one). Otherwise (jax family):
    ``fn(x, tangents, *ctx)`` returns them as a tuple. ``with_first`` puts
    ``f(x)`` (the value, or the gradient for hvp) before them. ``sweep_batch``
    bounds how many tangents one vectorized pass takes (None: all).
    """
    fn: Callable[..., Any]
    if flat:

        def fn(x, *args):
            ctx = args[batch:]
            first, stacked = products(lambda x: f(x, *ctx), x, args[:batch], sweep_batch)
            return (first, stacked) if with_first else stacked

    else:

        def fn(x, tangents, *ctx):
            first, stacked = products(lambda x: f(x, *ctx), x, tangents, sweep_batch)
            split = (stacked,) if batch == 1 else tuple(stacked[i] for i in range(batch))
            return (first, split) if with_first else split

    return fn


def _second_order(value_and_first, outer_mode, batch=None):
    """``(x, *ctx) -> (f(x), first, second)``: the ``outer_mode`` Jacobian of ``value_and_first``."""
    outer = _jacobian_transform(outer_mode, batch)

    def value_first_and_second(x, *ctx):
        def first_with_aux(x):
            value, first = value_and_first(x, *ctx)
            return first, (value, first)

        second, (value, first) = outer(first_with_aux, has_aux=True)(x)
        return value, first, second

    return value_first_and_second
