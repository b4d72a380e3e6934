"""Regression probes: numpy results are writable arrays the user owns, and every result goes back as ``out=``.

Numpy in, numpy out: each operator's result at a numpy x is a writable
``np.ndarray`` sharing no memory with x (AutoJAX handed out read-only views
of its buffers), and passing it back as ``out=`` fills it, sparse results of
``AutoSparse(backend)`` included. A ``di.Cache`` that f writes into works on a
backend that writes into buffers (``check_inplace(backend)``, and its adapter's
``capabilities.writes_cache``), and is refused elsewhere by an error naming the Cache and
why the backend cannot write into it.

    >>> [probe.name for probe in probes()]
    ['numpy_results_owned', 'sparse_results_as_out', 'cache_written_in_f']
"""

from __future__ import annotations

import numpy as np

from ...contexts import Cache
from ...core import check_inplace, get_adapter
from ...errors import DifferentiationError, UnsupportedError
from ...families import array_namespace
from ...operators import (
    derivative,
    gradient,
    hessian,
    hvp,
    jacobian,
    prepare_hessian,
    prepare_jacobian,
    pullback,
    pushforward,
    second_derivative,
)
from ...wrappers import AutoSparse
from ..probes import BadInput

X = np.array([0.5, -0.25, 1.0, 0.75])
T = (np.array([1.0, 0.5, -1.0, 2.0]),)


def _scalar(x):
    xp = array_namespace(x)
    return xp.sum(xp.sin(x) * x)


def _vector(x):
    xp = array_namespace(x)
    return xp.sin(x[1:]) * x[:-1]


def _curve(s):
    xp = array_namespace(s)
    return xp.stack([xp.sin(s), s**2, s**3])


def _hessian_of_scalar(x):
    return np.diag(2 * np.cos(x) - x * np.sin(x))


def _jacobian_of_vector(x):
    n = x.size
    jac = np.zeros((n - 1, n))
    jac[np.arange(n - 1), np.arange(1, n)] = np.cos(x[1:]) * x[:-1]
    jac[np.arange(n - 1), np.arange(n - 1)] = np.sin(x[1:])
    return jac


def _owned(problems, what, got, x):
    """Record a problem unless ``got`` is a writable numpy array sharing no memory with ``x``."""
    if not isinstance(got, np.ndarray):
        problems.found.append(
            f"{what}: expected a numpy array for a numpy x; got {type(got).__name__}"
        )
        return False
    if not got.flags.writeable:
        problems.found.append(
            f"{what}: the numpy result is read-only (numpy in, numpy out: writable)"
        )
        return False
    if np.shares_memory(got, x):
        problems.found.append(f"{what}: the result shares memory with x")
        return False
    return True


def _numpy_results_owned(backend, problems, zero):
    s = 0.3
    cases = (
        ("gradient", lambda **out: gradient(_scalar, backend, X, **out), np.sin(X) + X * np.cos(X)),
        ("jacobian", lambda **out: jacobian(_vector, backend, X, **out), _jacobian_of_vector(X)),
        ("hessian", lambda **out: hessian(_scalar, backend, X, **out), _hessian_of_scalar(X)),
        ("hvp", lambda **out: hvp(_scalar, backend, X, T, **out)[0], _hessian_of_scalar(X) @ T[0]),
        (
            "pushforward",
            lambda **out: pushforward(_vector, backend, X, T, **out)[0],
            _jacobian_of_vector(X) @ T[0],
        ),
        (
            "pullback",
            lambda **out: pullback(_vector, backend, X, (T[0][:3],), **out)[0],
            T[0][:3] @ _jacobian_of_vector(X),
        ),
        (
            "derivative",
            lambda **out: derivative(_curve, backend, s, **out),
            np.array([np.cos(s), 2 * s, 3 * s**2]),
        ),
        (
            "second_derivative",
            lambda **out: second_derivative(_curve, backend, s, **out),
            np.array([-np.sin(s), 2.0, 6 * s]),
        ),
    )
    for name, call, expected in cases:
        got = problems.expect_result(f"{name} at a numpy x", call, expected, like=X, zero=zero)
        if got is None or not _owned(problems, name, got, X):
            continue
        got[...] = np.nan
        if name in ("hvp", "pushforward", "pullback"):
            out = {"out": (got,)}
        else:
            out = {"out": got}
        problems.expect_result(
            f"{name} passed back as out=", lambda: call(**out), expected, like=X, zero=zero
        )


def _sparse_results_as_out(backend, problems, zero):
    sparse = AutoSparse(backend)
    for name, f, prepare, call, expected in (
        ("jacobian", _vector, prepare_jacobian, jacobian, _jacobian_of_vector(X)),
        ("hessian", _scalar, prepare_hessian, hessian, _hessian_of_scalar(X)),
    ):
        for prepared in (False, True):
            what = f"{'prepared ' if prepared else ''}AutoSparse {name}"
            prep = prepare(f, sparse, X) if prepared else None
            try:
                result = call(f, sparse, X, prep=prep)
                filled = call(f, sparse, X, prep=prep, out=result)
            except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
                problems.found.append(
                    f"{what} passed back as out=: {type(error).__name__}: {str(error)[:300]}"
                )
                continue
            if filled is not result:
                problems.found.append(
                    f"{what} passed back as out=: returned another object than out"
                )
            values = getattr(result, "toarray", lambda: result)()
            if not zero and not np.allclose(values, expected, rtol=1e-4, atol=1e-6):
                problems.found.append(
                    f"{what} passed back as out=: wrong values {values!r}, expected {expected!r}"
                )


def _writes_cache(x, cache):
    cache[...] = 2 * x  # scratch space: a value computed from x, written in place
    xp = array_namespace(x)
    return xp.sum(x**2)


def _cache_written_in_f(backend, problems, zero):
    cache = np.zeros(X.shape)
    call = lambda: gradient(_writes_cache, backend, X, Cache(cache))  # noqa: E731
    if check_inplace(backend) and get_adapter(backend).capabilities.writes_cache:
        problems.expect_result(
            "gradient of f writing into a di.Cache", call, 2 * X, like=X, zero=zero
        )
    else:
        problems.expect_error(
            "gradient of f writing into a di.Cache (the backend cannot write into buffers)",
            call,
            (UnsupportedError, DifferentiationError),
            r"contexts(\[0\])?: [\s\S]*di\.Cache",
            unchanged=(X,),
        )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "numpy_results_owned",
            "every operator's numpy result is writable, x's own, and works as out=",
            _numpy_results_owned,
        ),
        BadInput(
            "sparse_results_as_out",
            "AutoSparse(backend) results passed back as out=",
            _sparse_results_as_out,
        ),
        BadInput(
            "cache_written_in_f",
            "f writing into a di.Cache: the derivative, or a refusal naming the Cache",
            _cache_written_in_f,
        ),
    ]
