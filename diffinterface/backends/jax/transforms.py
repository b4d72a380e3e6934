"""Transformations of ``f(x, *ctx) -> y`` into its derivatives, all traceable (jit, vmap, and again)."""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .calls import _output_checked


def _like(t, a):
    """``t`` cast to ``a``'s dtype (inside a trace: free when it already is)."""
    return lax.convert_element_type(t, jnp.result_type(a))


def _value_and(transform, f, has_aux=False):
    """``value_and_D(x, *ctx) -> (f(x), D f(x))`` for ``transform`` = jacfwd/jacrev/grad, one pass.

    With ``has_aux`` (f returns ``(y, aux)``, see ``aux.py``): ``((f(x), D f(x)), aux)``.
    """

    def both(x, *ctx):
        out = f(x, *ctx)
        return (out[0] if has_aux else out), out

    derivative = transform(both, has_aux=True)

    def value_and(x, *ctx):
        d, value = derivative(x, *ctx)
        return ((value[0], d), value[1]) if has_aux else (value, d)

    return value_and


def _value_and_grad(f, has_aux):
    """``jax.value_and_grad``; with ``has_aux``, its ``((value, aux), gradient)`` as ``((value, gradient), aux)``."""
    if not has_aux:
        return jax.value_and_grad(f)
    value_and_gradient = jax.value_and_grad(f, has_aux=True)

    def value_and(x, *ctx):
        (value, aux), gradient = value_and_gradient(x, *ctx)
        return (value, gradient), aux

    return value_and


def _jacobian_transform(mode, batch=None):
    """``jax.jacfwd`` or ``jax.jacrev``; with a ``batch`` smaller than the sweep, the same in batches."""
    if batch is not None:
        return _bounded_jacobian(mode, batch)
    return jax.jacfwd if mode == "forward" else jax.jacrev


def _gradient_pair(f, mode, has_aux=False, batch=None):
    """(gradient, value_and_gradient) of a scalar f in ``mode`` (with ``has_aux``, each returns ``(..., aux)``);
    in forward mode, ``batch`` bounds the seeds of one pass as for a Jacobian."""
    if mode == "forward":
        transform = _jacobian_transform(mode, batch)
        return transform(f, has_aux=has_aux), _value_and(transform, f, has_aux)
    return jax.grad(f, has_aux=has_aux), _value_and_grad(f, has_aux)


def _derivative_pair(f, mode, scalar_output, has_aux=False):
    """(derivative, value_and_derivative) at a scalar x (with ``has_aux``, each returns ``(..., aux)``)."""
    if not has_aux:  # jvp and jacrev take any pytree f returns; derivative has no tree case
        f = _output_checked(f)
    if mode == "forward":

        def value_and_derivative(x, *ctx):
            out = jax.jvp(lambda x: f(x, *ctx), (x,), (jnp.ones_like(x),), has_aux=has_aux)
            return (out[:2], out[2]) if has_aux else out

        def derivative(x, *ctx):
            both = value_and_derivative(x, *ctx)
            return (both[0][1], both[1]) if has_aux else both[1]

        return derivative, value_and_derivative
    if scalar_output:
        return jax.grad(f, has_aux=has_aux), _value_and_grad(f, has_aux)
    return jax.jacrev(f, has_aux=has_aux), _value_and(jax.jacrev, f, has_aux)


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


def _forward_products(g, x, tangents, batch=None, has_aux=False):
    """``(g(x), J @ t for each t)``: one ``jvp``, or ``vmap(jvp)`` stacked for a batch (in batches of ``batch``).

    With ``has_aux`` (g returns ``(y, aux)``): ``((g(x), products), aux)``.
    """
    if len(tangents) == 1:
        out = jax.jvp(g, (x,), (_like(tangents[0], x),), has_aux=has_aux)
        return (out[:2], out[2]) if has_aux else out
    stacked = jnp.stack([_like(t, x) for t in tangents])
    if _whole(batch, len(tangents)):
        axes = (None, 0, None) if has_aux else (None, 0)  # aux depends on x only: computed once
        out = jax.vmap(lambda t: jax.jvp(g, (x,), (t,), has_aux=has_aux), out_axes=axes)(stacked)
        return (out[:2], out[2]) if has_aux else out
    first = g(x)
    primal = (lambda z: g(z)[0]) if has_aux else g
    products = _mapped(lambda t: jax.jvp(primal, (x,), (t,))[1], stacked, batch)
    return ((first[0], products), first[1]) if has_aux else (first, products)


