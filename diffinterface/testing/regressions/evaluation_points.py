"""Regression probes: f is evaluated only at points the user gave, at any shape x has, 0-d included.

A ``DifferentiateWith`` inside the backend's derivative prepares its inner
operators at the input it really gets, never at an invented point (zeros,
where a function defined for positive inputs only raises): the probe's f
records every point it sees and refuses any non-positive one. Second order
at a 0-d x works through every pair with finite differences and through the
backend paired with itself. A preparation made at a point a thousand times
larger differentiates each call's x at that x's own scale (a finite-difference
step taken from the prepared x once overshot a small x: 16 % off, or NaN where
``x - h`` left f's domain).

    >>> [probe.name for probe in probes()]
    ['differentiate_with_at_given_points', 'second_order_at_a_zero_d_x', 'prepared_at_another_scale']
"""

from __future__ import annotations

import numpy as np

from ...families import array_namespace
from ...operators import (
    derivative,
    gradient,
    hessian,
    hvp,
    jacobian,
    prepare_derivative,
    prepare_gradient,
    prepare_hvp,
    prepare_jacobian,
    second_derivative,
)
from ...selectors import AutoFiniteDiff
from ...wrappers import DifferentiateWith, SecondOrder
from ..probes import BadInput
from ..tolerances import over_finite_differences

X = np.array([0.5, 2.0, 1.25])


def _log_of_positive(seen):
    """``sum(log(x))``, numpy only, defined for x > 0: it records each point and refuses any other
    (the real part of a complex step's point)."""

    def f(x):
        x = np.asarray(x)
        seen.append(np.real(x).copy())
        if np.any(np.real(x) <= 0):
            raise ValueError("f is defined for x > 0 only")
        return np.sum(np.log(x))

    return f


def _differentiate_with_at_given_points(backend, problems, zero):
    seen = []
    inner = DifferentiateWith(_log_of_positive(seen), AutoFiniteDiff())

    def outer(x):
        return 2.0 * inner(x)

    t = (np.array([1.0, -1.0, 0.5]),)
    of = "of 2 * DifferentiateWith(f, AutoFiniteDiff())(x), f defined for x > 0"
    problems.expect_results(
        {
            f"unprepared gradient {of}": (lambda: gradient(outer, backend, X), 2 / X),
            f"prepared gradient {of}": (
                lambda: gradient(outer, backend, X, prep=prepare_gradient(outer, backend, X)),
                2 / X,
            ),
            f"prepared hvp {of}": (
                lambda: hvp(outer, backend, X, t, prep=prepare_hvp(outer, backend, X, t))[0],
                -2 / X**2 * t[0],
            ),
        },
        like=X,
        zero=zero,
        rtol=1e-3,
        atol=1e-5,
    )
    invented = [p for p in seen if np.any(p <= 0)]
    if invented:
        problems.found.append(
            f"DifferentiateWith evaluated f at points the user never passed: {invented[0]!r}"
        )


def _cubic(s):
    xp = array_namespace(s)
    return xp.sin(s) * s**2


def _second_order_at_a_zero_d_x(backend, problems, zero):
    s = 0.5
    second = (2 - s**2) * np.sin(s) + 4 * s * np.cos(s)
    rtol, atol = over_finite_differences(backend, 1e-3, 1e-5)
    pairs = (
        ("SecondOrder(AutoFiniteDiff(), backend)", SecondOrder(AutoFiniteDiff(), backend)),
        ("SecondOrder(backend, AutoFiniteDiff())", SecondOrder(backend, AutoFiniteDiff())),
        ("SecondOrder(backend, backend)", SecondOrder(backend, backend)),
    )
    for name, pair in pairs:
        for x in (s, np.float64(s), np.array(s)):
            kind = type(x).__name__
            like = s  # a Python float, a NumPy scalar and a 0-d array are one kind
            for operator, call in (
                ("hessian", lambda: hessian(_cubic, pair, x)),
                ("hvp", lambda: hvp(_cubic, pair, x, (np.array(1.0),))[0]),
                ("second_derivative", lambda: second_derivative(_cubic, pair, x)),
            ):
                problems.expect_result(
                    f"{name} {operator} at a 0-d x ({kind})",
                    call,
                    np.array(second),
                    like=like,
                    zero=zero,
                    rtol=rtol,
                    atol=atol,
                )


SMALL = np.array([0.01, 0.02, 0.5])


def _prepared_at_another_scale(backend, problems, zero):
    def log_sum(x):
        return array_namespace(x).sum(array_namespace(x).log(x))

    def log(x):
        return array_namespace(x).log(x)

    large = 1000.0 * np.array([1.0, 3.0, 0.1])
    prep = prepare_gradient(log_sum, backend, large)
    problems.expect_result(
        "gradient of sum(log(x)) prepared at x * 1000, called at x",
        lambda: gradient(log_sum, backend, SMALL, prep=prep),
        1 / SMALL,
        like=SMALL,
        zero=zero,
    )
    prep = prepare_jacobian(log, backend, large)
    problems.expect_result(
        "jacobian of log(x) prepared at x * 1000, called at x",
        lambda: jacobian(log, backend, SMALL, prep=prep),
        np.diag(1 / SMALL),
        like=SMALL,
        zero=zero,
    )
    point = np.asarray(0.01)
    prep = prepare_derivative(log, backend, np.asarray(1000.0))
    problems.expect_result(
        "derivative of log(s) prepared at 1000, called at 0.01",
        lambda: derivative(log, backend, point, prep=prep),
        np.asarray(100.0),
        like=point,
        zero=zero,
    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "differentiate_with_at_given_points",
            "DifferentiateWith inside the backend's derivative: f evaluated only at points the user passed",
            _differentiate_with_at_given_points,
        ),
        BadInput(
            "second_order_at_a_zero_d_x",
            "hessian, hvp and second_derivative at a 0-d x through SecondOrder pairs",
            _second_order_at_a_zero_d_x,
        ),
        BadInput(
            "prepared_at_another_scale",
            "gradient, jacobian and derivative prepared at a point 1000 times "
            "larger: each call differentiated at its own x's scale",
            _prepared_at_another_scale,
        ),
    ]
