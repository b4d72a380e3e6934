"""Zero backends: derivatives of the right shape, all zeros, computed by no framework.

They exercise the core's fallbacks (forward-only and reverse-only) and measure
the interface's own cost per call: a prepared zero call does nothing but the
interface's bookkeeping and the allocation of the result.
"""

from __future__ import annotations

import numpy as np

from ...core import Adapter, Impl, Spec


class _ZeroAdapter(Adapter):
    inplace = True

    def output_spec(self, problem):

        if problem.y is not None:
            return Spec.of(problem.y)
        return Spec.of(problem.f(problem.x, *problem.ctx))

    @staticmethod
    def _value(problem, x, ctx):
        if problem.y is None:
            return problem.f(x, *ctx)
        buffer = np.empty_like(problem.y)
        problem.f(buffer, x, *ctx)
        return buffer


class ZeroForwardAdapter(_ZeroAdapter):
    mode = "forward"

    def prepare_pushforward(self, problem):
        spec = problem.spec
        zeros = np.zeros(spec.shape, dtype=spec.dtype)
        value = self._value

        def value_and_pushforward(x, tangents, *ctx):
            return value(problem, x, ctx), tuple(zeros.copy() for _ in tangents)

        return Impl(
            value_and_pushforward=value_and_pushforward,
            pushforward=lambda x, tangents, *ctx: tuple(zeros.copy() for _ in tangents),
        )


class ZeroReverseAdapter(_ZeroAdapter):
    mode = "reverse"

    def prepare_pullback(self, problem):
        zeros = np.zeros(problem.x_shape, dtype=problem.x_dtype)
        value = self._value

        def value_and_pullback(x, cotangents, *ctx):
            return value(problem, x, ctx), tuple(zeros.copy() for _ in cotangents)

        return Impl(
            value_and_pullback=value_and_pullback,
            pullback=lambda x, cotangents, *ctx: tuple(zeros.copy() for _ in cotangents),
        )
