"""Regression probes: see :mod:`diffinterface.testing.regressions`.

Derivatives come back in x's dtype on every backend, whatever dtype f
computes in: a float32 x promoted inside f by a float64 array, or by a
float64 ``Constant``, gives float32 derivatives (the value ``f(x)`` is f's
own). In a tree of float64 and float32 leaves, each leaf's derivative has its
leaf's dtype and precision (finite differences step each leaf for its dtype).
A complex-valued f of a real x is refused with a TypeError naming f's
output dtype and the way around (return the real part), never differentiated
as complex on one backend and silently as real on another; a framework
without complex128 declares it (a family limit, :data:`COMPLEX128`) and refuses it by name.
"""

from __future__ import annotations

import re

import numpy as np

from ...contexts import Constant
from ...core import get_adapter
from ...core.boundary import declared_limits
from ...families import array_namespace
from ..families import to_numpy
from ...operators import (
    gradient,
    hessian,
    hvp,
    jacobian,
    pullback,
    pushforward,
    value_and_gradient,
    value_and_jacobian,
)
from ..probes import BadInput

X = np.array([0.5, 0.8, 1.2], dtype=np.float32)
W = np.array([1.0, 2.0, 3.0])  # float64
RTOL = 1e-2  # float32 x: finite differences and float32 passes agree to a few digits


def _squares_weighted_inside(x):
    xp = array_namespace(x)
    return x**2 * xp.asarray(W, dtype=xp.float64)  # promotes a float32 x where the framework does


def _squares_weighted_by(x, w):
    return x**2 * w


def _sum_of(f):
    def total(x, *ctx):
        xp = array_namespace(x)
        return xp.sum(f(x, *ctx))

    return total


def _every_operator(what, f, contexts):
    def run(backend, problems, zero):
        t = np.ones_like(X)
        total = _sum_of(f)
        checks = (
            ("gradient", lambda: gradient(total, backend, X, *contexts), 2 * X * W),
            ("jacobian", lambda: jacobian(f, backend, X, *contexts), np.diag(2 * X * W)),
            ("pushforward", lambda: pushforward(f, backend, X, (t,), *contexts)[0], 2 * X * W),
            ("hvp", lambda: hvp(total, backend, X, (t,), *contexts)[0], 2 * W),
            ("hessian", lambda: hessian(total, backend, X, *contexts), np.diag(2 * W)),
        )
        for name, call, expected in checks:
            problems.expect_result(
                f"{name} of {what} at a float32 x",
                call,
                expected,
                like=X,
                zero=zero,
                rtol=RTOL,
                atol=1e-4,
            )
        try:  # a cotangent of the dtype this backend says the output has
            value = value_and_jacobian(f, backend, X, *contexts)[0]
        except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
            problems.raised(f"value_and_jacobian of {what}", raised)
            return
        cotangent = np.ones_like(to_numpy(value))
        problems.expect_result(
            f"pullback of {what} at a float32 x (cotangent {cotangent.dtype})",
            lambda: pullback(f, backend, X, (cotangent,), *contexts)[0],
            2 * X * W,
            like=X,
            zero=zero,
            rtol=RTOL,
            atol=1e-4,
        )

    return run


#: the limit (``Family.limits``) a framework without complex128 declares
COMPLEX128 = "complex128 (a complex dtype of float64's precision)"


def _complex_valued(backend, problems, zero):
    def f(x):
        xp = array_namespace(x)
        return xp.sum(xp.astype(x, xp.complex128) ** 2)

    x = np.array([0.5, 0.8])
    frameworks = {part.capabilities.framework for part in get_adapter(backend).parts()}
    if any(limit[2] == COMPLEX128 for limit in declared_limits(frameworks)):
        error, pattern = ValueError, re.escape(f"does not support {COMPLEX128}")
    else:
        error = TypeError
        pattern = r"f: expected f to return real floating-point values .*complex128.*real part"
    problems.expect_error_in_both_modes(
        "a complex-valued f of a real x", f, backend, x, error, pattern, (x,)
    )


def _mixed_tree(p):
    xp = array_namespace(p["a"])
    return xp.sum(xp.sin(p["a"])) + xp.sum(p["b"] ** 3)


def _mixed_dtype_tree(backend, problems, zero):
    p = {"a": np.array([0.3, 0.7]), "b": np.array([0.5, 1.5], dtype=np.float32)}
    try:
        g = gradient(_mixed_tree, backend, p)
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised("gradient at a tree of float64 and float32 leaves", raised)
        return
    if not isinstance(g, dict) or set(g) != set(p):
        problems.found.append(
            f"gradient at a tree of float64 and float32 leaves: expected a dict like x; got {g!r}"
        )
        return
    # each leaf in its own dtype and to its own precision: the float64 leaf not to float32's
    problems.check_result(
        "gradient's float64 leaf, next to a float32 leaf",
        g["a"],
        np.cos(p["a"]),
        like=p["a"],
        zero=zero,
        rtol=1e-6,
        atol=1e-7,
    )
    problems.check_result(
        "gradient's float32 leaf, next to a float64 leaf",
        g["b"],
        3 * p["b"].astype(float) ** 2,
        like=p["b"],
        zero=zero,
        rtol=RTOL,
        atol=1e-3,
    )


def _twice(x):
    return x * 2.0


def _linear_at_a_zero_d_x(backend, problems, zero):
    # torch's vmap turns a 0-d float32 x times a Python float into float64 tangents (found by the
    # fuzz suite)
    x = np.asarray(0.58, dtype=np.float32)
    problems.expect_results(
        {
            "value_and_gradient of 2 * x at a 0-d float32 x": (
                lambda: value_and_gradient(_twice, backend, x)[1],
                np.float32(2.0),
            ),
            "pushforward of 2 * x at a 0-d float32 x, two tangents": (
                lambda: pushforward(_twice, backend, x, (np.float32(1.0), np.float32(0.5)))[1],
                np.float32(1.0),
            ),
        },
        like=x,
        zero=zero,
    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "result_dtypes_promoting_f",
            "a float32 x promoted to float64 inside f: float32 derivatives",
            _every_operator("f promoting x to float64", _squares_weighted_inside, ()),
        ),
        BadInput(
            "result_dtypes_float64_constant",
            "a float64 Constant promoting a float32 x: float32 derivatives",
            _every_operator("f times a float64 Constant", _squares_weighted_by, (Constant(W),)),
        ),
        BadInput(
            "result_dtypes_mixed_tree",
            "a tree of float64 and float32 leaves: each leaf's derivative in "
            "its dtype and to its precision",
            _mixed_dtype_tree,
        ),
        BadInput(
            "result_dtypes_linear_zero_d",
            "a linear f of a 0-d float32 x: float32 derivatives, batched tangents too",
            _linear_at_a_zero_d_x,
        ),
        BadInput(
            "result_dtypes_complex_f",
            "a complex-valued f of a real x: TypeError naming f's output dtype",
            _complex_valued,
        ),
    ]
