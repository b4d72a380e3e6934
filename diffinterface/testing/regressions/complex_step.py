"""Regression probes: the complex step is never silently wrong through the one-source namespace.

An adversarial campaign found ``AutoFiniteDiff(method="complex")`` returning
wrong derivatives without an error for f calling ``abs``, ``sign``,
``real``/``conj``, ``vecdot``, ``var``, ``std``, the norms, ``slogdet``,
``cholesky``, ``eigvalsh``, ``eigh``, ``svd``, ``pinv``, ``astype``...
through ``di.array_namespace(x)``: numpy's complex versions of them are not
the analytic continuations of the real functions the complex step needs
(``floor``, ``hypot``, ``atan2``, ``copysign``, ``logaddexp`` raised numpy's
bare ``TypeError``). The probe states the contract on every backend that
evaluates f at complex points (its adapter, or a part of it, declares
``capabilities.complex_step``):

- ``complex-step-namespace``: the Jacobian and a pushforward of each function
  of the array-API sweep that is not holomorphic (:mod:`..array_api_cases`),
  and of :data:`MORE_FUNCTIONS`, each added to a complex term so that a real
  intermediate is not caught by f's output, equal central differences, or
  refuse with an error naming ``array_namespace(x).<function>`` and the way
  around it; a genuinely complex value (``abs(exp(1j x))``) is refused, not
  continued.

    >>> import diffinterface as di
    >>> from diffinterface.testing.probes import run_probes
    >>> run_probes(probes(), di.AutoFiniteDiff(method="complex")).found
    []
"""

from __future__ import annotations

import numpy as np

from ...core import get_adapter
from ...families import array_namespace
from ...operators import jacobian, pushforward
from ..array_api_cases import ARRAY_API_CASES, MATRIX, X, ArrayAPICase, reference_jacobian
from ..array_api_checks import refused_by_name
from ..probes import BadInput

ZERO_AND_MORE = np.array([0.0, 0.7, -1.3])


def _xp(x):
    return array_namespace(x)


def _sinc_squared(x):
    # x^2 sin(1/x), continued by 0 at 0, where its derivative is 0: read only where x != 0
    xp = _xp(x)
    safe = xp.where(xp.equal(x, 0.0), 1.0, x)
    return xp.where(xp.equal(x, 0.0), 0.0 * x, x**2 * xp.sin(1.0 / safe))


#: array-API functions (and numpy's aliases) the sweep's table does not exercise
MORE_FUNCTIONS = (
    ArrayAPICase(_sinc_squared, ZERO_AND_MORE, function="equal"),
    ArrayAPICase(lambda x: _xp(x).where(_xp(x).greater(x, 0.5), x**2, x), X, function="greater"),
    ArrayAPICase(lambda x: _xp(x).imag(x) + x, X, function="imag"),
    ArrayAPICase(lambda x: _xp(x).conj(x) * x, X, function="conj"),
    ArrayAPICase(lambda x: _xp(x).signbit(x) * x, X, function="signbit"),
    ArrayAPICase(lambda x: _xp(x).floor_divide(x, 0.4) * x, X + 0.05, function="floor_divide"),
    ArrayAPICase(lambda x: _xp(x).remainder(x, 0.4), X + 0.05, function="remainder"),
    ArrayAPICase(lambda x: _xp(x).nextafter(x, x + 1.0), X, function="nextafter"),
    ArrayAPICase(lambda x: _xp(x).count_nonzero(x - x[0]) * x, X, function="count_nonzero"),
    ArrayAPICase(lambda x: _xp(x).asarray(x, dtype=_xp(x).float64) ** 2, X, function="asarray"),
    ArrayAPICase(lambda x: _xp(x).linalg.vecdot(x, x * 2.0), MATRIX, function="linalg.vecdot"),
    ArrayAPICase(
        lambda x: _xp(x).linalg.vector_norm(x, ord=-np.inf), X, function="linalg.vector_norm"
    ),
    ArrayAPICase(
        lambda x: _xp(x).linalg.matrix_norm(x, ord=-1), MATRIX, function="linalg.matrix_norm"
    ),
    ArrayAPICase(lambda x: _xp(x).linalg.qr(x)[1] ** 2, MATRIX, function="linalg.qr"),
    ArrayAPICase(
        lambda x: _xp(x).real(_xp(x).fft.ifft(_xp(x).fft.fft(x) * 2.0)), X, function="fft.fft"
    ),
    # a genuinely complex value: abs has no continuation to read from it
    ArrayAPICase(lambda x: _xp(x).abs(_xp(x).exp(1j * x)) * x, X, function="abs"),
    ArrayAPICase(lambda x: _xp(x).absolute(x) * x, X, function="absolute"),
    ArrayAPICase(lambda x: _xp(x).linalg.norm(x, axis=1), MATRIX, function="linalg.norm"),
)


def _uses_complex_step(backend):
    return any(part.capabilities.complex_step for part in get_adapter(backend).parts())


def _with_complex_term(f):
    """``f(x) + sum(x) / 4``: complex at a complex point, so a real intermediate reaches the result."""
    return lambda x: f(x) + 0.25 * _xp(x).sum(x)


def _right_or_refused(problems, what, case, call, expected):
    try:
        got = call()
    except (ValueError, NotImplementedError) as error:
        if not refused_by_name(error, case):
            problems.raised(what, error, f"a result or an error naming {case.function}")
        return
    except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised(what, error, f"a result or an error naming {case.function}")
        return
    problems.check_result(what, got, expected, like=expected, rtol=1e-5, atol=1e-6)


def _namespace(backend, problems, zero):
    if zero or not _uses_complex_step(backend):
        return  # only the complex step evaluates f where the namespace's complex meaning enters
    swept = [(i, c) for i, c in ARRAY_API_CASES.items() if not c.holomorphic]
    cases = swept + [(case.function, case) for case in MORE_FUNCTIONS]
    rng = np.random.default_rng(0)
    for case_id, case in cases:
        f, x = _with_complex_term(case.f), case.x
        with np.errstate(all="ignore"):
            expected = reference_jacobian(f, x)
        y_shape = expected.shape[: expected.ndim - x.ndim]
        tangent = rng.standard_normal(x.shape)
        pushed = (expected.reshape(-1, x.size) @ tangent.reshape(-1)).reshape(y_shape)
        calls = (
            ("jacobian", lambda: jacobian(f, backend, x), expected),
            ("pushforward", lambda: pushforward(f, backend, x, (tangent,))[0], pushed),
        )
        for operator, call, want in calls:
            what = f"{operator} of {case_id} at complex-step points"
            with np.errstate(all="ignore"):
                _right_or_refused(problems, what, case, call, want)


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "complex-step-namespace",
            "every array-API function through di.array_namespace at complex-step points: "
            "the real derivative, or an error naming the function and method='central'",
            _namespace,
        )
    ]
