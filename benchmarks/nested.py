"""The nested workload: an outer function that calls an inner one with its own prepared gradient.

In Python, "the inner function has its own prepared gradient" means the
framework that differentiates the outer function must not trace the inner
one but call a precomputed rule for it: a ``jax.custom_vjp``, a
``torch.autograd.Function``, an ``autograd.extend.primitive``. That is what
DifferentiationInterface.jl calls ``DifferentiateWith(f, backend)``;
diffinterface does not have it yet (DESIGN.md lists it as "later"), so
:func:`with_custom_gradient` writes it here by hand, once per framework, and
takes the inner rule as a parameter: the interface's prepared
``value_and_gradient`` or the framework's own gradient.

The outer function is ``2 * g(xs)`` with ``g(xs) = sum(xs**2)``, as in the thread it comes from (benchmarks/README.md).
"""

from __future__ import annotations

import diffinterface as di

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
    """The outer function ``2 * inner(xs)``."""

    def twice_inner(xs):
        return 2.0 * inner(xs)

    return twice_inner


def outer_through_interface(framework, backend, x):
    """The outer function whose inner ``g`` is differentiated by diffinterface's prepared gradient."""
    # Under the outer jax.jit the rule sees tracers, not the concrete arrays a checked preparation
    # was made for: JAX's inner preparation skips the check (DifferentiateWith will own this boundary).
    prep = di.prepare_gradient(sum_of_squares, backend, x, strict=framework != "jax")
    return outer_of(
        with_custom_gradient(
            framework,
            lambda xs: di.value_and_gradient(sum_of_squares, backend, xs, prep=prep),
            lambda xs: di.gradient(sum_of_squares, backend, xs, prep=prep),
        )
    )


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
