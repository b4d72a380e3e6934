"""Regression probes: array-API rules at inputs where their formulas break, right on every backend.

The fuzz suite and users found rules that hold for generic inputs only:

- ``array-api-broadcast-argument``: ``hypot``'s reverse rule did not sum a
  broadcast argument's cotangent (autograd's Hessian came out wrong);
- ``array-api-symmetric-matrix``: ``cholesky`` and ``eigh`` of a symmetric
  x, pushed forward along a non-symmetric tangent and pulled back, give
  the same derivative (``<u, J t> = <J^T u, t>``): autograd's and torch's
  forward rules used the whole tangent where their reverse rules read the
  symmetric part, so a pushforward disagreed with the pullback of the same
  function (their namespaces now read ``(x + x.T) / 2``, as JAX's does);
- ``array-api-prod-with-zeros``: the Jacobian and Hessian through ``prod``
  and the gradient through ``cumulative_prod`` of rows holding one and two
  zeros are right (autograd's ``prod`` and TensorFlow's ``cumprod`` divide
  by each factor: NaN on autograd, silently wrong values on TensorFlow);
- ``array-api-take-gradient``: the gradient and Hessian through ``take``
  with repeated indices are dense arrays of x's shape (TensorFlow's
  gradient of a gather is an ``IndexedSlices``, which a result refused).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ...families import array_namespace
from ...operators import gradient, hessian, jacobian, pullback, pushforward
from ..array_api_cases import ARRAY_API_CASES, MATRIX, applies
from ..array_api_checks import refused_by_name
from ..probes import BadInput


def _xp(x):
    return array_namespace(x)


#: hypot is not holomorphic: complex steps do not apply
_NOT_HOLOMORPHIC = SimpleNamespace(holomorphic=False)


def _broadcast_hypot(x):
    xp = _xp(x)
    return xp.sum(xp.sin(xp.hypot(xp.stack([x, x], axis=0), x)))  # x of shape (3,) against (2, 3)


def _broadcast_argument(backend, problems, zero):
    # hypot's reverse rule did not sum a broadcast argument's cotangent: autograd's Hessian came out
    # wrong (found by the fuzz suite). At x > 0, hypot(x, x) = sqrt(2) x, so g(x) = 2
    # sum(sin(sqrt(2) x)).
    if not applies(backend, _NOT_HOLOMORPHIC):
        return
    x = np.array([0.4, 0.9, 1.3])
    r = np.sqrt(2.0)
    problems.expect_result(
        "gradient through hypot with a broadcast argument",
        lambda: gradient(_broadcast_hypot, backend, x),
        2 * r * np.cos(r * x),
        like=x,
        zero=zero,
    )
    problems.expect_result(
        "hessian through hypot with a broadcast argument",
        lambda: hessian(_broadcast_hypot, backend, x),
        np.diag(-4 * np.sin(r * x)),
        like=x,
        zero=zero,
        rtol=1e-3,
        atol=1e-4,
    )


#: functions of a symmetric matrix; eigenvectors enter squared (their signs are arbitrary)
SYMMETRIC_MATRIX = (
    ("linalg.cholesky", lambda x: _xp(x).linalg.cholesky(x)),
    ("linalg.eigh", lambda x: _xp(x).linalg.eigh(x)[1][:, :2] ** 2 * _xp(x).linalg.eigh(x)[0][1]),
    ("linalg.eigvalsh", lambda x: _xp(x).linalg.eigvalsh(x)),
)


def _symmetric_matrix(backend, problems, zero):
    if zero or not applies(backend, _NOT_HOLOMORPHIC):
        return
    rng = np.random.default_rng(1)
    x = MATRIX @ MATRIX.T + 3 * np.eye(3)
    tangent = rng.standard_normal(x.shape)
    for function, f in SYMMETRIC_MATRIX:
        cotangent = rng.standard_normal(np.shape(f(x)))
        try:
            pushed = np.asarray(pushforward(f, backend, x, (tangent,))[0])
            pulled = np.asarray(pullback(f, backend, x, (cotangent,))[0])
        except ValueError as raised:
            # the limit the sweep's case of the function declares may refuse it, by name
            if not refused_by_name(raised, ARRAY_API_CASES[function]):
                problems.raised(
                    f"pushforward and pullback of {function} of a symmetric matrix", raised
                )
            continue
        except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
            problems.raised(f"pushforward and pullback of {function} of a symmetric matrix", raised)
            continue
        problems.check_result(
            f"<u, pushforward(t)> against <pullback(u), t> for {function} of a symmetric "
            "matrix along a non-symmetric tangent",
            np.sum(cotangent * pushed),
            np.sum(pulled * tangent),
            like=np.float64(0.0),
            rtol=1e-5,
            atol=1e-7,
        )


#: rows with no zero, one zero and two zeros
_ROWS_WITH_ZEROS = np.array([[1.1, -0.7, 0.9], [0.0, 0.8, 1.3], [0.5, 0.0, 0.0]])


def _products_of_the_others(row, skipped):
    return np.prod([v for k, v in enumerate(row) if k not in skipped])


def _prod_with_zeros(backend, problems, zero):
    x = _ROWS_WITH_ZEROS
    rows, n = x.shape
    products = np.prod(x, axis=1)
    jacobian_expected = np.zeros((rows, rows, n))
    hessian_expected = np.zeros((rows, n, rows, n))
    for r in range(rows):
        first = np.array([_products_of_the_others(x[r], {j}) for j in range(n)])
        jacobian_expected[r, r] = first
        second = np.array(
            [
                [0.0 if j == k else _products_of_the_others(x[r], {j, k}) for k in range(n)]
                for j in range(n)
            ]
        )
        hessian_expected[r, :, r, :] = (
            -np.sin(products[r]) * np.outer(first, first) + np.cos(products[r]) * second
        )
    problems.expect_result(
        "jacobian through prod of rows holding zeros",
        lambda: jacobian(lambda x: _xp(x).prod(x, axis=1), backend, x),
        jacobian_expected,
        like=x,
        zero=zero,
    )
    problems.expect_result(
        "hessian through prod of rows holding zeros",
        lambda: hessian(lambda x: _xp(x).sum(_xp(x).sin(_xp(x).prod(x, axis=1))), backend, x),
        hessian_expected,
        like=x,
        zero=zero,
        rtol=1e-3,
        atol=1e-4,
    )
    # d/dx_j of sum_k prod_{i <= k} x_i is the sum over k >= j of the products of the others up to k
    gradient_expected = np.array(
        [
            [sum(_products_of_the_others(row[: k + 1], {j}) for k in range(j, n)) for j in range(n)]
            for row in x
        ]
    )
    problems.expect_result(
        "gradient through cumulative_prod of rows holding zeros",
        lambda: gradient(lambda x: _xp(x).sum(_xp(x).cumulative_prod(x, axis=1)), backend, x),
        gradient_expected,
        like=x,
        zero=zero,
    )


def _take_gradient(backend, problems, zero):
    x = np.array([[0.74, 0.3], [0.1, -0.2]])
    weights = np.array([[2.0], [1.0]])  # row 0 is taken twice, row 1 once

    def g(x):
        xp = _xp(x)
        return xp.sum(xp.sin(xp.take(x, xp.asarray([0, 0, 1]), axis=0)))

    problems.expect_result(
        "gradient through take with repeated indices",
        lambda: gradient(g, backend, x),
        weights * np.cos(x),
        like=x,
        zero=zero,
    )
    problems.expect_result(
        "hessian through take with repeated indices",
        lambda: hessian(g, backend, x),
        np.diag((-weights * np.sin(x)).reshape(-1)).reshape(2, 2, 2, 2),
        like=x,
        zero=zero,
        rtol=1e-3,
        atol=1e-4,
    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "array-api-broadcast-argument",
            "gradient and Hessian through hypot with a broadcast argument",
            _broadcast_argument,
        ),
        BadInput(
            "array-api-symmetric-matrix",
            "cholesky and eigh of a symmetric matrix: pushforward along a "
            "non-symmetric tangent agrees with the pullback",
            _symmetric_matrix,
        ),
        BadInput(
            "array-api-prod-with-zeros",
            "the Jacobian and Hessian through prod, the gradient through "
            "cumulative_prod, of rows holding zeros are right",
            _prod_with_zeros,
        ),
        BadInput(
            "array-api-take-gradient",
            "the gradient and Hessian through take with repeated indices are dense "
            "arrays of x's shape",
            _take_gradient,
        ),
    ]
