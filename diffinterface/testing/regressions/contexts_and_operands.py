"""Regression probes: number Constants, Constants across a bridge, and ``@`` with a 1-d operand.

- A Python int in a ``Constant`` is a 0-d int64 kind, as a float is a
  float64 one (a NumPy scalar and a 0-d array of the dtype alike): a
  preparation with ``Constant(2)`` serves ``Constant(3)`` and
  ``Constant(np.int64(3))``, and refuses ``Constant(2.5)`` naming both dtypes;
  a bool is a flag of its own kind. (Preparing with an int crashed.)
- ``DifferentiateWith(f, backend)`` called inside another framework's
  derivative (torch's ``backward``, a ``tf.GradientTape``, ``jax.grad``) with a
  float or a numpy ``Constant``: the inner's operators are prepared with the
  contexts as every call hands them over (they were prepared with the
  numpy values and called with the inner family's, and refused the call).
- ``x @ A``, ``B @ x`` and ``x @ x`` with a 1-d ``x``, as the array API
  specifies: the same derivatives unprepared, prepared and through
  ``jacobian_operator``, or, for a framework that declares its ``@`` takes
  matrices only, the ``ValueError`` naming that limit everywhere (prepared
  calls raised the framework's own error).

    >>> [probe.name for probe in probes()]
    ['int_constant', 'differentiate_with_number_constants', 'matmul_vector_operand']
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ...contexts import Constant
from ...core.boundary import declared_limits
from ...errors import PreparationMismatchError
from ...families import array_namespace
from ...operators import (
    gradient,
    jacobian,
    prepare_gradient,
    prepare_jacobian,
    prepare_pullback,
    prepare_pushforward,
    pullback,
    pushforward,
)
from ...wrappers import DifferentiateWith
from ..probes import BadInput

X = np.array([0.5, -1.0, 2.0])
A = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]])


def _scaled_square(x, c):
    xp = array_namespace(x)
    return xp.sum(c * x**2)


def _int_constant(backend, problems, zero):
    try:
        prep = prepare_gradient(_scaled_square, backend, X, Constant(2))
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised("prepare_gradient with Constant(2)", raised, "a preparation")
        return
    for c in (3, np.int64(3), np.array(3)):
        problems.expect_result(
            f"gradient prepared with Constant(2), called with Constant({c!r})",
            lambda c=c: gradient(_scaled_square, backend, X, Constant(c), prep=prep),
            6 * X,
            like=X,
            zero=zero,
        )
    flagged = prepare_gradient(_scaled_square, backend, X, Constant(True))
    problems.expect_results(
        {
            f"gradient prepared with Constant(True), called with Constant({flag})": (
                lambda flag=flag: gradient(
                    _scaled_square, backend, X, Constant(flag), prep=flagged
                ),
                2 * X * flag,
            )
            for flag in (True, False)
        },
        like=X,
        zero=zero,
    )
    refused = (
        (prep, 2, 2.5, r"contexts: MISMATCH.*int64.*float64"),
        (prepare_gradient(_scaled_square, backend, X, Constant(2.0)), 2.0, 3, r"float64.*int64"),
        (flagged, True, 1, r"contexts: MISMATCH.*bool.*int64"),
    )
    for prepared, at, given, pattern in refused:
        problems.expect_error(
            f"gradient prepared with Constant({at!r}), called with Constant({given!r})",
            lambda prepared=prepared, given=given: gradient(
                _scaled_square, backend, X, Constant(given), prep=prepared
            ),
            PreparationMismatchError,
            pattern,
        )


def _read_constant(x, c):
    xp = array_namespace(x)
    return xp.sum(xp.asarray(c, dtype=x.dtype) * x**2)


def _outer_gradients():
    """(name, grad) of every installed framework's own gradient of a scalar function at a numpy x."""
    found = []
    if importlib.util.find_spec("torch") is not None:

        def torch_backward(g, x):
            import torch

            t = torch.tensor(x, requires_grad=True)
            g(t).backward()
            return t.grad.numpy()

        found.append(("torch backward", torch_backward))
    if importlib.util.find_spec("tensorflow") is not None:

        def gradient_tape(g, x):
            import tensorflow as tf

            v = tf.Variable(x)
            with tf.GradientTape() as tape:
                y = g(v)
            return tape.gradient(y, v).numpy()

        found.append(("tf.GradientTape", gradient_tape))
    if importlib.util.find_spec("jax") is not None:

        def jax_grad(g, x):
            import jax

            with jax.enable_x64(True):  # float64 without touching the global setting
                return np.asarray(jax.grad(g)(jax.numpy.asarray(x)))

        found.append(("jax.grad", jax_grad))
    return found


