"""How many seeds one vectorized pass of a JAX sweep takes: the selector's ``batch_size``, or the largest
batch whose working memory, read from XLA's memory analysis of one seed's compiled product, fits the budget.

The choice itself is :func:`diffinterface.core.batching.choose_batch_size`'s;
this module only estimates one seed's bytes. The estimate compiles the product
for one seed (``jvp`` forward, ``vjp`` reverse) at ``x`` and reads
``memory_analysis()``: its temporaries and its output, which a batch holds once
per seed; and, since XLA may fuse one seed's product into nothing worth
counting where a batch materializes its intermediates, it takes at least the
bytes of every value the product's jaxpr computes. The primal's intermediates
are counted too, though a batch holds them once: an over-estimate, on the
safe side. Nothing is allocated.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ...core.batching import choose_batch_size
from .calls import _x64_scope


def _one_seed_bytes(f, x, ctx, mode, wide):
    """``seed_bytes()`` for :func:`choose_batch_size`: the compiled one-seed product's temporaries and output.

    None when it cannot be compiled (f branches on x's values, which only
    eager JAX runs): the sweep then runs whole, as without a budget.
    """

    def estimate():
        def product(z, seed):
            g = lambda v: f(v, *ctx)
            if mode == "forward":
                return jax.jvp(g, (z,), (seed,))[1]
            _y, vjp = jax.vjp(g, z)
            return vjp(seed)[0]

        try:
            with _x64_scope(wide):
                xa = jnp.asarray(x)
                if mode == "forward":
                    seed = jax.ShapeDtypeStruct(xa.shape, xa.dtype)
                else:
                    out = jax.eval_shape(lambda v: f(v, *ctx), xa)
                    seed = jax.ShapeDtypeStruct(out.shape, out.dtype)
                analysis = jax.jit(product).lower(xa, seed).compile().memory_analysis()
                traced = jax.make_jaxpr(product)(xa, seed)
        except Exception:  # noqa: BLE001 - no estimate: the sweep runs whole, and f's own errors come from the sweep
            return None
        compiled = (
            0
            if analysis is None
            else int(analysis.temp_size_in_bytes + analysis.output_size_in_bytes)
        )
        # XLA may fuse one seed's product into a reduction that keeps no intermediate (a scalar f of
        # a matrix product), where the batched product materializes them for every seed: the
        # intermediates' sizes bound what a seed adds to a batch from the other side.
        return max(compiled, _intermediate_bytes(traced.jaxpr))

    return estimate


def sweep_batch(adapter, problem, n, mode, f=None):
    """``(bound, chosen)``: ``chosen`` seeds per vectorized pass of a sweep over ``n`` seeds of ``f``
    (default ``problem.f``) in ``mode``; ``bound`` is ``chosen``, or None when one pass takes all
    (JAX's own ``vmap``, unchanged), or with ``devices`` a :class:`~.sharding.ShardedSweep`."""
    f = problem.f if f is None else f
    chosen = choose_batch_size(
        adapter.backend,
        n,
        _one_seed_bytes(f, problem.x, problem.ctx, mode, adapter._wide(problem)),
        problem.one_off,
    )
    devices = getattr(adapter.backend, "devices", None)
    if (
        devices is not None
    ):  # the seeds split across the devices (sharding.py), in batches of chosen
        from .sharding import sharded_sweep

        return sharded_sweep(devices, chosen if chosen < n else None), chosen
    return (chosen if chosen < n else None), chosen


def _intermediate_bytes(jaxpr):
    """The bytes of every value ``jaxpr`` computes, nested jaxprs (``jit``, ``custom_jvp``) included."""
    total = 0
    for eqn in jaxpr.eqns:
        inner = [p for p in eqn.params.values() if hasattr(p, "eqns") or hasattr(p, "jaxpr")]
        if inner:
            total += sum(_intermediate_bytes(getattr(p, "jaxpr", p)) for p in inner)
            continue
        for var in eqn.outvars:
            aval = getattr(var, "aval", None)
            if hasattr(aval, "shape") and hasattr(aval, "dtype"):
                total += int(math.prod(aval.shape)) * aval.dtype.itemsize
    return total
