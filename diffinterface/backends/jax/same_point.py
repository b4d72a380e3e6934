"""Same-point recipes for JAX (``prepare_pushforward_same_point`` and friends, ``core/same_point.py``).

At preparation one compiled function runs ``jax.linearize`` of f
(pushforward) or of its gradient (hvp), or ``jax.vjp`` of f (pullback), at x
and returns the residuals as a pytree (a ``jax.tree_util.Partial``); each
call applies them to the seeds, so f's forward (and, for hvp, backward) pass
is not run again. The preparation's own point compiles the products over its
residuals as constants (XLA optimizes them as such). A batch of seeds goes in
as a tuple and its products come out stacked, one array, which a second
compiled function splits into one array per seed (the numpy family: views of
one numpy copy): XLA computes a vmapped product into one stacked buffer much
faster than into one output per seed, and the split costs less than that
difference (``benchmarks/bench_same_point.py``). A preparation moved to
another x (``Impl.move``, used by the scipy adaptors from iterate to
iterate) computes each product whole, as an ordinary preparation does, with
functions of x compiled once, at the first move: no linearization per point.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...core import OPERATORS, Impl
from ...core.batching import record
from .batching import sweep_batch
from .calls import _owned, _unstacked, _wrap, _x64_scope
from .transforms import _mapped


@jax.jit
def _split(stacked):
    """The products stacked along a first axis, one array each (compiled per shape and dtype)."""
    return tuple(stacked[i] for i in range(stacked.shape[0]))


def _stacked_products(product, bound):
    """``(residuals, first, seeds) -> products``: ``product`` over the tuple ``seeds``, stacked, in vectorized
    passes of at most ``bound`` seeds (None: all at once), as the ordinary sweeps run."""

    def stacked(residuals, first, seeds):
        return _mapped(lambda seed: product(residuals, first, seed), jnp.stack(seeds), bound)

    return stacked


def _sweep_batch(adapter, operator, problem):
    """``(bound, chosen)`` of :func:`~diffinterface.backends.jax.batching.sweep_batch` for the seeds' sweep."""
    k, f = len(problem.tangents), problem.f
    if operator == "pullback":
        return sweep_batch(adapter, problem, k, "reverse")
    return sweep_batch(adapter, problem, k, "forward", jax.grad(f) if operator == "hvp" else None)


def _linearization(operator, g, x_dtype, jit):
    """``(at, product)``: ``at(x) -> (first, residuals)``, ``jit``-ed (compiled, or left eager), and
    ``product(residuals, first, seed)``, traceable."""
    if operator == "pullback":
        at = jit(lambda x: jax.vjp(g, x))

        def product(residuals, first, seed):
            return residuals(jnp.asarray(seed, first.dtype))[0]

    else:  # jax.linearize's map is a pytree too (a Partial): compiled once, applied to the residuals
        at = jit(lambda x: jax.linearize(jax.grad(g) if operator == "hvp" else g, x))

        def product(residuals, first, seed):
            return residuals(jnp.asarray(seed, x_dtype))

    return at, product


def _pair(operator, g, x_dtype):
    """``pair(x, seed) -> (first, product)``, traceable: the operator computed whole at x, as an ordinary
    preparation computes it (for a preparation moved to another x)."""
    if operator == "pullback":

        def pair(x, seed):
            y, back = jax.vjp(g, x)
            return y, back(jnp.asarray(seed, y.dtype))[0]

        return pair
    h = jax.grad(g) if operator == "hvp" else g

    def pair(x, seed):
        return jax.jvp(h, (x,), (jnp.asarray(seed, x_dtype),))

    return pair


def _stacked_pairs(pair, bound):
    """``(x, seeds) -> (first, products stacked)``: ``pair`` over the tuple ``seeds``, in vectorized passes
    of at most ``bound`` seeds (None: all at once)."""

    def stacked(x, seeds):
        products = _mapped(lambda seed: pair(x, seed)[1], jnp.stack(seeds), bound)
        return pair(x, seeds[0])[0], products

    return stacked