def _differentiate_with_number_constants(backend, problems, zero):
    for c in (2.0, np.float64(2.0), np.full(3, 2.0)):
        bridged = DifferentiateWith(_read_constant, backend)
        for name, outer in _outer_gradients():
            problems.expect_result(
                f"{name} of DifferentiateWith(f, backend)(x, Constant({c!r}))",
                lambda outer=outer, c=c: outer(lambda x: bridged(x, Constant(c)), X),
                4 * X,
                like=X,
                zero=zero,
            )


def _right_product(x, a):
    xp = array_namespace(x)
    return x @ xp.asarray(a, dtype=x.dtype)  # Python's @ on x itself


def _left_product(x, b):
    xp = array_namespace(x)
    return xp.asarray(b, dtype=x.dtype) @ x


def _declared_at_matmul(raised):
    """True when ``raised`` is the ValueError naming a framework's declared limit of ``@``."""
    return isinstance(raised, ValueError) and any(
        f"does not support {what}" in str(raised) and around in str(raised)
        for _, _, what, around in declared_limits()
        if what.startswith("the @ operator")
    )


def _result_or_declared(problems, what, call, expected, zero):
    try:
        got = call()
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        if not _declared_at_matmul(raised):
            problems.raised(what, raised, "a result or the ValueError naming a declared limit of @")
        return
    problems.check_result(what, got, expected, like=X, zero=zero)


def _matmul_vector_operand(backend, problems, zero):
    from ...scipy import jacobian_operator

    t, u = np.array([1.0, -2.0, 0.5]), np.array([0.25, 1.0])
    for name, f, m in (("x @ A", _right_product, A), ("A.T @ x", _left_product, A.T.copy())):
        ctx = Constant(m)
        cases = {
            "jacobian": (lambda f=f: jacobian(f, backend, X, ctx), A.T),
            "prepared jacobian": (
                lambda f=f: jacobian(f, backend, X, ctx, prep=prepare_jacobian(f, backend, X, ctx)),
                A.T,
            ),
            "prepared pushforward": (
                lambda f=f: pushforward(
                    f, backend, X, (t,), ctx, prep=prepare_pushforward(f, backend, X, (t,), ctx)
                )[0],
                t @ A,
            ),
            "prepared pullback": (
                lambda f=f: pullback(
                    f, backend, X, (u,), ctx, prep=prepare_pullback(f, backend, X, (u,), ctx)
                )[0],
                A @ u,
            ),
            "jacobian_operator's J.T @ u": (
                lambda f=f, m=m: jacobian_operator(lambda x: f(x, m), backend, X).T @ u,
                A @ u,
            ),
        }
        for operator, (call, expected) in cases.items():
            _result_or_declared(problems, f"{operator} of {name} at a 1-d x", call, expected, zero)
    _result_or_declared(
        problems,
        "gradient of x @ x at a 1-d x",
        lambda: gradient(lambda x: x @ x, backend, X),
        2 * X,
        zero,
    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "int_constant",
            "Constant(2): prepared, called with ints of one kind, refusing a float or an int for a bool",
            _int_constant,
        ),
        BadInput(
            "differentiate_with_number_constants",
            "DifferentiateWith(f, backend) with a float or numpy Constant inside torch, TensorFlow "
            "and JAX gradients",
            _differentiate_with_number_constants,
        ),
        BadInput(
            "matmul_vector_operand",
            "x @ A, A.T @ x and x @ x at a 1-d x: prepared and unprepared derivatives, J.T of "
            "jacobian_operator",
            _matmul_vector_operand,
        ),
    ]
