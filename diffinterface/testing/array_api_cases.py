"""Array-API functions, each written once with ``di.array_namespace``, for checking any backend's Jacobians.

``ARRAY_API_CASES`` maps a readable id (the function it exercises, e.g.
``"linalg.vector_norm-ord1"``) to an :class:`ArrayAPICase`: a one-source
function ``f(x) -> array`` and a float64 point. :func:`check_array_api_case`
(``di.jacobian``) and :func:`check_array_api_modes` (``di.pushforward``,
``di.pullback``) compare a backend with finite differences
(:mod:`.array_api_checks`). A third-party backend runs the same sweep::

    @pytest.mark.parametrize("case", list(ARRAY_API_CASES.values()), ids=list(ARRAY_API_CASES))
    def test_my_backend_differentiates_the_array_api(case):
        check_array_api_case(MyBackend(), case)
        check_array_api_modes(MyBackend(), case)

Elementwise functions also run at every shape of :data:`SHAPES` (0-d, size
1, 2-D, 3-D), stacked in one case per shape and input domain (ids like
``"elementwise-X@2d"``; a wrong function is named in the failure); the
reductions, manipulation and linalg functions also run on 2-D and 3-D
stacks (ids ending ``@3d``). A backend may refuse a function only with an
error naming it (``array_namespace(x).<function>``) and the way around it,
or through a declared framework limit.

Cases are small (3 or 4 inputs) and keep away from kinks (``abs`` at 0, ties
in ``max``, ``sort``), where finite differences and AD legitimately disagree.

    >>> import diffinterface as di
    >>> check_array_api_case(di.AutoFiniteDiff(), ARRAY_API_CASES["concat"])
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from ..families import array_namespace
from .array_api_checks import (
    ArrayAPICase,
    applies,
    check_array_api_case,
    check_array_api_modes,
    reference_jacobian,
)


X = np.array([0.3, -1.2, 2.0, 0.7])
UNIT = np.array([0.3, -0.6, 0.45, 0.8])  # inside (-1, 1)
POSITIVE = np.array([0.4, 1.3, 2.5, 0.9])
ABOVE_ONE = np.array([1.4, 2.3, 3.5, 1.9])
MATRIX = np.array(
    [[2.0, 0.3, -0.4], [0.1, 1.5, 0.25], [-0.3, 0.7, 1.8]]
)  # no ties in row or column sums
MATRIX_WIDE = np.array([[2.0, 0.3, -0.4, 0.5], [0.1, 1.5, 0.25, -0.7], [-0.3, 0.7, 1.8, 0.2]])
OFF_INTEGERS = X + 0.05  # floor, round... away from their jumps
DOMAINS = {
    "X": X,
    "UNIT": UNIT,
    "POSITIVE": POSITIVE,
    "ABOVE_ONE": ABOVE_ONE,
    "OFF_INTEGERS": OFF_INTEGERS,
}
SIX = np.array([0.3, -1.2, 2.0, 0.7, 1.1, -0.5])


#: the shapes elementwise functions run at, besides their 1-d point
SHAPES = {"0d": (), "size1": (1,), "2d": (2, 3), "3d": (2, 1, 3)}
#: a 3-d stack of three 3x4 matrices, and of square ones far from singular
STACK = np.random.default_rng(7).uniform(-1.0, 1.0, (2, 3, 4))  # full rank, no ties
SQUARE_STACK = np.array([MATRIX, MATRIX.T[::-1] + np.eye(3)]) * 1.2


def _xp(x):
    return array_namespace(x)


def _at_shape(x, shape):
    """The values of the 1-d ``x`` repeated or cut to ``shape``."""
    return np.resize(x, math.prod(shape)).reshape(shape)


def _stacked_at_shapes(cases):
    """One case per shape of :data:`SHAPES` and input domain: the elementwise ``cases`` stacked along axis 0."""
    groups = {}
    for case_id, case in cases.items():
        domain = next(name for name, point in DOMAINS.items() if point is case.x)
        groups.setdefault((domain, case.holomorphic), []).append((case_id, case.f))
    stacked = {}
    for (domain, holomorphic), members in groups.items():
        functions = tuple(f for _, f in members)
        for shape_id, shape in SHAPES.items():
            stacked[f"elementwise-{domain}{'' if holomorphic else '-real'}@{shape_id}"] = (
                ArrayAPICase(
                    lambda x, functions=functions: _xp(x).stack([f(x) for f in functions]),
                    _at_shape(DOMAINS[domain], shape),
                    holomorphic=holomorphic,
                    parts=tuple(n for n, _ in members),
                )
            )
    return stacked


def _stacks():
    """Reductions, manipulation and linalg on 2-d and 3-d stacks (and the 0-d and size-1 cases that apply)."""
    m, t, sq = MATRIX_WIDE, STACK, SQUARE_STACK
    cases = {
        "sort@2d": (lambda x: _xp(x).sort(x, axis=0), m, False),
        "argsort-take_along_axis@2d": (
            lambda x: _xp(x).take_along_axis(x, _xp(x).argsort(x, axis=1), axis=1) * 2.0,
            m,
            False,
        ),
        "tile@2d": (lambda x: _xp(x).tile(x, (2,)), m, True),
        "tile@3d": (lambda x: _xp(x).tile(x, (2, 1, 1, 2)), t, True),
        "roll@3d": (lambda x: _xp(x).roll(x, (1, 2), axis=(0, 2)) * x, t, True),
        "roll@2d": (lambda x: _xp(x).roll(x, -1, axis=1) * x, m, True),
        "repeat@2d": (lambda x: _xp(x).repeat(x, 2, axis=1), m, True),
        "repeat@0d": (lambda x: _xp(x).repeat(x, 3) * x, np.array(0.7), True),
        "repeat-array@2d": (
            lambda x: _xp(x).repeat(x, _xp(x).asarray([1, 0, 2]), axis=0),
            m,
            True,
            "an array of repeats (xp.repeat), whose result's shape depends on its values",
        ),
        "cumulative_sum@3d": (lambda x: _xp(x).cumulative_sum(x, axis=1), t, True),
        "cumulative_prod@3d": (
            lambda x: _xp(x).cumulative_prod(x, axis=2, include_initial=True),
            t,
            True,
        ),
        "sum@3d": (lambda x: _xp(x).sum(x, axis=(0, 2)), t, True),
        "prod@3d": (lambda x: _xp(x).prod(x, axis=1, keepdims=True), t, True),
        "mean@3d": (lambda x: _xp(x).mean(x, axis=(1,)), t, True),
        "max@3d": (lambda x: _xp(x).max(x, axis=(0, 2)), t, False),
        "min@3d": (lambda x: _xp(x).min(x, axis=-1), t, False),
        "var@3d": (lambda x: _xp(x).var(x, axis=(0, 2)), t, False),
        "std@3d": (lambda x: _xp(x).std(x, axis=0, correction=1), t, False),
        "max@0d": (lambda x: _xp(x).max(x) * x, np.array(0.7), False),
        "mean@0d": (lambda x: _xp(x).mean(x) * x, np.array(0.7), True),
        "var@size1": (
            lambda x: _xp(x).var(x * x + x, axis=0, keepdims=True) + x,
            np.array([0.7]),
            False,
        ),
        "matmul@3d": (lambda x: _xp(x).matmul(x, _xp(x).matrix_transpose(x)), t, True),
        "matmul-vector@2d": (lambda x: _xp(x).matmul(x, x[0] * 1.0), sq[0], True),
        "vecdot@3d": (lambda x: _xp(x).vecdot(x, x * 2.0, axis=1), t, False),
        "tensordot@3d": (lambda x: _xp(x).tensordot(x, x, axes=([0, 1], [0, 1])), t, True),
        "expand_dims-squeeze@3d": (
            lambda x: _xp(x).squeeze(_xp(x).expand_dims(x, axis=1), axis=1) * x,
            t,
            True,
        ),
        "moveaxis@3d": (lambda x: _xp(x).moveaxis(x, 0, -1) * 2.0, t, True),
        "flip@3d": (lambda x: _xp(x).flip(x, axis=(0, 2)) * x, t, True),
        "permute_dims@3d": (lambda x: _xp(x).permute_dims(x, (2, 0, 1)) * 2.0, t, True),
        "take@3d": (lambda x: _xp(x).take(x, _xp(x).asarray([1, 0]), axis=2), t, True),
        "stack@3d": (lambda x: _xp(x).stack([x, x**2], axis=-1), t, True),
        "concat@3d": (lambda x: _xp(x).concat([x, x**2], axis=1), t, True),
        "unstack@3d": (lambda x: _xp(x).unstack(x, axis=2)[1] * 2.0, t, True),
        "broadcast_to@3d": (lambda x: _xp(x).broadcast_to(x[:, None, :], (3, 2, 4)) * 2.0, m, True),
        "clip-array-bounds@3d": (lambda x: _xp(x).clip(x[1], x[0] - 0.5, x[0] + 0.2), t, False),
        "tril-triu@3d": (lambda x: _xp(x).tril(x, k=-1) + 2.0 * _xp(x).triu(x, k=2), t, True),
        "meshgrid@2d": (
            lambda x: _xp(x).meshgrid(x[0], x[1, :3], indexing="ij")[1] * x[0, :, None],
            m,
            True,
        ),
        "full_like@3d": (lambda x: _xp(x).full_like(x, 2.0) * x, t, True),
        "linalg.trace@3d": (lambda x: _xp(x).linalg.trace(x, offset=-1), t, True),
        "linalg.diagonal@3d": (lambda x: _xp(x).linalg.diagonal(x, offset=1), t, True),
        "linalg.cross@3d": (
            lambda x: _xp(x).linalg.cross(x[:, :, :3], x[:, :, 1:], axis=-1),
            t,
            True,
        ),
        "linalg.matrix_norm@3d": (
            lambda x: _xp(x).linalg.matrix_norm(x, ord=1, keepdims=True),
            t,
            False,
        ),
        "linalg.vector_norm@3d": (lambda x: _xp(x).linalg.vector_norm(x, axis=(0, 2)), t, False),
        "linalg.det@3d": (lambda x: _xp(x).linalg.det(x), sq * 0.5, True),
        "linalg.inv@3d": (lambda x: _xp(x).linalg.inv(x), sq, True),
        "linalg.slogdet@3d": (lambda x: _xp(x).linalg.slogdet(x)[1], sq, False),
        "linalg.solve@3d": (lambda x: _xp(x).linalg.solve(x, x[0, :, :2] * 1.0), sq, True),
        "linalg.solve-constant-matrix": (
            lambda x: _xp(x).linalg.solve(_xp(x).asarray(MATRIX), x),
            X[:3],
            True,
        ),
        "linalg.solve-constant-rhs": (
            lambda x: _xp(x).linalg.solve(x, _xp(x).asarray(X[:3])),
            MATRIX,
            True,
        ),
        "linalg.matrix_power@3d": (lambda x: _xp(x).linalg.matrix_power(x, -2), sq, True),
        "linalg.cholesky@3d": (
            lambda x: _xp(x).linalg.cholesky(_xp(x).matmul(x, _xp(x).matrix_transpose(x))),
            sq,
            False,
        ),
        "linalg.eigvalsh@3d": (
            lambda x: _xp(x).linalg.eigvalsh(x + _xp(x).matrix_transpose(x)),
            sq,
            False,
        ),
        # squares: an eigenvector's sign is arbitrary
        "linalg.eigh": (
            lambda x: _xp(x).linalg.eigh(x + _xp(x).matrix_transpose(x))[1] ** 2,
            MATRIX,
            False,
            "compiling some derivatives (forward mode through eigh's eigenvectors)",
        ),
        "linalg.svdvals@3d": (lambda x: _xp(x).linalg.svdvals(x), t, False),
        "linalg.svd": (lambda x: _xp(x).linalg.svd(x, full_matrices=False)[1], m, False),
        "linalg.pinv": (lambda x: _xp(x).linalg.pinv(x), m, False),
    }
    return {
        case_id: ArrayAPICase(f, x, holomorphic=holomorphic, limit=limit[0] if limit else "")
        for case_id, (f, x, holomorphic, *limit) in cases.items()
    }


def _unary(name):
    return lambda x: getattr(_xp(x), name)(x)


def _binary(name):
    return lambda x: getattr(_xp(x), name)(x, x * 0.5 + 0.9)


def _build():
    cases = {}
    for name, x in [
        ("sin", X),
        ("cos", X),
        ("tan", UNIT),
        ("asin", UNIT),
        ("acos", UNIT),
        ("atan", X),
        ("sinh", X),
        ("cosh", X),
        ("tanh", X),
        ("asinh", X),
        ("acosh", ABOVE_ONE),
        ("atanh", UNIT),
        ("exp", X),
        ("expm1", X),
        ("log", POSITIVE),
        ("log1p", POSITIVE),
        ("log2", POSITIVE),
        ("log10", POSITIVE),
        ("sqrt", POSITIVE),
        ("square", X),
        ("negative", X),
        ("positive", X),
    ]:
        cases[name] = ArrayAPICase(_unary(name), x)
    for name in ("abs", "floor", "ceil", "trunc", "round", "sign"):
        cases[name] = ArrayAPICase(
            lambda x, name=name: getattr(_xp(x), name)(x) * x, OFF_INTEGERS, holomorphic=False
        )
    for name in ("add", "subtract", "multiply", "divide", "pow", "atan2"):
        cases[name] = ArrayAPICase(_binary(name), POSITIVE, holomorphic=name != "atan2")
    for name in ("maximum", "minimum", "hypot", "copysign"):
        cases[name] = ArrayAPICase(_binary(name), X, holomorphic=False)
    cases["logaddexp"] = ArrayAPICase(_binary("logaddexp"), X, holomorphic=False)
    cases["clip"] = ArrayAPICase(lambda x: _xp(x).clip(x, -1.0, 1.0), X, holomorphic=False)
    cases["where"] = ArrayAPICase(lambda x: _xp(x).where(x > 0, x**2, -x), X, holomorphic=False)
    cases["real-imag-conj"] = ArrayAPICase(
        lambda x: _xp(x).real(x) + _xp(x).conj(x), X, holomorphic=False
    )
    elementwise = dict(cases)

    matrix = MATRIX
    for name in ("sum", "prod", "mean", "max", "min"):
        cases[name] = ArrayAPICase(
            lambda x, name=name: getattr(_xp(x), name)(x),
            matrix,
            holomorphic=name not in ("max", "min"),
        )
        cases[name + "-axis-keepdims"] = ArrayAPICase(
            lambda x, name=name: getattr(_xp(x), name)(x, axis=0, keepdims=True),
            matrix,
            holomorphic=name not in ("max", "min"),
        )
    cases["var-correction"] = ArrayAPICase(
        lambda x: _xp(x).var(x, axis=1, correction=1), matrix, holomorphic=False
    )
    cases["std"] = ArrayAPICase(
        lambda x: _xp(x).std(x, axis=(0, 1), keepdims=True), matrix, holomorphic=False
    )
    cases["cumulative_sum"] = ArrayAPICase(
        lambda x: _xp(x).cumulative_sum(x, axis=1, include_initial=True), matrix
    )
    cases["cumulative_prod"] = ArrayAPICase(lambda x: _xp(x).cumulative_prod(x, axis=0), matrix)

    cases["matmul"] = ArrayAPICase(lambda x: _xp(x).matmul(x, _xp(x).matrix_transpose(x)), matrix)
    cases["tensordot"] = ArrayAPICase(lambda x: _xp(x).tensordot(x, x, axes=1), matrix)
    cases["vecdot"] = ArrayAPICase(lambda x: _xp(x).vecdot(x, x * 2.0), matrix, holomorphic=False)
    cases["matrix_transpose"] = ArrayAPICase(lambda x: _xp(x).matrix_transpose(x) * x, matrix)
    cases["linalg.outer"] = ArrayAPICase(lambda x: _xp(x).linalg.outer(x, x), X)
    cases["linalg.cross"] = ArrayAPICase(
        lambda x: _xp(x).linalg.cross(x, _xp(x).flip(x) * 2.0), X[:3]
    )
    for name in ("det", "inv"):
        cases["linalg." + name] = ArrayAPICase(
            lambda x, name=name: getattr(_xp(x).linalg, name)(x), matrix
        )
    cases["linalg.slogdet"] = ArrayAPICase(
        lambda x: _xp(x).linalg.slogdet(x)[1], matrix, holomorphic=False
    )
    cases["linalg.solve"] = ArrayAPICase(lambda x: _xp(x).linalg.solve(x, x[0]), matrix)
    cases["linalg.cholesky"] = ArrayAPICase(
        lambda x: _xp(x).linalg.cholesky(_xp(x).matmul(x, _xp(x).matrix_transpose(x))),
        matrix,
        holomorphic=False,
    )
    cases["linalg.eigvalsh"] = ArrayAPICase(
        lambda x: _xp(x).linalg.eigvalsh(x + _xp(x).matrix_transpose(x)), matrix, holomorphic=False
    )
    cases["linalg.svdvals"] = ArrayAPICase(
        lambda x: _xp(x).linalg.svdvals(x), matrix, holomorphic=False
    )
    cases["linalg.trace"] = ArrayAPICase(lambda x: _xp(x).linalg.trace(x * x, offset=1), matrix)
    cases["linalg.diagonal"] = ArrayAPICase(lambda x: _xp(x).linalg.diagonal(x, offset=-1), matrix)
    cases["linalg.matrix_power"] = ArrayAPICase(lambda x: _xp(x).linalg.matrix_power(x, 3), matrix)
    for ord_ in (2, 1, 3, math.inf):
        cases[f"linalg.vector_norm-ord{ord_}"] = ArrayAPICase(
            lambda x, ord_=ord_: _xp(x).linalg.vector_norm(x, axis=-1, keepdims=True, ord=ord_),
            matrix,
            holomorphic=False,
        )
    for ord_ in ("fro", "nuc", 1, math.inf, 2):
        cases[f"linalg.matrix_norm-{ord_}"] = ArrayAPICase(
            lambda x, ord_=ord_: _xp(x).linalg.matrix_norm(x, ord=ord_), matrix, holomorphic=False
        )

    cases["concat"] = ArrayAPICase(lambda x: _xp(x).concat([x, x**2], axis=0), X)
    cases["concat-axis-None"] = ArrayAPICase(lambda x: _xp(x).concat([x, x[:1]], axis=None), matrix)
    cases["stack"] = ArrayAPICase(lambda x: _xp(x).stack([x, x**2], axis=1), X)
    cases["unstack"] = ArrayAPICase(lambda x: _xp(x).unstack(x, axis=1)[2] * 3.0, matrix)
    cases["reshape"] = ArrayAPICase(lambda x: _xp(x).reshape(x, (2, 2)) ** 2, X)
    cases["permute_dims"] = ArrayAPICase(
        lambda x: _xp(x).permute_dims(_xp(x).reshape(x, (1, 2, 3)), (2, 0, 1)), SIX
    )
    cases["expand_dims-squeeze"] = ArrayAPICase(
        lambda x: _xp(x).squeeze(_xp(x).expand_dims(x, axis=0), axis=0) ** 2, X
    )
    cases["moveaxis"] = ArrayAPICase(lambda x: _xp(x).moveaxis(x, 0, 1) * x, matrix)
    cases["flip"] = ArrayAPICase(lambda x: _xp(x).flip(x, axis=0) * x, matrix)
    cases["roll"] = ArrayAPICase(lambda x: _xp(x).roll(x, 1) * x, X)
    cases["broadcast_to"] = ArrayAPICase(lambda x: _xp(x).broadcast_to(x, (2, 4)) * 2.0, X)
    cases["broadcast_arrays"] = ArrayAPICase(
        lambda x: _xp(x).broadcast_arrays(x, x[:, None])[1] * x, X
    )
    cases["tile"] = ArrayAPICase(lambda x: _xp(x).tile(x, (2,)), X)
    cases["repeat"] = ArrayAPICase(lambda x: _xp(x).repeat(x, 2), X)
    cases["take"] = ArrayAPICase(
        lambda x: _xp(x).take(x, _xp(x).asarray([2, 0, 2]), axis=1), matrix
    )
    cases["sort"] = ArrayAPICase(lambda x: _xp(x).flip(_xp(x).sort(x)), X, holomorphic=False)
    cases["astype"] = ArrayAPICase(
        lambda x: _xp(x).astype(x, _xp(x).float64) ** 2, X, holomorphic=False
    )
    cases["zeros_like-ones_like"] = ArrayAPICase(
        lambda x: x * _xp(x).ones_like(x) + _xp(x).zeros_like(x), X
    )
    cases["asarray-of-arrays"] = ArrayAPICase(lambda x: _xp(x).asarray(x) * x, X)
    cases["tril-triu"] = ArrayAPICase(lambda x: _xp(x).tril(x) + 2.0 * _xp(x).triu(x, k=1), matrix)
    cases["indexing-slice"] = ArrayAPICase(lambda x: x[1:, ::2] * 2.0, matrix)
    cases["indexing-ellipsis-newaxis"] = ArrayAPICase(lambda x: x[..., None, 1] ** 2, matrix)
    cases["indexing-integer-array"] = ArrayAPICase(
        lambda x: x[_xp(x).asarray([2, 0])] ** 2,
        X,
        limit="indexing with an integer array (x[indices])",
    )
    cases["indexing-negative-step"] = ArrayAPICase(
        lambda x: x[::-1] * x, X, limit="slicing with a negative step (x[::-1])"
    )
    cases.update(_stacked_at_shapes(elementwise))
    cases.update(_stacks())
    return {
        case_id: dataclasses.replace(case, function=case.function or re.split("[-@]", case_id)[0])
        for case_id, case in cases.items()
    }


ARRAY_API_CASES = _build()

__all__ = [
    "ARRAY_API_CASES",
    "SHAPES",
    "ArrayAPICase",
    "applies",
    "check_array_api_case",
    "check_array_api_modes",
    "reference_jacobian",
]
