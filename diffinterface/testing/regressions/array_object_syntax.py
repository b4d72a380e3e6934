"""Regression probes: one-source functions written with the array object's own syntax, ``x.T``, ``x.mT`` and ``@``.

The array API standard puts ``x.T`` (2-d), ``x.mT`` (stacks of matrices) and
``a @ b`` (1-d operands too) on the array itself, so a one-source function
may write ``x.T @ w`` instead of ``xp.matmul(xp.matrix_transpose(x), w)``.
TensorFlow's tensors had none of them (every matrix-input function written so
failed at preparation on every TensorFlow mode). Each probe differentiates
such a function of matrix inputs (to a vector, to a matrix, with a
``Constant`` matrix, on a stack of matrices) and checks the Jacobian, two
pushforwards, two pullbacks and the Hessian of a scalar function of the same
syntax against formulas, and the gradient through ``+x``. A framework whose
arrays lack ``x.mT`` or ``+x`` inside f (an array family's declared limit) must
refuse with a ValueError naming it and its replacement (``xp.matrix_transpose``,
``xp.positive``).

    >>> import diffinterface as di
    >>> from diffinterface.testing.probes import run_probes
    >>> run_probes(probes(), di.AutoJAX()).found
    []
"""

from __future__ import annotations

import numpy as np

from ...contexts import Constant
from ...families import array_namespace
from ...operators import gradient, hessian, jacobian, prepare_jacobian, pullback
from ..probes import BadInput
from ..tolerances import default_tolerances
from ._sweeps import expect_right_sweeps

X = np.array([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]])
#: a stack of two matrices like X
STACK = np.stack([X, -0.5 * X[::-1]])
W = np.array([0.5, -2.0])
V = np.array([1.5, -0.5, 0.25])
#: the Constant of the probe with contexts: (4, 3), multiplied by x.T
A = np.arange(12.0).reshape(4, 3) / 6 - 1


def _eye(n):
    return np.eye(n)


# -- the functions, each with its formulas ---------------------------------------------------------


def sines_to_vector(x):
    """``sin(x).T @ w``: a (3,) vector; ``y[j] = sum_i w[i] sin(x[i, j])``."""
    xp = array_namespace(x)
    return xp.sin(x).T @ xp.asarray(W, dtype=x.dtype)


def _sines_to_vector_jacobian(x):
    return np.einsum("jl,k,kl->jkl", _eye(x.shape[1]), W, np.cos(x))


def gram(x):
    """``x.T @ x``: the Gram matrix of x's columns, (3, 3)."""
    return x.T @ x


def _gram_jacobian(x):
    n = x.shape[1]
    # d(x[:, a] . x[:, b]) / dx[i, j] = [b == j] x[i, a] + [a == j] x[i, b]
    return np.einsum("bj,ia->abij", _eye(n), x) + np.einsum("aj,ib->abij", _eye(n), x)


def quadratic(x):
    """``(v @ (x.T @ x) @ v) / 2`` with a 1-d v: ``|x v|^2 / 2``; its Hessian is ``[i == k] v[j] v[l]``."""
    xp = array_namespace(x)
    v = xp.asarray(V, dtype=x.dtype)
    return v @ (x.T @ x) @ v / 2


def _quadratic_hessian(x):
    return np.einsum("ik,j,l->ijkl", _eye(x.shape[0]), V, V)


def sum_of_sines(x):
    """``sum(sin(x).T @ w)``; its Hessian is diagonal, ``-w[i] sin(x[i, j])``."""
    xp = array_namespace(x)
    return xp.sum(sines_to_vector(x))


def _sum_of_sines_hessian(x):
    rows, cols = x.shape
    return np.einsum("ik,jl,ij->ijkl", _eye(rows), _eye(cols), -W[:, None] * np.sin(x))


def batched_gram(x):
    """``x.mT @ x`` on a stack of matrices: one (3, 3) Gram matrix each."""
    return x.mT @ x


def _batched_gram_jacobian(x):
    eye = np.eye(len(x))
    return np.stack(
        [np.einsum("m,abij->abmij", eye[n], _gram_jacobian(x[n])) for n in range(len(x))]
    )


def batched_quadratic(x):
    """``sum((x @ v)**2) / 2`` over a stack of matrices: a 1-d v on the right of a stack."""
    xp = array_namespace(x)
    return xp.sum((x @ xp.asarray(V, dtype=x.dtype)) ** 2) / 2


def _batched_quadratic_hessian(x):
    stack, rows, _ = x.shape
    return np.einsum("nm,ik,j,l->nijmkl", _eye(stack), _eye(rows), V, V)


def with_constant(x, a):
    """``a @ x.T`` with a Constant (4, 3) matrix a: (4, 2)."""
    xp = array_namespace(x)
    return xp.asarray(a, dtype=x.dtype) @ x.T


def _with_constant_jacobian(x):
    # y[p, b] = sum_c a[p, c] x[b, c]
    return np.einsum("bi,pj->pbij", _eye(x.shape[0]), A)


def scalar_with_constant(x, a):
    """``sum((a @ x.T) ** 2) / 2``; its Hessian is ``[i == k] (a.T a)[j, l]``."""
    xp = array_namespace(x)
    return xp.sum(with_constant(x, a) ** 2) / 2


