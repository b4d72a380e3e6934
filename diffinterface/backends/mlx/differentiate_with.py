"""MLX's DifferentiateWith rules: a bridged function inside MLX's transforms is an ``mx.custom_function``
whose vjp and jvp are the inner backend's pullback and pushforward (:class:`MLXBridge`).

The pullback is itself a custom function whose vjp along x is the inner's
hvp (of ``c . f``), so ``mx.grad`` of ``mx.grad`` works; a derivative of
that hvp, which would need third derivatives, is refused. The rules compute on the host: MLX hands them
concrete arrays under ``mx.grad``, ``mx.vjp`` and ``mx.jvp``, but not under
``mx.compile`` or ``mx.vmap``, which cannot call back to Python: there MLX
refuses with its ``[eval]`` error (run such an f with ``AutoMLX(compile=False)``).
"""

from __future__ import annotations

import mlx.core as mx
import numpy as np

from ...core.bridge import FrameworkBridge, converted_contexts, third_order, to_family
from .boundary import HostCall, to_mlx


class _Call:
    """One call's rules, contexts and conversions between MLX and the inner's family."""

    def __init__(self, bridge, rules, contexts):
        self.rules, self.family = rules, bridge.family
        self.contexts = converted_contexts(contexts, bridge.family)
        self.x_shape, self.x_dtype = rules.x_shape, np.dtype(rules.x_dtype)
        self.y_shape, self.y_dtype = rules.spec[0], np.dtype(rules.spec[1])

    def inner(self, a, shape, dtype):
        return to_family(np.asarray(a, dtype=dtype).reshape(shape), self.family)

    def x(self, a):
        return self.inner(a, self.x_shape, self.x_dtype)

    def y(self, a):
        return self.inner(a, self.y_shape, self.y_dtype)

    @staticmethod
    def back(a):
        return to_mlx(to_family(a, "numpy"))


def _function(call):
    rules, contexts = call.rules, call.contexts

    @mx.custom_function
    def hvp(x, c, v):
        (out,) = rules.hvp(call.x(x), call.y(c), (call.x(v),), contexts)
        return call.back(out)

    @hvp.vjp
    def hvp_vjp(primals, cotangent, output):
        raise third_order("differentiating a second derivative")

    @hvp.jvp
    def hvp_jvp(primals, tangents):
        raise third_order("differentiating a second derivative")

    @mx.custom_function
    def pullback(x, c):
        (out,) = rules.pullback(call.x(x), (call.y(c),), contexts)
        return call.back(out)

    @pullback.vjp
    def pullback_vjp(primals, cotangent, output):
        # c J is linear in c; along x it is sum_k c_k H_k, the hvp of the scalar c . f
        x, c = primals
        (along_c,) = rules.pushforward(call.x(x), (call.x(cotangent),), contexts)
        return hvp(x, c, cotangent), call.back(along_c)

    @mx.custom_function
    def value(x):
        return call.back(rules.value(call.x(x), contexts))

    # MLX hands a function of one argument its primal and tangent as arrays, not tuples
    @value.vjp
    def value_vjp(x, cotangent, output):
        return pullback(x, cotangent)

    @value.jvp
    def value_jvp(x, tangent):
        (out,) = rules.pushforward(call.x(x), (call.x(tangent),), contexts)
        return call.back(out)

    return value


def call(bridge, x, contexts):
    """``bridge(x, *contexts)`` for an MLX array ``x`` inside MLX's transforms (another framework than the inner's)."""
    try:
        values = np.array(x)
    except ValueError as error:  # x traced by mx.compile or mx.vmap: no values to hand over
        raise HostCall(
            "DifferentiateWith: the bridged function needs x's values, which mx.compile and "
            "mx.vmap do not have: run f with AutoMLX(compile=False)"
        ) from error
    rules = bridge.rules(values, contexts)
    return _function(_Call(bridge, rules, contexts))(x)


class MLXBridge(FrameworkBridge):
    """MLX as either side of a bridge: its arrays call :func:`call`; an AutoMLX inner computes on numpy
    arrays (the host family, the default), which its adapter converts."""

    def call(self, bridge, x, contexts):
        return call(bridge, x, contexts)

    def to_numpy(self, a):
        return np.array(a)

    def receive(self, a, source):
        return to_mlx(np.asarray(a))


BRIDGE = MLXBridge()
