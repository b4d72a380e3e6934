"""Regression probes: each array-API function differentiates in both modes, keeps x's dtype, or raises naming itself.

A fuzz campaign found autograd's forward rule of ``sort`` giving a wrong
shape and wrong values on 2-d inputs, its linalg functions raising a bare
``NotImplementedError: JVP of ... not defined`` in forward mode, float32 x
getting float64 derivatives through rules that promote (``maximum``,
``mean``, ``var``, ``max``, ``log2``...), a constant empty output refused as
a graph break. The probes state the contract on every backend:

- ``array-api-forward-rules``: pushforward and pullback of functions on
  2-d and 3-d inputs (sort, tile, roll, repeat, the linalg functions,
  ``linalg.solve`` with a constant matrix or right-hand side) are right, or
  refused by an error naming ``array_namespace(x).<function>`` and the way
  around it;
- ``array-api-float32``: gradient, pushforward and pullback of float32 x
  through promoting functions come back float32 (right to float32 accuracy);
- ``empty-constant-output``: ``derivative`` and ``jacobian`` of an empty
  output that does not depend on x are empty arrays, not a graph break;
- the probes at inputs where a rule's formula breaks (broadcast arguments,
  symmetric matrices, zeros, repeated indices) are :mod:`.array_api_special_inputs`.

The full sweep over every function and shape is :mod:`..array_api_cases`.

    >>> import diffinterface as di
    >>> from diffinterface.testing.probes import run_probes
    >>> run_probes(probes(), di.AutoAutograd()).found
    []
"""

from __future__ import annotations

import numpy as np

from ...families import array_namespace
from ...operators import derivative, gradient, jacobian, pullback, pushforward
from ..array_api_cases import MATRIX, STACK, ArrayAPICase, applies, reference_jacobian
from ..probes import BadInput
from ..tolerances import default_tolerances


def _xp(x):
    return array_namespace(x)


#: where autograd's forward rules were wrong or missing
FORWARD_RULES = (
    ArrayAPICase(lambda x: _xp(x).sort(x, axis=0), STACK[0], function="sort", holomorphic=False),
    ArrayAPICase(lambda x: _xp(x).tile(x, (2,)), STACK[0], function="tile"),
    ArrayAPICase(lambda x: _xp(x).roll(x, (1, 2), axis=(0, 2)) * x, STACK, function="roll"),
    ArrayAPICase(lambda x: _xp(x).repeat(x, 3) * x, np.array(0.7), function="repeat"),
    ArrayAPICase(lambda x: _xp(x).linalg.det(x), MATRIX, function="linalg.det"),
    ArrayAPICase(lambda x: _xp(x).linalg.inv(x), MATRIX, function="linalg.inv"),
    ArrayAPICase(
        lambda x: _xp(x).linalg.slogdet(x)[1], MATRIX, function="linalg.slogdet", holomorphic=False
    ),
    ArrayAPICase(lambda x: _xp(x).linalg.solve(x, x[0]), MATRIX, function="linalg.solve"),
    ArrayAPICase(
        lambda x: _xp(x).linalg.solve(_xp(x).asarray(MATRIX), x), MATRIX[0], function="linalg.solve"
    ),
    ArrayAPICase(
        lambda x: _xp(x).linalg.solve(x, _xp(x).asarray(MATRIX)),
        MATRIX + np.eye(3),
        function="linalg.solve",
    ),
    ArrayAPICase(
        lambda x: _xp(x).linalg.cholesky(_xp(x).matmul(x, _xp(x).matrix_transpose(x))),
        MATRIX,
        function="linalg.cholesky",
        holomorphic=False,
    ),
    ArrayAPICase(
        lambda x: _xp(x).linalg.eigvalsh(x + _xp(x).matrix_transpose(x)),
        MATRIX,
        function="linalg.eigvalsh",
        holomorphic=False,
    ),
    ArrayAPICase(
        lambda x: _xp(x).linalg.svdvals(x), STACK, function="linalg.svdvals", holomorphic=False
    ),
    ArrayAPICase(
        lambda x: _xp(x).linalg.matrix_power(x, -1), MATRIX, function="linalg.matrix_power"
    ),
)

