"""Regression probes: no result computed from state older than the call.

A prepared call of a backend with ``workers`` evaluates f as it is at the
call: a global, a closure cell or a model's attribute changed after
preparing is seen in worker processes too (f was pickled once, at
preparation, and the processes kept evaluating that copy). A same-point
preparation whose x or ``Constant`` array was changed in place refuses the
call with a :class:`~diffinterface.PreparationMismatchError` saying so
(some backends answered at the old values, others at the new ones). A
``jacobian_operator`` is the Jacobian at the x it was built at, whatever
happens to that array later: ``J.T`` stays ``J``'s adjoint (``J @ v`` was at
the old x and ``J.T @ u`` at the new one).

    >>> [probe.name for probe in probes()]
    ['workers_see_changed_f', 'same_point_changed_in_place', 'jacobian_operator_keeps_its_x']
"""

from __future__ import annotations

import numpy as np

from ...contexts import Constant
from ...errors import PreparationMismatchError
from ...families import array_namespace
from ...operators import (
    gradient,
    hvp,
    prepare_gradient,
    prepare_hvp_same_point,
    prepare_pullback_same_point,
    prepare_pushforward_same_point,
    pullback,
    pushforward,
)
from ..probes import BadInput
from .fresh_functions import _Model
from ..worker_scenarios import takes_workers, with_workers

X = np.array([0.5, -0.25, 1.0])


def _changing_functions():
    """``(what, loss, change)``: losses ``scale * sum(x**2)`` whose scale ``change(scale)`` sets."""
    state = {"scale": 1.0}

    def global_loss(x):
        xp = array_namespace(x)
        return state["scale"] * xp.sum(x**2)

    scale = 1.0

    def closure_loss(x):
        xp = array_namespace(x)
        return scale * xp.sum(x**2)

    def set_cell(value):
        nonlocal scale
        scale = value

    model = _Model()
    return (
        ("a global", global_loss, lambda value: state.update(scale=value)),
        ("a closure cell", closure_loss, set_cell),
        ("a model's attribute", model.loss, lambda value: setattr(model, "scale", value)),
    )


def _workers_see_changed_f(backend, problems, zero):
    if not takes_workers(backend):  # f runs in this process only
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    # one pool of one process for every change: each batch meets the copy of f it loaded before
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        selector = with_workers(backend, pool)
        for what, loss, change in _changing_functions():
            prep = prepare_gradient(loss, selector, X)
            for scale in (1.0, 3.0):
                change(scale)
                problems.expect_result(
                    f"gradient prepared with a process pool as workers, after {what} became {scale}",
                    lambda loss=loss, prep=prep: gradient(loss, selector, X, prep=prep),
                    2 * scale * X,
                    like=X,
                    zero=zero,
                )


def _vector(x, c):
    xp = array_namespace(x)
    return xp.asarray(c, dtype=x.dtype) * xp.sin(x)


def _scalar(x, c):
    xp = array_namespace(x)
    return xp.sum(xp.asarray(c, dtype=x.dtype) * x**3) / 3


#: (operator, prepare, call, f, seed, the result at x and c for seed)
_SAME_POINT = (
    (
        "pushforward",
        prepare_pushforward_same_point,
        pushforward,
        _vector,
        np.ones(3),
        lambda x, c, t: c * np.cos(x) * t,
    ),
    (
        "pullback",
        prepare_pullback_same_point,
        pullback,
        _vector,
        np.ones(3),
        lambda x, c, u: c * np.cos(x) * u,
    ),
    (
        "hvp",
        prepare_hvp_same_point,
        hvp,
        _scalar,
        np.ones(3),
        lambda x, c, t: 2 * c * x * t,
    ),
)


def _same_point_changed_in_place(backend, problems, zero):
    for name, prepare, call, f, seed, expected in _SAME_POINT:
        for changed in ("x", "Constant"):
            x, c = X.copy(), np.full(3, 2.0)
            prep = prepare(f, backend, x, (seed,), Constant(c))
            problems.expect_result(
                f"{name} of a same-point preparation, nothing changed",
                lambda: call(f, backend, x, (seed,), Constant(c), prep=prep)[0],
                expected(x, c, seed),
                like=x,
                zero=zero,
            )
            (x if changed == "x" else c)[1] += 1.0  # in place: the very object the preparation saw
            problems.expect_error(
                f"{name} of a same-point preparation after its {changed} changed in place",
                lambda: call(f, backend, x, (seed,), Constant(c), prep=prep),
                PreparationMismatchError,
                r"changed in place",
            )


def _jacobian_operator_keeps_its_x(backend, problems, zero):
    from ...scipy import jacobian_operator

    x = X.copy()
    J = jacobian_operator(lambda x: _vector(x, 2.0), backend, x)
    x[...] = [1.5, 0.75, -2.0]  # in place, after building: J is the Jacobian at the old x
    v, u = np.array([1.0, -2.0, 0.5]), np.array([0.25, 1.0, -1.0])
    at_built = np.diag(2.0 * np.cos(X))
    for what, product, expected in (
        ("J @ v", lambda: J @ v, at_built @ v),
        ("J.T @ u", lambda: J.T @ u, at_built.T @ u),
        ("J @ [v, v]", lambda: J @ np.stack([v, v], axis=1), at_built @ np.stack([v, v], axis=1)),
        ("J.T @ [u, u]", lambda: J.T @ np.stack([u, u], axis=1), at_built.T @ np.stack([u, u], 1)),
    ):
        problems.expect_result(
            f"jacobian_operator's {what} after x changed in place",
            product,
            expected,
            like=np.asarray(expected),
            zero=zero,
        )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "workers_see_changed_f",
            "a prepared call through worker processes evaluates f as it is at the call",
            _workers_see_changed_f,
        ),
        BadInput(
            "same_point_changed_in_place",
            "a same-point preparation refuses an x or a Constant array changed in place",
            _same_point_changed_in_place,
        ),
        BadInput(
            "jacobian_operator_keeps_its_x",
            "jacobian_operator: J @ v and J.T @ u at the x it was built at, after x changed",
            _jacobian_operator_keeps_its_x,
        ),
    ]
