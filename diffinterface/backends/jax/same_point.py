"""Same-point recipes for JAX (``prepare_pushforward_same_point`` and friends, ``Adapter.prepare_same_point``).

At preparation one compiled function runs ``jax.linearize`` of f
(pushforward) or of its gradient (hvp), or ``jax.vjp`` of f (pullback), at x
and returns the residuals as a pytree (a ``jax.tree_util.Partial``); each
call applies them to the seeds, so f's forward (and, for hvp, backward) pass
is not run again. The products are compiled with the residuals as
constants (XLA optimizes them as such). A batch of seeds goes in
as a tuple and its products come out stacked, one array, which a second
compiled function splits into one array per seed (the numpy family: views of
one numpy copy): XLA computes a vmapped product into one stacked buffer much
faster than into one output per seed, and the split costs less than that
difference (``benchmarks/bench_same_point.py``). Compiling per point costs
as much as many products: callers that go from point to point prepare an
ordinary ``prepare_hvp`` once (``Capabilities.cheap_same_point`` is False).
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
    at, split = _wrap(at, None, wide), (_split if jit is jax.jit else _split.__wrapped__)
    plain, valued = OPERATORS[operator].methods
    first, residuals = at(problem.x)
    stacked_products = _stacked_products(product, bound)
    with _x64_scope(wide):  # the residuals are constants of the compiled products: XLA folds them
        apply_one = jit(lambda seed: product(residuals, first, seed))
        apply_batch = jit(lambda seeds: stacked_products(residuals, first, seeds))
    # the results as the caller gets them: one array per seed (numpy: copies the caller owns)
    if numpy_family:
        value, fresh = _owned(first), np.array

        def one_out(product):
            return (_owned(product),)

        def many_out(stacked):
            return _unstacked(_owned(stacked))

    else:
        value, fresh, many_out = first, (lambda a: a), split

        def one_out(product):
            return (product,)

    def products(seeds):
        if len(seeds) == 1:  # numpy seeds and numbers go to the compiled functions as they are
            return one_out(apply_one(seeds[0]))
        return many_out(apply_batch(seeds))

    run = _wrap(products, None, wide)
    run_both = _wrap(lambda seeds: (fresh(value), products(seeds)), None, wide)
    return record(
        Impl(
            **{
                plain: lambda x, seeds, *ctx: run(seeds),
                valued: lambda x, seeds, *ctx: run_both(seeds),
            }
        ),
        chosen,
    )
