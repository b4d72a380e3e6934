"""Second order on torch: double backward, and first derivatives torch can differentiate again."""

from __future__ import annotations

import torch
from torch.autograd import forward_ad as fwAD

from ...core import Impl, require_scalar_output
from ...core.batching import record
from .autodiff import _enable_grad, _grad_enabled, _jvp, _traced, _vjp, _vjps, _with_value
from .aux import native_aux
from .batching import sweep_batch
from .boundary import _basis, _Boundary, _contexts, _materialized
from .graph_watch import refuse_a_constant_output


class TorchSecondOrder:
    """The second-order recipes of :class:`~diffinterface.backends.torch.adapter.TorchAdapter` (a mixin)."""

    # -- second order: double backward (faster than torch.func or autograd.functional Hessians and
    # forward-over-reverse HVPs; benchmarks/README.md)
    # -------------------------------------------------

    def _gradient_graph(self, problem):
        """``run(x, ctx) -> (xr, value, gradient with its graph)`` for a scalar ``f``."""
        b = _Boundary(problem)
        recording, fn, broken = b.recording, b.fn, b.broken

        def run(x, ctx):
            if ctx:
                ctx = _contexts(ctx)
            xr = recording(x)
            if _grad_enabled():
                y = _traced(fn, xr, ctx)
                return xr, y, _vjp(y, xr, None, broken, create_graph=True)
            with _enable_grad():
                y = _traced(fn, xr, ctx)
                return xr, y, _vjp(y, xr, None, broken, create_graph=True)

        return b, run

    def prepare_hessian(self, problem):
        require_scalar_output(problem, "hessian")
        b, run = self._gradient_graph(problem)
        back = b.back
        basis = _basis(problem.x_shape, problem.x_dtype, b.to_torch(problem.x).device)
        hess_shape = problem.x_shape + problem.x_shape
        chunk, chosen = sweep_batch(self, b, problem, problem.x_size)

        def value_gradient_and_hessian(x, *ctx):
            xr, y, g = run(x, ctx)
            h = _materialized(_vjps(g, xr, basis, None, chunk=chunk)).reshape(hess_shape)
            return back(y.detach()), back(g.detach()), back(h)

        return record(
            Impl(
                value_gradient_and_hessian=value_gradient_and_hessian,
                hessian=lambda x, *ctx: value_gradient_and_hessian(x, *ctx)[2],
            ),
            chosen,
        )

    def prepare_hvp(self, problem):
        require_scalar_output(problem, "hvp")
        b, run = self._gradient_graph(problem)
        as_tensor, back = b.as_tensor, b.back
        n_seeds = len(problem.tangents)
        chunk, chosen = sweep_batch(self, b, problem, n_seeds)

        def gradient_and_hvp(x, tangents, *ctx):
            xr, y, g = run(x, ctx)
            if n_seeds == 1:
                results = (back(_materialized(_vjp(g, xr, as_tensor(tangents[0]), None))),)
            else:
                seeds = torch.stack([as_tensor(t) for t in tangents])
                results = tuple(
                    back(r) for r in _materialized(_vjps(g, xr, seeds, None, chunk=chunk))
                )
            return back(g.detach()), results

        return record(Impl.from_valued("hvp", gradient_and_hvp), chosen)

    def prepare_second_derivative(self, problem):
        b = _Boundary(problem)
        to_torch, recording, back, fn, broken = b.to_torch, b.recording, b.back, b.fn, b.broken
        spec = problem.spec
        scalar_out = spec.shape == ()
        basis = _basis(spec.shape, spec.dtype, to_torch(problem.x).device)

        def derivatives(xr, ctx):
            y = _traced(fn, xr, ctx)
            if scalar_out:
                d = _vjp(y, xr, None, broken, create_graph=True)
                return y, d, _materialized(_vjp(d, xr, None, None))
            # x is a scalar: row i of a batched backward pass over the output basis is dy_i/dx.
            d = _vjps(y, xr, basis, broken, create_graph=True).reshape(spec.shape)
            return y, d, _materialized(_vjps(d, xr, basis, None)).reshape(spec.shape)

        def value_derivative_and_second_derivative(x, *ctx):
            if ctx:
                ctx = _contexts(ctx)
            xr = recording(x)
            if _grad_enabled():
                y, d, d2 = derivatives(xr, ctx)
            else:
                with _enable_grad():
                    y, d, d2 = derivatives(xr, ctx)
            return back(y.detach()), back(d.detach()), back(d2)

        return Impl(
            value_derivative_and_second_derivative=value_derivative_and_second_derivative,
            second_derivative=lambda x, *ctx: value_derivative_and_second_derivative(x, *ctx)[2],
        )

    # -- first derivatives torch can differentiate again (SecondOrder pairs; hooks of base.py)
    # -------
    # torch.func transforms compose with each other and with an outer autograd.grad, so the outer
    # torch adapter's pullback, dual-number pushforward and vmap(jvp) all trace through them.
    # torch cannot nest forward-mode dual numbers with a forward-mode transform, so under an
    # outer dual-number pushforward a forward-mode inner differentiates in reverse mode instead.

    def differentiable_value_and_gradient(self, problem):
        b = _Boundary(problem)
        refuse_a_constant_output(problem, b.broken)
        fn = b.fn
        if b.writes:
            return _recorded_value_and_gradient(fn)
        forward = self.forward_only
        aux = native_aux(problem)

        def value_and_gradient(x, *ctx):
            def bound(z):
                return fn(z, *ctx)

            if (
                aux is not None
            ):  # f's aux leaves the transform as its own output (backends/torch/aux.py)
                transform = (
                    torch.func.jacfwd
                    if forward and fwAD.unpack_dual(x).tangent is None
                    else torch.func.grad
                )
                gradient, (value, tensors) = transform(aux.with_value(*ctx), has_aux=True)(x)
                aux.hand_over(x, tensors)
            elif forward and fwAD.unpack_dual(x).tangent is None:
                gradient, value = torch.func.jacfwd(_with_value(bound), has_aux=True)(x)
            else:
                gradient, value = torch.func.grad_and_value(bound)(x)
            return value, gradient

        return value_and_gradient

    def differentiable_value_and_derivative(self, problem):
        b = _Boundary(problem)
        refuse_a_constant_output(problem, b.broken)
        fn = b.fn
        if b.writes:
            return _recorded_value_and_derivative(fn, problem.spec.shape)
        forward = self.forward_only
        aux = native_aux(problem)

        def value_and_derivative(x, *ctx):
            def bound(z):
                return fn(z, *ctx)

            if (
                aux is not None
            ):  # f's aux leaves the transform as its own output (backends/torch/aux.py)
                if forward and fwAD.unpack_dual(x).tangent is None:
                    value, derivative, tensors = _jvp(
                        aux.with_value(*ctx), (x,), (torch.ones_like(x),), has_aux=True
                    )
                    tensors = tensors[1]
                else:
                    derivative, (value, tensors) = torch.func.jacrev(
                        aux.with_value(*ctx), has_aux=True
                    )(x)
                aux.hand_over(x, tensors)
                return value, derivative
            if forward and fwAD.unpack_dual(x).tangent is None:
                return _jvp(bound, (x,), (torch.ones_like(x),))
            derivative, value = torch.func.jacrev(_with_value(bound), has_aux=True)(x)
            return value, derivative

        return value_and_derivative


