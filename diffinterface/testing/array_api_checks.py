"""The checks of the array-API sweep (:mod:`.array_api_cases` holds the cases).

:func:`check_array_api_case` differentiates a case's ``f`` with ``di.jacobian``
on a backend and compares the result with float64 central finite differences
computed here, on numpy, so a backend whose namespace silently drops a
derivative (a Jacobian of zeros) fails. :func:`check_array_api_modes` does the
same for ``di.pushforward`` and ``di.pullback`` (forward and reverse rules are
separate code in most frameworks). A backend may refuse only with a declared
framework limit or an error naming the function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core.boundary import declared_limits
from ..operators import jacobian, pullback, pushforward
from ..selectors import AutoFiniteDiff
from .tolerances import default_tolerances


@dataclass(frozen=True)
class ArrayAPICase:
    """One array-API function in a one-source ``f``, at the point ``x``."""

    f: Callable
    x: np.ndarray
    #: f extends to complex inputs analytically, so the complex-step method applies (no abs, max,
    #: sort...)
    holomorphic: bool = True
    #: what f does that a framework may declare unsupported (core.boundary.declared_limits)
    limit: str = ""
    #: the array-API function the case exercises (its id up to "-" or "@"), named by a refusal
    function: str = ""
    #: names of the functions whose results f stacks along axis 0 (one case, many functions)
    parts: tuple = ()


def reference_jacobian(f, x, step=1e-6):
    """The float64 central finite-difference Jacobian of ``f`` at ``x`` (shape ``f(x).shape + x.shape``)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(f(x))
    columns = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = step * max(1.0, abs(x.flat[i]))
        e = e.reshape(x.shape)
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * e.flat[i]))
    return np.stack(columns, axis=-1).reshape(y.shape + x.shape)


def applies(backend, case):
    """True when ``backend``'s method is valid for ``case`` (complex steps need a holomorphic ``f``)."""
    return case.holomorphic or not (
        isinstance(backend, AutoFiniteDiff) and backend.method == "complex"
    )


def refused_by_name(error, case):
    """True when ``error`` is a refusal the sweep accepts: a declared framework limit, or one naming the function."""
    if isinstance(error, NotImplementedError):
        return f"array_namespace(x).{case.function}" in str(error) and "use " in str(error)
    declared = [(what, around) for _, _, what, around in declared_limits() if what == case.limit]
    return isinstance(error, ValueError) and any(
        f"does not support {what}" in str(error) and around in str(error)
        for what, around in declared
    )


def assert_close(backend, case, what, result, expected, stacked=True):
    rtol, atol = default_tolerances(backend, "float64")
    # the reference itself is a finite difference (about 1e-9 relative)
    rtol, atol = max(rtol, 1e-6), max(atol, 1e-7)
    result = np.asarray(result)
    assert result.shape == expected.shape, (
        f"{what}: expected shape {expected.shape}; got {result.shape}"
    )
    # a stacked result names the function that is wrong; a pullback mixes them (its message lists
    # them)
    for i, part in enumerate(case.parts if stacked else ()):
        np.testing.assert_allclose(
            result[i], expected[i], rtol=rtol, atol=atol, err_msg=f"{what} of {part}"
        )
    np.testing.assert_allclose(
        result,
        expected,
        rtol=rtol,
        atol=atol,
        err_msg=what + (f" of one of {', '.join(case.parts)}" if case.parts else ""),
    )


def check_array_api_case(backend, case):
    """Raise AssertionError unless ``backend``'s Jacobian of ``case.f`` matches finite differences."""
    expected = reference_jacobian(case.f, case.x)
    try:
        result = jacobian(case.f, backend, case.x)
    except (ValueError, NotImplementedError) as error:
        # only a declared framework limit or an error naming the function may refuse, with the way
        # around it
        if not refused_by_name(error, case):
            raise
        return
    assert_close(backend, case, "jacobian", result, expected)


def check_array_api_modes(backend, case, seed=0):
    """Raise AssertionError unless ``backend``'s pushforward and pullback of ``case.f`` match finite differences.

    One random tangent and one random cotangent (float64, from ``seed``);
    the expected values are the reference Jacobian applied to them.
    """
    expected = reference_jacobian(case.f, case.x)
    x = case.x
    y_shape = expected.shape[: expected.ndim - x.ndim]
    matrix = expected.reshape(math.prod(y_shape), x.size)
    rng = np.random.default_rng(seed)
    tangent, cotangent = rng.standard_normal(x.shape), rng.standard_normal(y_shape)
    calls = [
        (
            "pushforward",
            lambda: pushforward(case.f, backend, x, (tangent,))[0],
            (matrix @ tangent.reshape(-1)).reshape(y_shape),
        ),
        (
            "pullback",
            lambda: pullback(case.f, backend, x, (cotangent,))[0],
            (cotangent.reshape(-1) @ matrix).reshape(x.shape),
        ),
    ]
    for what, call, want in calls:
        try:
            result = call()
        except (ValueError, NotImplementedError) as error:
            if not refused_by_name(error, case):
                raise
            continue
        assert_close(backend, case, what, result, want, stacked=what == "pushforward")
