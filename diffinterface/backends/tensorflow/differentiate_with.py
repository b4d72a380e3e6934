"""TensorFlow's DifferentiateWith rules: a bridged function inside TensorFlow is ``tf.custom_gradient`` functions
whose work is the inner backend's, run through ``tf.py_function`` (:class:`TensorFlowBridge`, registered with
``AutoTensorFlow``).

``tf.py_function`` runs its Python body on concrete tensors, in eager code and
inside ``tf.function`` graphs alike, so the inner backend (torch, JAX, finite
differences...) gets values in both. Four functions, each with a custom
gradient that TensorFlow can differentiate again:

==============  ===========================  ==================================================
function        computes                     gradient (along each input)
==============  ===========================  ==================================================
``_value``      ``f(x)``                     ``_pullback`` (x)
``_pullback``   ``c @ J``                    ``_hvp`` (x), ``_pushforward`` (c)
``_pushforward````J t``                      ``_hvp`` (x; scalar f), ``_pullback`` (t)
``_hvp``        ``sum_k c_k H_k v``          ``_hvp`` (v); none along x and c (third order)
==============  ===========================  ==================================================

``tf.GradientTape`` uses the gradients directly; ``tf.autodiff.ForwardAccumulator``
computes a jvp by transposing them, which is why each is itself differentiable.

As the inner, an AutoTensorFlow backend computes on tensors
(``inner_family = "tensorflow"``): numpy and torch arrays cross through numpy
buffers or DLPack.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from ...core.bridge import FrameworkBridge, converted_contexts, to_family
from ...core.registry import framework_bridge
from ...families import family_of
from ...errors import UnsupportedError
from .boundary import (
    CHECKING_WITHOUT_VALUES,
    FORWARD_MODE,
    ForwardThroughBridgeError,
    ValuesNeededError,
)
from .numpy_rules import promoting


class _Call:
    """One call of the bridged function: its rules, contexts in the inner family, and its shapes.

    Contexts holding TensorFlow tensors enter ``tf.py_function`` as inputs and
    reach the inner family there: inside ``tf.function`` they are symbolic,
    with values only inside the function's body. The others are converted once.
    """

    def __init__(self, bridge, rules, contexts):
        self.rules, self.family = rules, bridge.family
        self.dynamic = tuple(
            i for i, c in enumerate(contexts) if family_of(c.value) == "tensorflow"
        )
        self.tensors = [contexts[i].value for i in self.dynamic]
        self.kinds = tuple(type(c) for c in contexts)
        converted = iter(
            converted_contexts(
                tuple(c for i, c in enumerate(contexts) if i not in self.dynamic), bridge.family
            )
        )
        # None where a tensor's value comes in through tf.py_function (see run)
        self.contexts = [
            None if i in self.dynamic else next(converted) for i in range(len(contexts))
        ]
        self.x_shape, self.x_dtype = tuple(rules.x_shape), tf.as_dtype(str(rules.x_dtype))
        self.y_shape, self.y_dtype = tuple(rules.spec[0]), tf.as_dtype(str(rules.spec[1]))

    def inner(self, a):
        return to_family(a, self.family)

    def run(self, compute, args, like_x):
        """``compute(*inner arrays, contexts)`` on concrete values (``tf.py_function``), shaped like x or like y."""
        shape, dtype = (self.x_shape, self.x_dtype) if like_x else (self.y_shape, self.y_dtype)
        n = len(args)

        def body(*tensors):
            contexts = list(self.contexts)
            for i, value in zip(self.dynamic, tensors[n:]):
                contexts[i] = self.kinds[i](self.inner(value))
            result = compute(*[self.inner(t) for t in tensors[:n]], tuple(contexts))
            return np.asarray(to_family(result, "numpy"), dtype=dtype.as_numpy_dtype)

        # stop_gradient: the function's derivatives are the custom gradients only; without it a
        # forward accumulator would take py_function's own (zero) derivative and ignore them
        out = tf.stop_gradient(tf.py_function(body, [*args, *self.tensors], Tout=dtype))
        out.set_shape(shape)
        return out


def _value(x, call):
    @tf.custom_gradient
    def value(x):
        y = call.run(lambda a, ctx: call.rules.value(a, ctx), [x], like_x=False)
        return y, lambda c: _pullback(x, c, call)

    return value(x)


def _pullback(x, c, call):
    @tf.custom_gradient
    def pullback(x, c):
        out = call.run(lambda a, s, ctx: call.rules.pullback(a, (s,), ctx)[0], [x, c], like_x=True)
        return out, lambda g: (_hvp(x, c, g, call), _pushforward(x, g, call))

    return pullback(x, c)


def _pushforward(x, t, call):
    @tf.custom_gradient
    def pushforward(x, t):
        out = call.run(
            lambda a, s, ctx: call.rules.pushforward(a, (s,), ctx)[0], [x, t], like_x=False
        )

        def gradient(g):
            if not call.rules.scalar:
                raise UnsupportedError(
                    "DifferentiateWith: differentiating a pushforward of a non-scalar f with respect to x needs "
                    "second derivatives of every output; use reverse mode inside (tf.GradientTape)"
                )
            return _hvp(x, g, t, call), _pullback(x, g, call)

        return out, gradient

    return pushforward(x, t)


def _hvp(x, c, v, call):
    @tf.custom_gradient
    def hvp(x, c, v):
        out = call.run(
            lambda a, s, w, ctx: call.rules.hvp(a, s, (w,), ctx)[0], [x, c, v], like_x=True
        )
        # linear and symmetric in v; along x and c it would need third derivatives, which the bridge
        # does not provide: TensorFlow sees no gradient there (None: unconnected, never a zero)
        return out, lambda g: (None, None, _hvp(x, c, g, call))

    return hvp(x, c, v)


def call(bridge, x, contexts):
    """``bridge(x, *contexts)`` for a TensorFlow tensor ``x`` (of another framework than the inner's)."""
    if FORWARD_MODE.get():
        raise ForwardThroughBridgeError(
            "DifferentiateWith inside AutoTensorFlow's forward mode: TensorFlow's ForwardAccumulator does not "
            "differentiate through the bridge's custom gradients (it would return zeros); AutoTensorFlow's "
            "operators go reverse there by themselves. Differentiate f with tf.GradientTape instead of "
            "tf.autodiff.ForwardAccumulator"
        )
    if isinstance(x, tf.Variable):
        x = tf.convert_to_tensor(x)
    if (
        CHECKING_WITHOUT_VALUES.get()
        and tf.is_symbolic_tensor(x)
        and not bridge.has_rules(x, contexts)
    ):
        raise ValuesNeededError(
            "DifferentiateWith: the rules are prepared at the values of the eager call"
        )
    rules = bridge.rules(x, contexts)
    return _value(x, _Call(bridge, rules, contexts))


class TensorFlowBridge(FrameworkBridge):
    """TensorFlow as either side of a bridge: its tensors call :func:`call`; an AutoTensorFlow inner computes
    on tensors."""

    inner_family = "tensorflow"

    def call(self, bridge, x, contexts):
        return call(bridge, x, contexts)

    def plain(self, a):
        return tf.convert_to_tensor(a) if isinstance(a, tf.Variable) else a

    def to_numpy(self, a):
        return a.numpy()  # a symbolic tensor has none: the caller prepares at zeros of its shape

    def receive(self, a, source):
        # through the source framework's own conversion: a torch tensor under an active torch.func
        # transform gives its values only there
        leaving = framework_bridge(source)
        return tf.convert_to_tensor(leaving.to_numpy(a) if leaving is not None else np.asarray(a))

    def wide(self, dtype):
        """f runs under the rules diffinterface's TensorFlow backend gives it (dtype promotion, the array
        API's ``@``), as inside that backend's own operators."""
        return promoting()

    def output_spec(self, evaluate, x, contexts):
        """f's output learned by tracing it (``tf.function``), without values: tensors only carry shapes there."""
        try:
            traced = tf.function(lambda z: evaluate(z, contexts), autograph=False)
            out = traced.get_concrete_function(tf.TensorSpec(x.shape, x.dtype)).structured_outputs
            return tuple(out.shape), out.dtype.name
        except Exception:  # noqa: BLE001 - f needs real numbers: the caller evaluates it
            return None


BRIDGE = TensorFlowBridge()
