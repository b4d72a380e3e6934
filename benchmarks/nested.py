"""Nested compiled tapes: an outer function that calls an inner one with its own prepared gradient.

In Python, "the inner function has its own prepared gradient" means the
framework that differentiates the outer function must not trace the inner
one but call a precomputed rule for it: a ``jax.custom_vjp``, a
``torch.autograd.Function``, an ``autograd.extend.primitive``. The interface
side is ``di.DifferentiateWith(g, backend)``; the native side of the
comparison is the same mechanism written by hand once per framework
(:func:`with_custom_gradient` around the framework's own gradient).

:func:`cross_framework` adds the rows where the frameworks differ: a jitted
JAX outer function around a torch inner (the chain energy), bridged
by ``DifferentiateWith``, timed against the torch inner's own prepared
``value_and_pullback`` plus the JAX outer's own gradient.

The outer function is ``2 * g(xs)`` with ``g(xs) = sum(xs**2)``, as in the seed.
"""

from __future__ import annotations

import diffinterface as di

from . import timing
from .workloads import counted, sum_of_squares


def with_custom_gradient(framework, value_and_gradient, gradient):
    """``g`` as a function whose derivative the framework takes from the given rule, not by tracing.

    ``value_and_gradient(xs) -> (g(xs), grad g(xs))`` serves frameworks that
    compute the rule on the forward pass (JAX, torch); ``gradient(xs)`` serves
    autograd, whose ``defvjp`` rule runs on the backward pass.
    """
    if framework == "jax":
        import jax

        @jax.custom_vjp
        def inner(xs):
            return sum_of_squares(xs)

        def forward(xs):
            return value_and_gradient(xs)

        def backward(grad, cotangent):
            return (cotangent * grad,)

        inner.defvjp(forward, backward)
        return inner

    if framework == "torch":
        import torch

        class Inner(torch.autograd.Function):
            @staticmethod
            def forward(xs):
                with torch.enable_grad():
                    value, grad = value_and_gradient(xs)
                return value.detach(), grad.detach()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.mark_non_differentiable(output[1])
                ctx.save_for_backward(output[1])

            @staticmethod
            def backward(ctx, cotangent, _):
                (grad,) = ctx.saved_tensors
                return cotangent * grad

        return lambda xs: Inner.apply(xs)[0]

    if framework == "autograd":
        from autograd.extend import defvjp, primitive

        inner = primitive(sum_of_squares)
        defvjp(inner, lambda value, xs: lambda cotangent: cotangent * gradient(xs))
        return inner

    raise ValueError(f"{framework} has no custom-derivative mechanism")


def outer_of(inner):
    """The nested-tapes outer function ``2 * inner(xs)``."""

    def twice_inner(xs):
        return 2.0 * inner(xs)

    return twice_inner


def outer_through_interface(framework, backend, x):
    """The outer function whose inner ``g`` is ``di.DifferentiateWith(g, backend)``.

    With the outer's own framework (the benchmark's case) the bridge calls
    ``g`` directly and the framework differentiates through it.
    """
    return outer_of(di.DifferentiateWith(sum_of_squares, backend))


def native_inner_rule(framework):
    """The inner rule from the framework itself (a native custom derivative, no interface)."""
    if framework == "jax":
        import jax

        value_and_grad = jax.value_and_grad(sum_of_squares)
        return with_custom_gradient(framework, value_and_grad, None)
    if framework == "torch":
        import torch

        def value_and_gradient(xs):
            leaf = xs.detach().requires_grad_(True)
            value = sum_of_squares(leaf)
            (grad,) = torch.autograd.grad(value, leaf)
            return value, grad

        return with_custom_gradient(framework, value_and_gradient, None)
    if framework == "autograd":
        import autograd

        return with_custom_gradient(framework, None, autograd.grad(sum_of_squares))
    raise ValueError(f"{framework} has no custom-derivative mechanism")


