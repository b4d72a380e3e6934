"""Scenarios for functions that write into buffers: a ``di.Cache`` context, or ``f(y, x)`` with partial writes.

Frameworks that trace functionally (``torch.func``'s ``vmap`` and ``jvp``,
JAX) refuse writes into a tensor the function did not create, or batch them
wrongly; these scenarios run every operator over such functions with batches
of three tangents, so a backend that differentiates them must do so for a
batch as well as for one tangent. Backends that cannot differentiate
functions writing into buffers declare it (``check_inplace(backend)`` is
False) and their cases are left out with that reason.

The Cache holds scratch values of f (here ``sin(x)``); its content after a
call does not matter and is not checked, while x, the tangents and the
Constants must stay unchanged as everywhere in the kit.

    >>> from diffinterface.testing.buffer_scenarios import buffer_scenarios
    >>> sorted({s.operator for s in buffer_scenarios()})
    ['gradient', 'jacobian', 'pullback', 'pushforward']
    >>> buffer_scenarios()[0].name
    'pushforward-cache_context-batched3-float64'
"""

from __future__ import annotations

import numpy as np

from ..families import array_namespace
from .scenario import Scenario, _contract_x, _contract_y, _tangent, _x


def _writes_sin_into_cache(x):
    """f(x, c) = M @ (c * x) after c <- sin(x): the Jacobian goes through the buffer."""
    n = x.shape[0]
    M = np.asarray((np.arange(4 * n).reshape(4, n) % 3 - 0.5) / 2.0, dtype=x.dtype)

    def f(x, cache):
        xp = array_namespace(x)
        cache[...] = xp.sin(x)
        return xp.matmul(xp.asarray(M), cache * x)

    value = M @ (np.sin(x) * x)
    jac = M * (np.cos(x) * x + np.sin(x))[None, :]
    return f, value, jac


def _scalar_through_cache(x):
    """f(x, c) = sum(c * x**2) after c <- sin(x), with its gradient and Hessian."""

    def f(x, cache):
        xp = array_namespace(x)
        cache[...] = xp.sin(x)
        return xp.sum(cache * x**2)

    value = np.sum(np.sin(x) * x**2)
    grad = np.cos(x) * x**2 + 2 * x * np.sin(x)
    hess = np.diag(-np.sin(x) * x**2 + 4 * x * np.cos(x) + 2 * np.sin(x))
    return f, value, grad, hess


def _writes_y_in_parts(x):
    """f(y, x): y[0] = x[0]**2, y[1:] = x[0] * x[1:] (y is zeroed first, element writes after)."""

    def f(y, x):
        y[...] = 0.0
        y[0] = x[0] ** 2
        y[1:] = x[0] * x[1:]

    value = np.concatenate([[x[0] ** 2], x[0] * x[1:]])
    jac = np.diag(np.full(x.shape[0], x[0]))
    jac[:, 0] = np.concatenate([[2 * x[0]], x[1:]])
    return f, value, jac


def _three(shape, dtype, seed):
    return tuple(_tangent(shape, dtype, seed + i) for i in range(3))


def _cache(like):
    from ..contexts import Cache

    return (Cache(np.zeros_like(like)),)


def _pushforward_pullback_jacobian(
    f, x, value, jac, tangents, cotangents, what, *, y=None, cache=False
):
    """The pushforward (along ``tangents``), pullback (of ``cotangents``) and jacobian scenarios.

    Each is named ``<operator>-<what>[-batched3]-<dtype>``. With ``cache`` each scenario gets a
    Cache of its own, so that none starts from another's scratch values; ``y`` makes f two-argument.
    """
    dtype = x.dtype.name

    def scenario(operator, seeds, first, batch):
        return Scenario(
            operator,
            f,
            x,
            y=y,
            tangents=seeds,
            contexts=_cache(x) if cache else (),
            value=value,
            first=first,
            name=f"{operator}-{what}{batch}-{dtype}",
        )

    return [
        scenario(
            "pushforward", tangents, tuple(_contract_x(jac, t, 1) for t in tangents), "-batched3"
        ),
        scenario(
            "pullback", cotangents, tuple(_contract_y(jac, c, 1) for c in cotangents), "-batched3"
        ),
        scenario("jacobian", None, jac, ""),
    ]


def buffer_scenarios():
    """First-order scenarios over a Cache context and a partially written ``y``, batches of three tangents."""
    x = _x((3,), "float64")
    f, value, jac = _writes_sin_into_cache(x)
    ts = _three(x.shape, x.dtype, 20)
    cs = _three(value.shape, x.dtype, 23)
    scenarios = _pushforward_pullback_jacobian(
        f, x, value, jac, ts, cs, "cache_context", cache=True
    )
    xv = _x((4,), "float32")
    f, value, grad, _ = _scalar_through_cache(xv)
    scenarios.append(
        Scenario(
            "gradient",
            f,
            xv,
            contexts=_cache(xv),
            value=np.float32(value),
            first=grad.astype("float32"),
            name="gradient-cache_context-float32",
        )
    )
    f, value, jac = _writes_y_in_parts(x)
    cs = _three(value.shape, x.dtype, 29)
    return scenarios + _pushforward_pullback_jacobian(
        f, x, value, jac, ts, cs, "two_argument_partial_writes", y=np.zeros(3)
    )


def buffer_second_order_scenarios():
    """hvp (three tangents) and hessian of a scalar function that writes into a Cache.

    >>> [s.name for s in buffer_second_order_scenarios()]
    ['hvp-cache_context-batched3-float64', 'hessian-cache_context-float64']
    """
    x = _x((3,), "float64")
    f, value, grad, hess = _scalar_through_cache(x)
    ts = _three(x.shape, x.dtype, 26)
    return [
        Scenario(
            "hvp",
            f,
            x,
            tangents=ts,
            contexts=_cache(x),
            value=np.float64(value),
            first=grad,
            second=tuple(hess @ t for t in ts),
            name="hvp-cache_context-batched3-float64",
        ),
        Scenario(
            "hessian",
            f,
            x,
            contexts=_cache(x),
            value=np.float64(value),
            first=grad,
            second=hess,
            name="hessian-cache_context-float64",
        ),
    ]
