"""Regression probes: operators as building blocks inside HIPS autograd's own ``grad``.

A backend whose derivatives run in autograd (``capabilities.framework`` is
"autograd") returns results that an outer ``autograd.grad`` differentiates, as
nested ``grad`` would: a gradient penalty in the weights f closes over, a MAML
inner step, and every operator of f closing over the outer argument.
Native references: nested ``autograd.grad``, ``jacobian`` and ``hessian``.

    >>> [probe.name for probe in probes()]
    ['autograd_outer_grad']
"""

from __future__ import annotations

import numpy as np

from ...core import get_adapter
from ... import operators as ops
from ..probes import BadInput

_RNG = np.random.default_rng(4749)
_X = _RNG.normal(size=(4, 3))
_W = _RNG.normal(size=(3, 3))
_T = _RNG.normal(size=3)


def _autograd(backend):
    """autograd, where the backend differentiates in autograd; else None."""
    if get_adapter(backend).capabilities.framework != "autograd":
        return None
    import autograd

    return autograd


def _outer_grad(backend, problems, zero):
    autograd = _autograd(backend)
    if autograd is None or zero:
        return
    anp = autograd.numpy
    x, t = _X[0], _T

    def scalar_of(w):
        return lambda z: anp.sum(anp.tanh(w @ z) ** 3)

    def vector_of(w):
        return lambda z: anp.tanh(w @ z) * z

    def native_pullback(w, z):
        return autograd.grad(lambda v: anp.sum(vector_of(w)(v) * t))(z)

    def native_pushforward(w, z):
        return autograd.jacobian(vector_of(w))(z) @ t

    cases = {
        "gradient": (
            lambda w: ops.gradient(scalar_of(w), backend, x),
            lambda w: autograd.grad(scalar_of(w))(x),
        ),
        "value_and_gradient": (
            lambda w: ops.value_and_gradient(scalar_of(w), backend, x)[1],
            lambda w: autograd.grad(scalar_of(w))(x),
        ),
        "jacobian": (
            lambda w: ops.jacobian(vector_of(w), backend, x),
            lambda w: autograd.jacobian(vector_of(w))(x),
        ),
        "pushforward": (
            lambda w: ops.pushforward(vector_of(w), backend, x, (t,))[0],
            lambda w: native_pushforward(w, x),
        ),
        "pullback": (
            lambda w: ops.pullback(vector_of(w), backend, x, (t,))[0],
            lambda w: native_pullback(w, x),
        ),
        "hvp": (
            lambda w: ops.hvp(scalar_of(w), backend, x, (t,))[0],
            lambda w: autograd.hessian(scalar_of(w))(x) @ t,
        ),
        "hessian (a PINN's Laplacian)": (
            lambda w: ops.hessian(scalar_of(w), backend, x),
            lambda w: autograd.hessian(scalar_of(w))(x),
        ),
    }
    data, target = _X, _X @ _W[:, 0]

    def loss(v):
        return anp.mean((anp.sin(data @ v) - target) ** 2)

    def penalty(g):
        return anp.mean((anp.sqrt(anp.sum(g * g, axis=1)) - 1) ** 2)

    def critic_of(w):
        return lambda z: anp.sum(anp.tanh(z @ w))

    weighted = {
        f"{name} of f closing over the outer argument": (
            lambda w, call=call: anp.sum(call(w) ** 2),
            lambda w, native=native: anp.sum(native(w) ** 2),
            _W,
        )
        for name, (call, native) in cases.items()
    }
    weighted["gradient penalty in the critic's weights"] = (
        lambda w: penalty(ops.gradient(critic_of(w), backend, _X)),
        lambda w: penalty(autograd.grad(critic_of(w))(_X)),
        _W,
    )
    weighted["MAML meta-loss through an inner gradient step"] = (
        lambda v: loss(v - 0.1 * ops.gradient(loss, backend, v)),
        lambda v: loss(v - 0.1 * autograd.grad(loss)(v)),
        _W[:, 1],
    )
    for what, (call, native, at) in weighted.items():
        try:
            got = autograd.grad(call)(at)
        except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
            problems.raised(what, error, "a result the outer autograd.grad differentiates")
            continue
        expected = autograd.grad(native)(at)
        problems.check_result(
            f"{what}: outer gradient", got, expected, like=expected, rtol=1e-9, atol=1e-12
        )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "autograd_outer_grad",
            "a gradient penalty, a MAML step and every operator under an outer autograd.grad: "
            "nested autograd's answer",
            _outer_grad,
        ),
    ]