def _reverse_products(g, x, cotangents, batch=None, has_aux=False):
    """``(g(x), c @ J for each c)``: one ``vjp``, its pullback vmapped over a batch (in batches of ``batch``).

    With ``has_aux`` (g returns ``(y, aux)``): ``((g(x), products), aux)``.
    """
    y, vjp, *aux = jax.vjp(g, x, has_aux=has_aux)
    if len(cotangents) == 1:
        products = vjp(_like(cotangents[0], y))[0]
    else:
        products = _mapped(lambda c: vjp(c)[0], jnp.stack([_like(c, y) for c in cotangents]), batch)
    return ((y, products), aux[0]) if has_aux else (y, products)


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


def _around_gradients(build, compiled=True):
    """``products`` for :func:`_batched` from an evaluating outer's formula around the gradient ``g``.

    ``build(xp, gradient, mapped)`` gives ``fn(x, tangents) -> (gradient at x, products stacked)``
    (``prepare_batched_gradient`` in core/adapter.py); ``mapped(fn, stacked)`` is ``fn`` mapped
    over the tangents (in batches of ``batch``). ``compiled``: the formula and the gradients
    trace into one function; otherwise (eager) the formula's own steps run on numpy, where
    each small operation costs less than an eager JAX one.
    """

    def products(g, x, tangents, batch=None, has_aux=False):
        if compiled:
            first, stacked = build(jnp, g, lambda fn, stacked: _mapped(fn, stacked, batch))(
                x, tangents
            )
        else:
            first, stacked = build(
                np, g, lambda fn, stacked: np.asarray(_mapped(fn, stacked, batch))
            )(x, tangents)
        return first, (stacked[0] if len(tangents) == 1 else stacked)

    return products


def _batched(f, products, batch, with_first, flat, sweep_batch=None, has_aux=False):
    """A batched operator: ``products`` (forward or reverse) of ``f(x, *ctx)`` over the tangents.

    With ``flat`` (numpy family): ``fn(x, *tangents, *ctx)`` returns the stacked
    products (the single product for a batch of one). Otherwise (jax family):
    ``fn(x, tangents, *ctx)`` returns them as a tuple. ``with_first`` puts
    ``f(x)`` (the value, or the gradient for hvp) before them. ``sweep_batch``
    bounds how many tangents one vectorized pass takes (None: all). With
    ``has_aux`` (f returns ``(y, aux)``), ``fn`` returns ``(that, aux)``.
    """
    fn: Callable[..., Any]

    def run(x, tangents, ctx):
        out = products(lambda x: f(x, *ctx), x, tangents, sweep_batch, has_aux)
        return out if has_aux else (out, None)

    def result(value, aux):
        return (value, aux) if has_aux else value

    if flat:

        def fn(x, *args):
            (first, stacked), aux = run(x, args[:batch], args[batch:])
            return result((first, stacked) if with_first else stacked, aux)

    else:

        def fn(x, tangents, *ctx):
            (first, stacked), aux = run(x, tangents, ctx)
            split = (stacked,) if batch == 1 else tuple(stacked[i] for i in range(batch))
            return result((first, split) if with_first else split, aux)

    return fn


def _second_order(value_and_first, outer_mode, batch=None, has_aux=False):
    """``(x, *ctx) -> (f(x), first, second)``: the ``outer_mode`` Jacobian of ``value_and_first``
    (with ``has_aux``, whose results are ``((value, first), aux)``: ``((f(x), first, second), aux)``)."""
    outer = _jacobian_transform(outer_mode, batch)

    def value_first_and_second(x, *ctx):
        def first_with_aux(x):
            out = value_and_first(x, *ctx)
            (value, first), aux = out if has_aux else (out, None)
            return first, (value, first, aux)

        second, (value, first, aux) = outer(first_with_aux, has_aux=True)(x)
        return ((value, first, second), aux) if has_aux else (value, first, second)

    return value_first_and_second
