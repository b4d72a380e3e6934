"""Regression probes: operators as building blocks inside TensorFlow's own tapes and compilers.

A backend whose derivatives run in TensorFlow (``capabilities.framework`` is
"tensorflow" and it takes TensorFlow tensors) returns results that an outer
``tf.GradientTape`` differentiates to the variables f reads, as nested tapes
would: a gradient penalty (WGAN-GP), a MAML inner step and every operator of
f closing over a ``tf.Variable``. Inside ``tf.function`` and under
``tf.vectorized_map`` (per-sample gradients), unprepared and prepared at one
sample, every operator gives the tapes' own answer or an error naming the
transform, never a raw TensorFlow error. Native references: nested
``tf.GradientTape``\\ s and ``ForwardAccumulator``.

    >>> [probe.name for probe in probes()]
    ['tensorflow_outer_tape', 'tensorflow_function_and_vectorized_map']
"""

from __future__ import annotations

import numpy as np

from ...core import get_adapter
from ...errors import DifferentiationError, UnsupportedError
from ... import operators as ops
from ..probes import BadInput

_RNG = np.random.default_rng(5447)
_X = _RNG.normal(size=(4, 3))
_W1 = _RNG.normal(size=(3, 5))
_W2 = _RNG.normal(size=5)


def _tensorflow(backend):
    """tensorflow, where the backend differentiates in TensorFlow on its tensors; else None."""
    capabilities = get_adapter(backend).capabilities
    if capabilities.framework != "tensorflow" or "tensorflow" not in capabilities.families:
        return None
    import tensorflow as tf

    return tf


def _gradient(tf, f, x):
    """The native gradient of a scalar ``f`` at ``x``: one tape, kept in any outer tape."""
    with tf.GradientTape() as tape:
        tape.watch(x)
        value = f(x)
    return tape.gradient(value, x)


def _jacobian(tf, f, x):
    """The native Jacobian of ``f`` at ``x``: one tape's ``jacobian``."""
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.jacobian(y, x)


def _compare_weights(problems, tf, what, call, native, weights):
    """``call()`` and ``native()`` (scalars): the same gradients in ``weights`` from an outer tape."""
    grads = []
    for fn in (call, native):
        with tf.GradientTape() as tape:
            try:
                value = fn()
            except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
                problems.raised(what, error, "a result an outer tf.GradientTape differentiates")
                return
        grads.append(tape.gradient(value, weights))
    for i, (g, e) in enumerate(zip(*grads)):
        if g is None:
            problems.found.append(
                f"{what}: the outer tape found no gradient for weight {i}: "
                "the result left the tape's graph"
            )
            continue
        problems.check_result(
            f"{what}: gradient of the result with respect to weight {i}",
            g,
            e.numpy(),
            like=e,
            rtol=1e-9,
            atol=1e-12,
        )