def native_custom_rule_gradient(framework):
    """``gradient_at(xs)``: the outer gradient, natively, with ``g`` through the native custom rule."""
    outer = counted(outer_of(native_inner_rule(framework)))
    if framework == "jax":
        import jax

        return jax.jit(jax.grad(outer))
    if framework == "torch":
        import torch

        def gradient(xs):
            leaf = xs.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(outer(leaf), leaf)
            return grad

        return gradient
    import autograd

    return autograd.grad(outer)


# -- cross-framework rows ---------------------------------------------------------------------


def _outer_part(x):
    """What the JAX outer function adds around the inner: a little work of its own."""
    import jax.numpy as jnp

    return 0.5 * jnp.sum(jnp.sin(x) ** 2)


def cross_framework(settings, sizes=(1000, 10000), log=None):
    """Rows: ``jit(grad(x -> 2 * g(x) + outer(x)))``, g a torch chain energy bridged into JAX.

    The reference is what the bridge cannot avoid: the torch inner's prepared
    ``value_and_pullback`` (torch tensors in) plus the JAX outer part's own
    jitted gradient. Interleaved, median of per-round ratios.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np
    import torch

    from .workloads import numpy_input, chain_energy_vec, WORKLOADS

    workload = next(w for w in WORKLOADS if w.name == "chain-vec")
    inner = di.AutoTorch()
    rows = []
    for size in sizes:
        x_np = numpy_input(workload, size)
        x_jax, x_torch = jnp.asarray(x_np), torch.tensor(x_np)
        g = di.DifferentiateWith(chain_energy_vec, inner)
        bridged = jax.jit(jax.grad(lambda x: 2.0 * g(x) + _outer_part(x)))
        prep = di.prepare_pullback(
            chain_energy_vec, inner, x_torch, (torch.tensor(1.0, dtype=torch.float64),)
        )
        one = (torch.tensor(2.0, dtype=torch.float64),)
        outer_native = jax.jit(jax.grad(_outer_part))

        def reference():
            di.value_and_pullback(chain_energy_vec, inner, x_torch, one, prep=prep)
            return outer_native(x_jax).block_until_ready()

        def through_bridge():
            return bridged(x_jax).block_until_ready()

        _, (want,) = di.value_and_pullback(chain_energy_vec, inner, x_torch, one, prep=prep)
        got = np.asarray(through_bridge()) - np.asarray(outer_native(x_jax))
        correct = bool(np.allclose(got, want.numpy(), rtol=1e-10, atol=1e-12))
        loops = [timing.loops_for(call, settings)[:2] for call in (reference, through_bridge)]
        per_round = sum(n * once for n, once in loops)
        rounds = timing.rounds_within(settings.case_budget_s, per_round, settings, settings.rounds)
        ref_t, bridge_t = timing.interleaved(
            [(reference, loops[0][0]), (through_bridge, loops[1][0])], rounds
        )
        ratio = float(np.median(np.array(bridge_t) / np.array(ref_t)))
        row = {
            "outer": "jax.jit(jax.grad)",
            "inner": "AutoTorch()",
            "workload": workload.name,
            "size": size,
            "reference_s": float(np.median(ref_t)),
            "bridged_s": float(np.median(bridge_t)),
            "ratio": ratio,
            "rounds": rounds,
            "correct": correct,
        }
        rows.append(row)
        if log is not None:
            print(
                f"cross-framework jax over torch  n={size}  ratio {ratio:.2f}", file=log, flush=True
            )
    return rows


def cross_framework_markdown(rows):
    """The rows as a markdown section (appended to results.md)."""
    lines = [
        "",
        "## Cross-framework: a torch inner inside a jitted JAX gradient (DifferentiateWith)",
        "",
        "Reference: the torch inner's prepared `value_and_pullback` + the JAX outer part's jitted gradient.",
        "",
        "| outer | inner | workload | n | reference (us) | bridged (us) | ratio | correct |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['outer']} | {r['inner']} | {r['workload']} | {r['size']} | {r['reference_s'] * 1e6:.1f} "
            f"| {r['bridged_s'] * 1e6:.1f} | {r['ratio']:.2f} | {r['correct']} |"
        )
    return "\n".join(lines) + "\n"