def _scalar_with_constant_hessian(x):
    return np.einsum("ik,jl->ijkl", _eye(x.shape[0]), A.T @ A)


def plus_times_x(x):
    """``sum(+x.T * x.T)``: the array API's unary plus; its gradient is ``2 x``."""
    xp = array_namespace(x)
    return xp.sum(+x.T * x.T)


# -- the probes ------------------------------------------------------------------------------------


def _tolerances(backend):
    def tolerances(order, expected):
        rtol, atol = default_tolerances(backend, "float64", order)
        return {"rtol": rtol, "atol": atol}

    return tolerances


def _refused_by_name(backend, f, x):
    """True when ``backend`` refuses f with the ValueError naming ``x.mT`` and its replacement (a
    declared limit of its arrays); any other error is left for the sweeps to report."""
    try:
        jacobian(f, backend, x)
    except ValueError as error:
        return "x.mT" in str(error) and "xp.matrix_transpose" in str(error)
    except Exception:  # noqa: BLE001 - reported by the sweeps, which call f again
        return False
    return False


def _seeds(shape, n=2):
    rng = np.random.default_rng(len(shape))
    return tuple(rng.normal(size=shape) for _ in range(n))


def _sweeps(name, f, x, expected_jacobian, scalar_f, expected_hessian, *, with_mT=False):
    """The probe of f and scalar_f; ``with_mT``: they use ``x.mT``, which a framework may refuse by name."""

    def probe(backend, problems, zero):
        if with_mT and _refused_by_name(backend, f, x):
            return
        expect_right_sweeps(
            problems,
            backend,
            zero,
            f=f,
            x=x,
            expected_jacobian=expected_jacobian,
            tangents=_seeds(x.shape),
            cotangents=_seeds(expected_jacobian.shape[: expected_jacobian.ndim - x.ndim]),
            scalar_f=scalar_f,
            expected_hessian=expected_hessian,
            through=f"through {name}",
            tolerances=_tolerances(backend),
        )
        problems.expect_result(
            f"prepared jacobian through {name}",
            lambda: jacobian(f, backend, x, prep=prepare_jacobian(f, backend, x)),
            expected_jacobian,
            like=x,
            zero=zero,
            **_tolerances(backend)(1, expected_jacobian),
        )

    return probe


def _with_constant(backend, problems, zero):
    c = Constant(A)
    tolerances = _tolerances(backend)
    expected = _with_constant_jacobian(X)
    (u,) = _seeds((4, 2), 1)
    cases = (
        ("jacobian", lambda: jacobian(with_constant, backend, X, c), expected, 1),
        (
            "prepared jacobian",
            lambda: jacobian(
                with_constant, backend, X, c, prep=prepare_jacobian(with_constant, backend, X, c)
            ),
            expected,
            1,
        ),
        (
            "pullback",
            lambda: pullback(with_constant, backend, X, (u,), c)[0],
            np.einsum("pb,pbij->ij", u, expected),
            1,
        ),
        (
            "hessian",
            lambda: hessian(scalar_with_constant, backend, X, c),
            _scalar_with_constant_hessian(X),
            2,
        ),
    )
    for what, call, want, order in cases:
        problems.expect_result(
            f"{what} through a @ x.T with a Constant a",
            call,
            want,
            like=X,
            zero=zero,
            **tolerances(order, want),
        )


def _unary_plus(backend, problems, zero):
    try:
        jacobian(plus_times_x, backend, X)
    except ValueError as error:
        if "+x" in str(error) and "xp.positive" in str(error):
            return  # a declared limit of the framework's arrays, named with its replacement
    except Exception:  # noqa: BLE001 - reported by the call below, which raises it again
        pass
    problems.expect_result(
        "gradient through +x.T",
        lambda: gradient(plus_times_x, backend, X),
        2 * X,
        like=X,
        zero=zero,
        **_tolerances(backend)(1, X),
    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "array_object_matrix_to_vector",
            "sin(x).T @ w and v @ (x.T @ x) @ v at a matrix x: Jacobian, pushforwards, pullbacks, Hessian",
            _sweeps(
                "sin(x).T @ w",
                sines_to_vector,
                X,
                _sines_to_vector_jacobian(X),
                quadratic,
                _quadratic_hessian(X),
            ),
        ),
        BadInput(
            "array_object_matrix_to_matrix",
            "x.T @ x and sum(sin(x).T @ w) at a matrix x: Jacobian, pushforwards, pullbacks, Hessian",
            _sweeps("x.T @ x", gram, X, _gram_jacobian(X), sum_of_sines, _sum_of_sines_hessian(X)),
        ),
        BadInput(
            "array_object_with_constant",
            "a @ x.T with a Constant matrix a: Jacobian (prepared too), pullback, Hessian",
            _with_constant,
        ),
        BadInput(
            "array_object_unary_plus",
            "+x.T: the gradient, or a refusal naming +x and xp.positive",
            _unary_plus,
        ),
        BadInput(
            "array_object_batched",
            "x.mT @ x and (x @ v) on a stack of matrices: Jacobian, pushforwards, pullbacks, Hessian",
            _sweeps(
                "x.mT @ x on a stack",
                batched_gram,
                STACK,
                _batched_gram_jacobian(STACK),
                batched_quadratic,
                _batched_quadratic_hessian(STACK),
                with_mT=True,
            ),
        ),
    ]