def _outer_tape(backend, problems, zero):
    tf = _tensorflow(backend)
    if tf is None or zero:
        return
    w1, w2 = tf.Variable(_W1), tf.Variable(_W2)
    x, t = tf.constant(_X), tf.constant(_W1[:, 0])

    def critic(z):
        return tf.reduce_sum(tf.linalg.matvec(tf.tanh(z @ w1), w2))

    def penalty(g):
        return tf.reduce_mean((tf.norm(g, axis=1) - 1) ** 2)

    prep = ops.prepare_gradient(critic, backend, x)
    for what, call in (
        ("unprepared", lambda: penalty(ops.gradient(critic, backend, x))),
        ("prepared", lambda: penalty(ops.gradient(critic, backend, x, prep=prep))),
        ("value_and_gradient", lambda: penalty(ops.value_and_gradient(critic, backend, x)[1])),
    ):
        _compare_weights(
            problems,
            tf,
            f"gradient penalty through {what} gradient",
            call,
            lambda: penalty(_gradient(tf, critic, x)),
            [w1, w2],
        )

    data, target = x, tf.constant(_X @ _W1[:, 0])
    w = tf.Variable(_W1[:, 1])

    def loss(v):
        return tf.reduce_mean((tf.sin(tf.linalg.matvec(data, v)) - target) ** 2)

    _compare_weights(
        problems,
        tf,
        "MAML meta-loss through an inner gradient step",
        lambda: loss(w - 0.1 * ops.gradient(loss, backend, tf.identity(w))),
        lambda: loss(w - 0.1 * _gradient(tf, loss, tf.identity(w))),
        [w],
    )

    w3 = tf.Variable(_W1[:, :3])
    z = tf.constant(_X[0])

    def scalar(v):
        return tf.reduce_sum(tf.tanh(tf.linalg.matvec(w3, v)) ** 3)

    def vector(v):
        return tf.tanh(tf.linalg.matvec(w3, v)) * v

    def native_pushforward(v):
        with tf.autodiff.ForwardAccumulator(v, t) as accumulator:
            y = vector(v)
        return accumulator.jvp(y)

    def native_hvp(v):
        with tf.autodiff.ForwardAccumulator(v, t) as accumulator:
            g = _gradient(tf, scalar, v)
        return accumulator.jvp(g)

    def native_pullback(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = vector(v)
        return tape.gradient(y, v, output_gradients=t)

    cases = {
        "gradient": (lambda: ops.gradient(scalar, backend, z), lambda: _gradient(tf, scalar, z)),
        "jacobian": (lambda: ops.jacobian(vector, backend, z), lambda: _jacobian(tf, vector, z)),
        "pushforward": (
            lambda: ops.pushforward(vector, backend, z, (t,))[0],
            lambda: native_pushforward(z),
        ),
        "pullback": (lambda: ops.pullback(vector, backend, z, (t,))[0], lambda: native_pullback(z)),
        "hvp": (lambda: ops.hvp(scalar, backend, z, (t,))[0], lambda: native_hvp(z)),
        "hessian (a PINN's Laplacian)": (
            lambda: ops.hessian(scalar, backend, z),
            lambda: _jacobian(tf, lambda v: _gradient(tf, scalar, v), z),
        ),
    }
    for name, (call, native) in cases.items():
        _compare_weights(
            problems,
            tf,
            f"{name} of f closing over a tf.Variable",
            lambda call=call: tf.reduce_sum(call() ** 2),
            lambda native=native: tf.reduce_sum(native() ** 2),
            [w3],
        )


def _function_and_vectorized_map(backend, problems, zero):
    tf = _tensorflow(backend)
    if tf is None or zero:
        return
    batch, t = tf.constant(_X), tf.constant(_W1[:, 0])

    def scalar(z):
        return tf.reduce_sum(tf.sin(z) ** 2) * tf.reduce_sum(z * t)

    def vector(z):
        return tf.sin(z) * tf.reduce_sum(z)

    prep = ops.prepare_gradient(scalar, backend, batch[0])
    cases = {
        "gradient": (
            lambda z: ops.gradient(scalar, backend, z),
            lambda z: _gradient(tf, scalar, z),
        ),
        "gradient prepared at one sample": (
            lambda z: ops.gradient(scalar, backend, z, prep=prep),
            lambda z: _gradient(tf, scalar, z),
        ),
        "jacobian": (
            lambda z: ops.jacobian(vector, backend, z),
            lambda z: _jacobian(tf, vector, z),
        ),
        "hessian": (
            lambda z: ops.hessian(scalar, backend, z),
            lambda z: _jacobian(tf, lambda v: _gradient(tf, scalar, v), z),
        ),
    }
    transforms = {
        "tf.function": lambda g: lambda b: tf.function(g)(b[0]),
        "tf.vectorized_map (per-sample)": lambda g: lambda b: tf.vectorized_map(g, b),
    }
    for transform, wrap in transforms.items():
        for name, (call, native) in cases.items():
            what = f"{name} inside {transform}"
            got = problems.answer_or_named_refusal(
                what,
                lambda: wrap(call)(batch),
                (UnsupportedError, DifferentiationError),
                (transform.split(" ")[0],),
            )
            if got is None:
                continue
            expected = wrap(native)(batch)
            problems.check_result(what, got, expected.numpy(), like=expected, rtol=1e-9, atol=1e-12)


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "tensorflow_outer_tape",
            "a gradient penalty, a MAML step and every operator under an outer tf.GradientTape: "
            "the nested tapes' answer",
            _outer_tape,
        ),
        BadInput(
            "tensorflow_function_and_vectorized_map",
            "operators inside tf.function and tf.vectorized_map, prepared at one sample too: "
            "the tapes' answer or an error naming the transform",
            _function_and_vectorized_map,
        ),
    ]