def prepare_same_point(adapter, operator, problem):
    """The same-point :class:`~diffinterface.core.Impl` of ``operator`` for ``problem`` (an array x), or None."""
    if problem.tree is not None or operator not in ("pushforward", "pullback", "hvp"):
        return None
    f, ctx, numpy_family = problem.f, problem.ctx, problem.family == "numpy"
    wide = adapter._wide(problem)
    bound, chosen = _sweep_batch(adapter, operator, problem)
    x_dtype = jnp.dtype(problem.x_dtype)
    with _x64_scope(wide):
        jit = (
            jax.jit if adapter._compiles(problem) else (lambda fn: fn)
        )  # AutoJAX(jit=False): eagerly
        at, product = _linearization(operator, lambda x: f(x, *ctx), x_dtype, jit)
        pair = _pair(operator, lambda x: f(x, *ctx), x_dtype)
    at, split = _wrap(at, None, wide), (_split if jit is jax.jit else _split.__wrapped__)
    plain, valued = OPERATORS[operator].methods
    fresh = (
        np.array if numpy_family else (lambda a: a)
    )  # numpy results are the caller's to write into
    moving = []  # the functions of x and the seeds, compiled at the first move
    # the products as the caller gets them: one array per seed (numpy: copies the caller owns)
    if numpy_family:
        first_out = _owned

        def one_out(product):
            return (_owned(product),)

        def many_out(stacked):
            return _unstacked(_owned(stacked))

    else:
        first_out, many_out = (lambda a: a), split

        def one_out(product):
            return (product,)

    def own_point(x):
        """Products compiled over this point's residuals as constants: faster products, compiled per point."""
        first, residuals = at(x)
        stacked_products = _stacked_products(product, bound)
        with _x64_scope(wide):
            apply_one = jit(lambda seed: product(residuals, first, seed))
            apply_batch = jit(lambda seeds: stacked_products(residuals, first, seeds))
        value = first_out(first)

        def products(seeds):
            if len(seeds) == 1:  # numpy seeds and numbers go to the compiled functions as they are
                return one_out(apply_one(seeds[0]))
            return many_out(apply_batch(seeds))

        return (lambda seeds: (fresh(value), products(seeds))), products

    def moved_point(x):
        """The operator computed whole at x per call, as an ordinary preparation: a linearization at each
        new point would cost a call of its own, and its products, the residuals passed as arguments (XLA
        cannot fold them), are no faster than the whole computation (``benchmarks/bench_newton_cg.py``)."""
        if not moving:  # with the first result, and the products alone (the plain method's)
            stacked = _stacked_pairs(pair, bound)
            with _x64_scope(wide):
                moving.extend(
                    (
                        jit(pair),
                        jit(stacked),
                        jit(lambda x, s: pair(x, s)[1]),
                        jit(lambda x, s: stacked(x, s)[1]),
                    )
                )
        one, batch, one_alone, batch_alone = moving  # x goes to them as it is

        def products(seeds):  # no first result to compute, copy or return
            if len(seeds) == 1:
                return one_out(one_alone(x, seeds[0]))
            return many_out(batch_alone(x, seeds))

        def both(seeds):
            if len(seeds) == 1:
                first, product = one(x, seeds[0])
                return first_out(first), one_out(product)
            first, stacked = batch(x, seeds)
            return first_out(first), many_out(stacked)

        return both, products

    def impl_at(x, own=False):
        both, products = (own_point if own else moved_point)(x)
        run_both, run = _wrap(both, None, wide), _wrap(products, None, wide)
        return record(
            Impl(
                move=impl_at,
                **{
                    plain: lambda x, seeds, *ctx: run(seeds),
                    valued: lambda x, seeds, *ctx: run_both(seeds),
                },
            ),
            chosen,
        )

    return impl_at(problem.x, own=True)
