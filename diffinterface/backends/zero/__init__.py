"""Zero backends: derivatives of the right shape, all zeros, computed by no framework.

They exercise the core's fallbacks (forward-only and reverse-only) and measure
the interface's own cost per call: a prepared zero call does nothing but the
interface's bookkeeping and the allocation of the result.
"""

from __future__ import annotations

import numpy as np

from ...core import OPERATORS, Adapter, Capabilities, Impl, Spec
from ...families import owned


class _ZeroAdapter(Adapter):
    capabilities = Capabilities(inplace=True)

    def output_spec(self, problem):

        if problem.y is not None:
            return Spec.of(problem.y)
        return Spec.of(problem.f(owned(problem.x), *problem.ctx))

    @staticmethod
    def _value(problem, x, ctx):
        if problem.y is None:
            return problem.f(owned(x), *ctx)
        buffer = np.empty_like(problem.y)
        problem.f(buffer, owned(x), *ctx)
        return buffer

    def _zero_products(self, problem, operator, zeros):
        """The Impl of a primitive ``operator`` whose products are copies of ``zeros``, one per seed."""
        alone, combined = OPERATORS[operator].methods
        value = self._value

        def value_and_products(x, seeds, *ctx):
            return value(problem, x, ctx), tuple(zeros.copy() for _ in seeds)

        return Impl(
            **{
                combined: value_and_products,
                alone: lambda x, seeds, *ctx: tuple(zeros.copy() for _ in seeds),
            }
        )


class ZeroForwardAdapter(_ZeroAdapter):
    capabilities = _ZeroAdapter.capabilities.replace(mode="forward")

    def prepare_pushforward(self, problem):
        spec = problem.spec
        return self._zero_products(problem, "pushforward", np.zeros(spec.shape, dtype=spec.dtype))


class ZeroReverseAdapter(_ZeroAdapter):
    capabilities = _ZeroAdapter.capabilities.replace(mode="reverse")

    def prepare_pullback(self, problem):
        return self._zero_products(
            problem, "pullback", np.zeros(problem.x_shape, dtype=problem.x_dtype)
        )
