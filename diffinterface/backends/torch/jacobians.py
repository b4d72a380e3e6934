"""Whole Jacobians and derivatives on torch: forward mode over the input basis (columns), or one backward
pass batched over the output basis (rows); :class:`TorchJacobians` chooses by the Jacobian's shape and the
selector's mode. A mixin of :class:`~diffinterface.backends.torch.adapter.TorchAdapter`, which also builds
each mode's missing primitive from these Jacobians."""

from __future__ import annotations

import torch

from ...core import Impl
from ...core.batching import record
from ...errors import DifferentiationError
from .autodiff import (
    _FUNCTIONAL_FORWARD_MAX_INPUT,
    _REVERSE_DERIVATIVE_MAX_OUTPUT,
    _dual_jvp,
    _forward_jacobian,
    _forward_jacobian_with_value,
    _traced,
    _vjp,
    _vjps,
    _vmapped_jvp,
)
from .aux import native_aux
from .batching import sweep_batch
from .boundary import _basis, _Boundary, _contexts, _torch_dtype


class TorchJacobians:
    """The Jacobian and derivative recipes of the torch adapter (a mixin)."""

    def _forward_jacobian_impl(self, problem, b, operator, raw=False):
        """``operator`` ("jacobian" or "gradient") by forward mode over the input basis."""
        as_tensor, back_value, fn = b.as_tensor, b.back_value, b.fn
        broken = b.broken
        spec = problem.spec
        basis = _basis(problem.x_shape, problem.x_dtype, as_tensor(problem.x).device)
        chunk, chosen = sweep_batch(self, b, problem, problem.x_size)
        # with has_aux, aux leaves vmap(jvp) as its own output (aux.py); the other recipes'
        # evaluations show x
        columns = _vmapped_jvp(fn, len(problem.ctx), b.broken, chunk, native_aux(problem))
        jac_shape = spec.shape + problem.x_shape
        scalar_out = spec.shape == ()
        reshape = (basis.shape[0],) != problem.x_shape

        if b.writes:

            def run(x, ctx):
                if ctx:
                    ctx = _contexts(ctx)
                return _forward_jacobian_with_value(fn, as_tensor(x), ctx, broken)

        else:

            def run(x, ctx):
                if ctx:
                    ctx = _contexts(ctx)
                value, parts = columns(x, as_tensor(x), basis, *ctx)  # parts: (n, *y.shape)
                if not scalar_out:
                    return value, parts.movedim(0, -1).reshape(jac_shape)
                return value, (parts.reshape(jac_shape) if reshape else parts)

        if raw:
            return run

        # torch.autograd.functional.jacobian sweeps all columns at once: not with a bounded batch
        if (problem.x_size > _FUNCTIONAL_FORWARD_MAX_INPUT or chunk is not None) and not b.writes:

            def derivative(x, *ctx):
                return back_value(run(x, ctx)[1])

        else:
            functional = True

            def derivative(x, *ctx):
                nonlocal functional
                if ctx:
                    ctx = _contexts(ctx)
                if functional:
                    try:
                        return back_value(_forward_jacobian(fn, as_tensor(x), ctx, broken))
                    except DifferentiationError:
                        raise
                    except RuntimeError:
                        if b.writes:  # run's dual numbers would fail alike
                            raise
                        # torch's batched dual numbers fail where vmap(jvp) works ((x @ A) @ B at a
                        # vector x): this preparation uses vmap(jvp) from now on
                        functional = False
                return back_value(run(x, ctx)[1])

        def value_and_derivative(x, *ctx):
            value, jac = run(x, ctx)
            return back_value(value), back_value(jac)

        return record(
            Impl(**{operator: derivative, "value_and_" + operator: value_and_derivative}),
            problem.x_size if b.writes else chosen,
        )  # dual numbers: all columns at once

    def _use_columns(self, problem):
        if self.forward_only:
            return True
        if self.reverse_only:
            return False
        # Forward-mode AD costs several backward passes per operation here: use it only for tall
        # Jacobians.
        return problem.spec.size > 4 * problem.x_size

    def _reverse_jacobian_impl(self, problem, b, operator, raw=False):
        """``operator`` ("jacobian" or "derivative") by one backward pass batched over the output basis."""
        to_torch, recording, back = b.to_torch, b.recording, b.back
        back_value, fn, broken = b.back_value, b.fn, b.broken
        spec = problem.spec
        if spec.shape == ():
            seeds = None
            reshape = problem.x_shape != ()
        else:
            seeds = _basis(spec.shape, spec.dtype, to_torch(problem.x).device)
            reshape = (spec.size, *problem.x_shape) != spec.shape + problem.x_shape
        jac_shape = spec.shape + problem.x_shape
        chunk, chosen = (None, 1) if seeds is None else sweep_batch(self, b, problem, spec.size)

        def rows(x, ctx):
            if ctx:
                ctx = _contexts(ctx)
            xr = recording(x)
            y = _traced(fn, xr, ctx)
            jac = (
                _vjp(y, xr, None, broken)
                if seeds is None
                else _vjps(y, xr, seeds, broken, chunk=chunk)
            )
            return y, (jac.reshape(jac_shape) if reshape else jac)

        if raw:
            return rows

        def value_and_derivative(x, *ctx):
            value, jac = rows(x, ctx)
            return back_value(value), back(jac)

        return record(
            Impl(
                **{
                    operator: lambda x, *ctx: back(rows(x, ctx)[1]),
                    "value_and_" + operator: value_and_derivative,
                }
            ),
            chosen,
        )

    def prepare_jacobian(self, problem):
        b = _Boundary(problem)
        if self._use_columns(problem):
            return self._forward_jacobian_impl(problem, b, "jacobian")
        return self._reverse_jacobian_impl(problem, b, "jacobian")

    def prepare_derivative(self, problem):
        b = _Boundary(problem)
        if self.reverse_only or (
            not self.forward_only and problem.spec.size <= _REVERSE_DERIVATIVE_MAX_OUTPUT
        ):
            return self._reverse_jacobian_impl(problem, b, "derivative")
        as_tensor, back_value, fn = b.as_tensor, b.back_value, b.fn
        broken = b.broken
        one = torch.ones(
            (), dtype=_torch_dtype(problem.x_dtype), device=as_tensor(problem.x).device
        )

        def value_and_derivative(x, *ctx):
            if ctx:
                ctx = _contexts(ctx)
            value, tangent = _dual_jvp(fn, as_tensor(x), one, ctx, broken)
            return back_value(value), back_value(tangent)

        return Impl.from_valued("derivative", value_and_derivative)
