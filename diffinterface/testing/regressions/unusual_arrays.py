"""Regression probes: see :mod:`diffinterface.testing.regressions`.

Arrays that are not plain contiguous buffers, in and out, differentiate like
any other and are never modified: numpy arrays with negative strides
(``a[::-1]``) and broadcast (stride-0, read-only) ones as x, tangents,
``Constant`` values and pytree leaves; tensors made under
``torch.inference_mode()`` and expanded tensors as x and tangents (where the
backend takes torch tensors). Unusual functions are :mod:`.unusual_functions`.
"""

from __future__ import annotations

import numpy as np

from ...contexts import Constant
from ...core import get_adapter
from ...families import array_namespace
from ...operators import (
    gradient,
    hessian,
    jacobian,
    pullback,
    pushforward,
)
from ..probes import BadInput

X = np.array([0.5, 2.0, 3.0])
W = np.array([1.0, -2.0, 0.5])


def _reversed(a):
    """A view of a reversed copy of ``a``: values of ``a``, negative strides."""
    return np.ascontiguousarray(a[::-1])[::-1]


def _weighted_squares(x, w):
    xp = array_namespace(x)
    return xp.sum(w * x**2)


def _squares(x):
    return x**2


def _negative_strides(backend, problems, zero):
    x, w, t = _reversed(X), _reversed(W), _reversed(np.ones(3))
    unchanged = [np.array(a, copy=True) for a in (x, w, t)]
    problems.expect_results(
        {
            "gradient at an x with negative strides": (
                lambda: gradient(_weighted_squares, backend, x, Constant(W)),
                2 * W * X,
            ),
            "gradient with a Constant with negative strides": (
                lambda: gradient(_weighted_squares, backend, X, Constant(w)),
                2 * W * X,
            ),
            "pushforward along a tangent with negative strides": (
                lambda: pushforward(_squares, backend, X, (t,))[0],
                2 * X,
            ),
            "pullback of a cotangent with negative strides": (
                lambda: pullback(_squares, backend, X, (t,))[0],
                2 * X,
            ),
        },
        like=X,
        zero=zero,
    )
    got = None
    try:
        got = gradient(lambda p: _weighted_squares(p["a"], p["w"]), backend, {"a": x, "w": w})
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised("gradient at a dict of leaves with negative strides", raised)
    if got is not None:
        problems.check_result(
            "gradient at a dict of leaves with negative strides (leaf a)",
            got["a"],
            2 * W * X,
            like=X,
            zero=zero,
        )
    for name, before, after in zip(("x", "Constant", "tangent"), unchanged, (x, w, t)):
        if not np.array_equal(before, after):
            problems.found.append(f"the {name} with negative strides was modified")


def backend_families(backend):
    return get_adapter(backend).capabilities.families


def _broadcast(backend, problems, zero):
    x = np.broadcast_to(X, (2, 3))  # stride 0 along the first axis, read-only
    expected = np.diag(2 * np.broadcast_to(X, (2, 3)).ravel()).reshape(2, 3, 2, 3)
    problems.expect_results(
        {
            "jacobian at a broadcast (stride-0) x": (
                lambda: jacobian(_squares, backend, x),
                expected,
            ),
            "pushforward along a broadcast tangent": (
                lambda: pushforward(
                    _squares, backend, np.ones((2, 3)), (np.broadcast_to(X, (2, 3)),)
                )[0],
                2 * np.broadcast_to(X, (2, 3)),
            ),
        },
        like=X,
        zero=zero,
    )
    if "torch" not in backend_families(backend):
        return
    import torch

    xt = torch.from_numpy(X.copy()).expand(2, 3)
    problems.expect_results(
        {
            "jacobian at an expanded tensor x": (
                lambda: jacobian(_squares, backend, xt),
                expected,
            ),
            "pushforward along an expanded tensor": (
                lambda: pushforward(
                    _squares, backend, torch.ones(2, 3, dtype=torch.float64), (xt,)
                )[0],
                2 * np.broadcast_to(X, (2, 3)),
            ),
        },
        like=xt,
        zero=zero,
    )


def _inference_mode(backend, problems, zero):
    if "torch" not in backend_families(backend):
        return
    import torch

    with torch.inference_mode():
        x = torch.from_numpy(X.copy()) * 1.0
        t = torch.ones(3, dtype=torch.float64)
    f = _sum_of_squares
    problems.expect_results(
        {
            "gradient at an inference-mode tensor": (
                lambda: gradient(f, backend, x),
                2 * X,
            ),
            "pushforward at an inference-mode tensor and tangent": (
                lambda: pushforward(_squares, backend, x, (t,))[0],
                2 * X,
            ),
            "hessian at an inference-mode tensor": (
                lambda: hessian(f, backend, x),
                2 * np.eye(3),
            ),
        },
        like=x,
        zero=zero,
    )


def _sum_of_squares(x):
    xp = array_namespace(x)
    return xp.sum(x**2)


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "unusual_negative_strides",
            "numpy x, Constant, tangent and leaves with negative strides: "
            "right results, inputs unchanged",
            _negative_strides,
        ),
        BadInput(
            "unusual_broadcast",
            "broadcast (stride-0) numpy arrays and expanded tensors as x and tangents",
            _broadcast,
        ),
        BadInput(
            "unusual_inference_mode",
            "torch inference-mode tensors as x and tangents",
            _inference_mode,
        ),
    ]
