"""Array-API functions, each written once with ``di.array_namespace``, for checking any backend's Jacobians.

``ARRAY_API_CASES`` maps a readable id (the function it exercises, e.g.
``"linalg.vector_norm-ord1"``) to an :class:`ArrayAPICase`: a one-source
function ``f(x) -> array`` and a float64 point. :func:`check_array_api_case`
differentiates ``f`` with ``di.jacobian`` on a backend and compares the result
with float64 central finite differences computed here, on numpy, so a
backend whose namespace silently drops a derivative (a Jacobian of zeros)
fails. A third-party backend runs the same sweep::

    @pytest.mark.parametrize("case", list(ARRAY_API_CASES.values()), ids=list(ARRAY_API_CASES))
    def test_my_backend_differentiates_the_array_api(case):
        check_array_api_case(MyBackend(), case)

Cases are small (3 or 4 inputs) and keep away from kinks (``abs`` at 0, ties
in ``max``, ``sort``), where finite differences and AD legitimately disagree.

    >>> import diffinterface as di
    >>> check_array_api_case(di.AutoFiniteDiff(), ARRAY_API_CASES["concat"])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..families import array_namespace
from ..core.boundary import FRAMEWORK_LIMITS
from ..operators import jacobian
from ..selectors import AutoFiniteDiff
from .tolerances import default_tolerances


@dataclass(frozen=True)
class ArrayAPICase:
    """One array-API function in a one-source ``f``, at the point ``x``."""

    f: Callable
    x: np.ndarray
    #: f extends to complex inputs analytically, so the complex-step method applies (no abs, max, sort...)
    holomorphic: bool = True
    #: what f does that a framework may declare unsupported (an entry of core.boundary.FRAMEWORK_LIMITS)
    limit: str = ""


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
    return case.holomorphic or not (isinstance(backend, AutoFiniteDiff) and backend.method == "complex")


def check_array_api_case(backend, case):
    """Raise AssertionError unless ``backend``'s Jacobian of ``case.f`` matches finite differences."""
    expected = reference_jacobian(case.f, case.x)
    try:
        result = np.asarray(jacobian(case.f, backend, case.x))
    except ValueError as error:
        # only a declared framework limit may refuse, and its error must name the way around it
        declared = [(what, around) for _, _, what, around in FRAMEWORK_LIMITS if what == case.limit]
        if not any(f"does not support {what}" in str(error) and around in str(error) for what, around in declared):
            raise
        return
    rtol, atol = default_tolerances(backend, "float64")
    # the reference itself is a finite difference (about 1e-9 relative)
    np.testing.assert_allclose(result, expected, rtol=max(rtol, 1e-6), atol=max(atol, 1e-7))


X = np.array([0.3, -1.2, 2.0, 0.7])
UNIT = np.array([0.3, -0.6, 0.45, 0.8])       # inside (-1, 1)
POSITIVE = np.array([0.4, 1.3, 2.5, 0.9])
ABOVE_ONE = np.array([1.4, 2.3, 3.5, 1.9])
MATRIX = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.25], [-0.3, 0.7, 1.8]])  # no ties in row or column sums
OFF_INTEGERS = X + 0.05                        # floor, round... away from their jumps
SIX = np.array([0.3, -1.2, 2.0, 0.7, 1.1, -0.5])


def _xp(x):
    return array_namespace(x)


def _unary(name):
    return lambda x: getattr(_xp(x), name)(x)


def _binary(name):
    return lambda x: getattr(_xp(x), name)(x, x * 0.5 + 0.9)


