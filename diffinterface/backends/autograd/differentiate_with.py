"""autograd's DifferentiateWith rules: a bridged function inside HIPS autograd is a primitive with vjp
and jvp rules (:class:`AutogradBridge`, registered with ``AutoAutograd``).

``_value`` is a primitive whose vjp is the primitive ``_pullback`` and whose
jvp is ``_pushforward``; each of those is differentiable once more (the
inner's ``hvp``), so ``autograd.hessian`` works. Autograd unboxes the
primitives' arguments: the rules see numpy arrays.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
from autograd.extend import defjvp, defvjp, primitive
from autograd.tracer import getval

from ...core.bridge import FrameworkBridge, converted_contexts, third_order, to_family
from ...errors import UnsupportedError


class _Call:
    def __init__(self, bridge, rules, contexts):
        self.rules, self.family = rules, bridge.family
        self.contexts = converted_contexts(contexts, bridge.family)
        self.x_dtype = np.dtype(rules.x_dtype)
        self.y_shape, self.y_dtype = rules.spec[0], np.dtype(rules.spec[1])

    def inner(self, a, shape, dtype):
        # autograd hands over Python floats and numpy scalars for 0-d values: give them a shape
        return to_family(np.asarray(a, dtype=dtype).reshape(shape), self.family)

    def x(self, a):
        return self.inner(a, self.rules.x_shape, self.x_dtype)

    def y(self, a):
        return self.inner(a, self.y_shape, self.y_dtype)

    def back(self, a):
        return to_family(a, "numpy")


@primitive
def _value(x, call):
    return call.back(call.rules.value(call.x(x), call.contexts))


@primitive
def _pushforward(x, t, call):
    (out,) = call.rules.pushforward(call.x(x), (call.x(t),), call.contexts)
    return call.back(out)


@primitive
def _pullback(x, c, call):
    (out,) = call.rules.pullback(call.x(x), (call.y(c),), call.contexts)
    return call.back(out)


@primitive
def _hvp(x, c, v, call):
    (out,) = call.rules.hvp(call.x(x), call.y(c), (call.x(v),), call.contexts)
    return call.back(out)


def _pushforward_along_x(call, x, t, g):
    if not call.rules.scalar:
        raise UnsupportedError(
            "DifferentiateWith: differentiating a pushforward of a non-scalar f with respect to x needs "
            "second derivatives of every output; use reverse mode inside"
        )
    return _hvp(x, g, t, call)


def _pushforward_along_x_forward(call, x, t, x_dot):
    """d/dx (gradient . t) along ``x_dot`` for a scalar f: ``(H x_dot) . t``."""
    one = np.ones(call.y_shape, call.y_dtype)
    return anp.sum(_pushforward_along_x(call, x, x_dot, one) * t)


def _no_third(*_):
    raise third_order("differentiating a second derivative with respect to x or the cotangent")


def _derivatives(primitive, vjps, jvps):
    """Declare ``primitive``'s vjp and jvp along each argument, each written as ``rule(g, *args)``."""
    defvjp(
        primitive,
        *[(lambda rule: lambda ans, *args: lambda g: rule(g, *args))(rule) for rule in vjps],
    )
    defjvp(primitive, *[(lambda rule: lambda g, ans, *args: rule(g, *args))(rule) for rule in jvps])


_derivatives(
    _value,
    vjps=[lambda g, x, call: _pullback(x, g, call)],
    jvps=[lambda g, x, call: _pushforward(x, g, call)],
)
_derivatives(
    _pushforward,
    vjps=[
        lambda g, x, t, call: _pushforward_along_x(call, x, t, g),
        lambda g, x, t, call: _pullback(x, g, call),
    ],
    jvps=[
        lambda g, x, t, call: _pushforward_along_x_forward(call, x, t, g),
        lambda g, x, t, call: _pushforward(x, g, call),
    ],
)
_derivatives(  # c @ J is linear in c; along x it is sum_k c_k H_k (symmetric: vjp and jvp alike)
    _pullback,
    vjps=[
        lambda g, x, c, call: _hvp(x, c, g, call),
        lambda g, x, c, call: _pushforward(x, g, call),
    ],
    jvps=[lambda g, x, c, call: _hvp(x, c, g, call), lambda g, x, c, call: _pullback(x, g, call)],
)
_derivatives(  # linear and symmetric in v; x and c would need third derivatives
    _hvp,
    vjps=[_no_third, _no_third, lambda g, x, c, v, call: _hvp(x, c, g, call)],
    jvps=[_no_third, _no_third, lambda g, x, c, v, call: _hvp(x, c, g, call)],
)


def call(bridge, x, contexts):
    """``bridge(x, *contexts)`` for an autograd box ``x`` (another framework than the inner's)."""
    rules = bridge.rules(getval(x), contexts)
    return _value(x, _Call(bridge, rules, contexts))


class AutogradBridge(FrameworkBridge):
    """autograd as either side of a bridge: its boxes call :func:`call`; an AutoAutograd inner computes on
    numpy arrays (the host family, the default)."""

    #: autograd's boxes are values of a trace in progress: they reach the inner as they are
    keeps_contexts = True

    def call(self, bridge, x, contexts):
        return call(bridge, x, contexts)

    def plain(self, a):
        return getval(a)


BRIDGE = AutogradBridge()