# Functions that write into a Cache or the two-argument y: torch.func's transforms refuse the
# writes, so the first derivative is a backward pass with create_graph=True, which records them
# and which an outer dual-number pushforward or backward pass differentiates again (whatever the
# inner's mode: forward-mode transforms cannot take these functions).


def _recording_leaf(x):
    """``x`` itself when the outer already records it, else a leaf that requires grad and keeps
    x's dual tangent (``clone`` carries it; ``detach`` would not)."""
    return x if x.requires_grad else x.clone().requires_grad_()


def _recorded_value_and_gradient(fn):
    def value_and_gradient(x, *ctx):
        with _enable_grad():
            z = _recording_leaf(x)
            y = fn(z, *ctx)
            (gradient,) = torch.autograd.grad(
                y, z, create_graph=True, allow_unused=True, materialize_grads=True
            )
        return y, gradient

    return value_and_gradient


def _recorded_value_and_derivative(fn, shape):
    def value_and_derivative(x, *ctx):
        with _enable_grad():
            z = _recording_leaf(x)
            y = fn(z, *ctx)
            flat = y.reshape(-1)
            # one backward pass per output: is_grads_batched would vmap over the writes
            rows = [
                torch.autograd.grad(
                    flat[i], z, create_graph=True, allow_unused=True, materialize_grads=True
                )[0]
                for i in range(flat.shape[0])
            ]
        return y, torch.stack(rows).reshape(shape) if rows else torch.zeros_like(y)

    return value_and_derivative