def _build():
    cases = {}
    for name, x in [("sin", X), ("cos", X), ("tan", UNIT), ("asin", UNIT), ("acos", UNIT), ("atan", X),
                    ("sinh", X), ("cosh", X), ("tanh", X), ("asinh", X), ("acosh", ABOVE_ONE), ("atanh", UNIT),
                    ("exp", X), ("expm1", X), ("log", POSITIVE), ("log1p", POSITIVE), ("log2", POSITIVE),
                    ("log10", POSITIVE), ("sqrt", POSITIVE), ("square", X), ("negative", X), ("positive", X)]:
        cases[name] = ArrayAPICase(_unary(name), x)
    for name in ("abs", "floor", "ceil", "trunc", "round", "sign"):
        cases[name] = ArrayAPICase(lambda x, name=name: getattr(_xp(x), name)(x) * x, OFF_INTEGERS,
                                   holomorphic=False)
    for name in ("add", "subtract", "multiply", "divide", "pow", "atan2"):
        cases[name] = ArrayAPICase(_binary(name), POSITIVE, holomorphic=name != "atan2")
    for name in ("maximum", "minimum", "hypot", "copysign"):
        cases[name] = ArrayAPICase(_binary(name), X, holomorphic=False)
    cases["logaddexp"] = ArrayAPICase(_binary("logaddexp"), X, holomorphic=False)
    cases["clip"] = ArrayAPICase(lambda x: _xp(x).clip(x, -1.0, 1.0), X, holomorphic=False)
    cases["where"] = ArrayAPICase(lambda x: _xp(x).where(x > 0, x ** 2, -x), X, holomorphic=False)
    cases["real-imag-conj"] = ArrayAPICase(lambda x: _xp(x).real(x) + _xp(x).conj(x), X, holomorphic=False)

    matrix = MATRIX
    for name in ("sum", "prod", "mean", "max", "min"):
        cases[name] = ArrayAPICase(lambda x, name=name: getattr(_xp(x), name)(x), matrix,
                                   holomorphic=name not in ("max", "min"))
        cases[name + "-axis-keepdims"] = ArrayAPICase(
            lambda x, name=name: getattr(_xp(x), name)(x, axis=0, keepdims=True), matrix,
            holomorphic=name not in ("max", "min"))
    cases["var-correction"] = ArrayAPICase(lambda x: _xp(x).var(x, axis=1, correction=1), matrix, holomorphic=False)
    cases["std"] = ArrayAPICase(lambda x: _xp(x).std(x, axis=(0, 1), keepdims=True), matrix, holomorphic=False)
    cases["cumulative_sum"] = ArrayAPICase(lambda x: _xp(x).cumulative_sum(x, axis=1, include_initial=True), matrix)
    cases["cumulative_prod"] = ArrayAPICase(lambda x: _xp(x).cumulative_prod(x, axis=0), matrix)

    cases["matmul"] = ArrayAPICase(lambda x: _xp(x).matmul(x, x.T), matrix)
    cases["tensordot"] = ArrayAPICase(lambda x: _xp(x).tensordot(x, x, axes=1), matrix)
    cases["vecdot"] = ArrayAPICase(lambda x: _xp(x).vecdot(x, x * 2.0), matrix, holomorphic=False)
    cases["matrix_transpose"] = ArrayAPICase(lambda x: _xp(x).matrix_transpose(x) * x, matrix)
    cases["linalg.outer"] = ArrayAPICase(lambda x: _xp(x).linalg.outer(x, x), X)
    cases["linalg.cross"] = ArrayAPICase(lambda x: _xp(x).linalg.cross(x, _xp(x).flip(x) * 2.0), X[:3])
    for name in ("det", "inv"):
        cases["linalg." + name] = ArrayAPICase(lambda x, name=name: getattr(_xp(x).linalg, name)(x), matrix)
    cases["linalg.slogdet"] = ArrayAPICase(lambda x: _xp(x).linalg.slogdet(x)[1], matrix, holomorphic=False)
    cases["linalg.solve"] = ArrayAPICase(lambda x: _xp(x).linalg.solve(x, x[0]), matrix)
    cases["linalg.cholesky"] = ArrayAPICase(lambda x: _xp(x).linalg.cholesky(x @ x.T), matrix, holomorphic=False)
    cases["linalg.eigvalsh"] = ArrayAPICase(lambda x: _xp(x).linalg.eigvalsh(x + x.T), matrix, holomorphic=False)
    cases["linalg.svdvals"] = ArrayAPICase(lambda x: _xp(x).linalg.svdvals(x), matrix, holomorphic=False)
    cases["linalg.trace"] = ArrayAPICase(lambda x: _xp(x).linalg.trace(x * x, offset=1), matrix)
    cases["linalg.diagonal"] = ArrayAPICase(lambda x: _xp(x).linalg.diagonal(x, offset=-1), matrix)
    cases["linalg.matrix_power"] = ArrayAPICase(lambda x: _xp(x).linalg.matrix_power(x, 3), matrix)
    for ord_ in (2, 1, 3, math.inf):
        cases[f"linalg.vector_norm-ord{ord_}"] = ArrayAPICase(
            lambda x, ord_=ord_: _xp(x).linalg.vector_norm(x, axis=-1, keepdims=True, ord=ord_), matrix,
            holomorphic=False)
    for ord_ in ("fro", "nuc", 1, math.inf, 2):
        cases[f"linalg.matrix_norm-{ord_}"] = ArrayAPICase(
            lambda x, ord_=ord_: _xp(x).linalg.matrix_norm(x, ord=ord_), matrix, holomorphic=False)

    cases["concat"] = ArrayAPICase(lambda x: _xp(x).concat([x, x ** 2], axis=0), X)
    cases["concat-axis-None"] = ArrayAPICase(lambda x: _xp(x).concat([x, x[:1]], axis=None), matrix)
    cases["stack"] = ArrayAPICase(lambda x: _xp(x).stack([x, x ** 2], axis=1), X)
    cases["unstack"] = ArrayAPICase(lambda x: _xp(x).unstack(x, axis=1)[2] * 3.0, matrix)
    cases["reshape"] = ArrayAPICase(lambda x: _xp(x).reshape(x, (2, 2)) ** 2, X)
    cases["permute_dims"] = ArrayAPICase(lambda x: _xp(x).permute_dims(_xp(x).reshape(x, (1, 2, 3)), (2, 0, 1)), SIX)
    cases["expand_dims-squeeze"] = ArrayAPICase(
        lambda x: _xp(x).squeeze(_xp(x).expand_dims(x, axis=0), axis=0) ** 2, X)
    cases["moveaxis"] = ArrayAPICase(lambda x: _xp(x).moveaxis(x, 0, 1) * x, matrix)
    cases["flip"] = ArrayAPICase(lambda x: _xp(x).flip(x, axis=0) * x, matrix)
    cases["roll"] = ArrayAPICase(lambda x: _xp(x).roll(x, 1) * x, X)
    cases["broadcast_to"] = ArrayAPICase(lambda x: _xp(x).broadcast_to(x, (2, 4)) * 2.0, X)
    cases["broadcast_arrays"] = ArrayAPICase(lambda x: _xp(x).broadcast_arrays(x, x[:, None])[1] * x, X)
    cases["tile"] = ArrayAPICase(lambda x: _xp(x).tile(x, (2,)), X)
    cases["repeat"] = ArrayAPICase(lambda x: _xp(x).repeat(x, 2), X)
    cases["take"] = ArrayAPICase(lambda x: _xp(x).take(x, _xp(x).asarray([2, 0, 2]), axis=1), matrix)
    cases["sort"] = ArrayAPICase(lambda x: _xp(x).flip(_xp(x).sort(x)), X, holomorphic=False)
    cases["astype"] = ArrayAPICase(lambda x: _xp(x).astype(x, _xp(x).float64) ** 2, X, holomorphic=False)
    cases["zeros_like-ones_like"] = ArrayAPICase(
        lambda x: x * _xp(x).ones_like(x) + _xp(x).zeros_like(x), X)
    cases["asarray-of-arrays"] = ArrayAPICase(lambda x: _xp(x).asarray(x) * x, X)
    cases["tril-triu"] = ArrayAPICase(lambda x: _xp(x).tril(x) + 2.0 * _xp(x).triu(x, k=1), matrix)
    cases["indexing-slice"] = ArrayAPICase(lambda x: x[1:, ::2] * 2.0, matrix)
    cases["indexing-ellipsis-newaxis"] = ArrayAPICase(lambda x: x[..., None, 1] ** 2, matrix)
    cases["indexing-integer-array"] = ArrayAPICase(lambda x: x[_xp(x).asarray([2, 0])] ** 2, X)
    cases["indexing-negative-step"] = ArrayAPICase(lambda x: x[::-1] * x, X,
                                                   limit="slicing with a negative step (x[::-1])")
    return cases


ARRAY_API_CASES = _build()

__all__ = ["ARRAY_API_CASES", "ArrayAPICase", "applies", "check_array_api_case", "reference_jacobian"]