#: functions of a scalar output through rules that promoted float32 to float64 (on autograd)
PROMOTING = (
    ArrayAPICase(
        lambda x: _xp(x).sum(_xp(x).maximum(x, x * 0.5 + 0.3)),
        MATRIX,
        function="maximum",
        holomorphic=False,
    ),
    ArrayAPICase(lambda x: _xp(x).mean(x * x), MATRIX, function="mean"),
    ArrayAPICase(lambda x: _xp(x).var(x), MATRIX, function="var", holomorphic=False),
    ArrayAPICase(lambda x: _xp(x).max(x * x), MATRIX, function="max", holomorphic=False),
    ArrayAPICase(lambda x: _xp(x).sum(_xp(x).log2(x * x + 1.0)), MATRIX, function="log2"),
    ArrayAPICase(
        lambda x: _xp(x).sum(_xp(x).copysign(x, x - 0.5)),
        MATRIX,
        function="copysign",
        holomorphic=False,
    ),
    ArrayAPICase(
        lambda x: _xp(x).sum(_xp(x).linalg.eigvalsh(x + _xp(x).matrix_transpose(x)) ** 2),
        MATRIX,
        function="linalg.eigvalsh",
        holomorphic=False,
    ),
    ArrayAPICase(
        lambda x: _xp(x).linalg.matrix_norm(x, ord=1),
        MATRIX,
        function="linalg.matrix_norm",
        holomorphic=False,
    ),
)


def _expect_or_refused(problems, what, function, call, expected, like, zero):
    """``call()`` returns ``expected`` like ``like``, or raises an error naming ``function`` and the way around it."""
    try:
        got = call()
    except NotImplementedError as raised:
        if f"array_namespace(x).{function}" not in str(raised) or "use " not in str(raised):
            problems.raised(
                f"{what}: refused without naming array_namespace(x).{function} and the way around it",
                raised,
            )
        return
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised(what, raised, f"a result or an error naming array_namespace(x).{function}")
        return
    problems.check_result(what, got, expected, like=like, zero=zero)


def _forward_rules(backend, problems, zero):
    rng = np.random.default_rng(0)
    for case in FORWARD_RULES:
        if not applies(backend, case):
            continue  # the complex step needs holomorphic functions
        function, f, x = case.function, case.f, case.x
        matrix = reference_jacobian(f, x)
        y_shape = matrix.shape[: matrix.ndim - x.ndim]
        matrix = matrix.reshape(-1, x.size)
        tangent, cotangent = rng.standard_normal(x.shape), rng.standard_normal(y_shape)
        pushed = (matrix @ tangent.reshape(-1)).reshape(y_shape)
        _expect_or_refused(
            problems,
            f"pushforward of {function} at shape {x.shape}",
            function,
            lambda: pushforward(f, backend, x, (tangent,))[0],
            pushed,
            np.zeros(y_shape),
            zero,
        )
        pulled = (cotangent.reshape(-1) @ matrix).reshape(x.shape)
        _expect_or_refused(
            problems,
            f"pullback of {function} at shape {x.shape}",
            function,
            lambda: pullback(f, backend, x, (cotangent,))[0],
            pulled,
            x,
            zero,
        )


def _float32(backend, problems, zero):
    rtol, atol = (max(a, b) for a, b in zip(default_tolerances(backend, "float32"), (2e-3, 2e-4)))
    for case in PROMOTING:
        if not applies(backend, case):
            continue
        function, f, x64 = case.function, case.f, case.x
        x = x64.astype(np.float32)
        expected = reference_jacobian(f, x64)
        tangent = np.ones_like(x)
        one = np.ones((), dtype=np.float32)
        calls = (
            ("gradient", lambda: gradient(f, backend, x), expected, x),
            (
                "pushforward",
                lambda: pushforward(f, backend, x, (tangent,))[0],
                np.asarray(np.sum(expected)),
                one,
            ),
            ("pullback", lambda: pullback(f, backend, x, (one,))[0], expected, x),
        )
        for operator, call, want, like in calls:
            problems.expect_result(
                f"{operator} of {function} at float32 x",
                call,
                want,
                like=like,
                zero=zero,
                rtol=rtol,
                atol=atol,
            )


def _empty_constant_output(backend, problems, zero):
    # DifferentiationInterfaceTest's empty scenario: f ignores x and returns an empty array
    def f(x):
        return _xp(x).zeros((0,), dtype=x.dtype)

    x = np.array(1.5)
    for operator in (derivative, jacobian):
        problems.expect_result(
            f"{operator.__name__} of an empty output that does not depend on x",
            lambda operator=operator: operator(f, backend, x),
            np.zeros(0),
            like=x,
            zero=zero,
        )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "array-api-forward-rules",
            "pushforward and pullback of array-API functions on 2-d and 3-d inputs "
            "(sort, tile, roll, repeat, linalg) are right or refused naming the function",
            _forward_rules,
        ),
        BadInput(
            "array-api-float32",
            "float32 x through functions whose rules promoted (maximum, mean, var, max, "
            "log2, copysign, eigvalsh, matrix_norm) gets float32 derivatives in both modes",
            _float32,
        ),
        BadInput(
            "empty-constant-output",
            "derivative and jacobian of an empty output that ignores x are empty "
            "arrays, not a graph break",
            _empty_constant_output,
        ),
    ]
