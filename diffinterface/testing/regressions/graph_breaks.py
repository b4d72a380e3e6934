"""Regression probes: see :mod:`diffinterface.testing.regressions`.

A graph broken inside f, wholly or partly, is an error naming the fix, never a
wrong number (a constant f may differentiate to zeros, or be refused): ``x[0].item() * sum(x)`` (a value of x converted to a Python
number: its derivative through that factor is lost) and ``sum(x.detach() * x)``
(a value of x detached) must differentiate right (where the array is an
ordinary number, finite differences) or raise a ``DifferentiationError``, and
so must every pair of modes of ``SecondOrder`` over one backend (forward over
reverse, reverse over forward). A probe asks the array for ``.item()`` and
``.detach()``, and the selector for a ``mode`` field.
"""

from __future__ import annotations

import numpy as np

from ...families import array_namespace
from ...operators import gradient, hessian, hvp
from ...selectors import SecondOrder
from ..probes import BadInput

X = np.array([1.0, 2.0, 3.0])


def _as_number(a):
    """``a`` (a 0-d array) as a Python number, the way the array offers it."""
    item = getattr(a, "item", None)
    return item() if item is not None else float(a)


def _item_times_sum(x):
    xp = array_namespace(x)
    return _as_number(x[0]) * xp.sum(x)


def _item_times_sum_gradient(x):
    return x[0] + (np.arange(x.size) == 0) * x.sum()


def _partial_item(backend, problems, zero):
    problems.expect_right_or_explained(
        "gradient of x[0].item() * sum(x)",
        lambda: gradient(_item_times_sum, backend, X),
        _item_times_sum_gradient(X),
        zero,
    )


def _detached(x):
    """``x.detach()`` where the array has it, else None."""
    detach = getattr(x, "detach", None)
    return detach() if detach is not None else None


def _detach_times_x(x):
    xp = array_namespace(x)
    detached = _detached(x)
    return xp.sum((x if detached is None else detached) * x)


def _detach_squared(x):
    xp = array_namespace(x)
    detached = _detached(x)
    return xp.sum((x if detached is None else detached) ** 2)


def _constant(x):
    xp = array_namespace(x)
    return xp.asarray(
        3.0, dtype=x.dtype
    )  # zeros where the framework says so, else an error: never wrong


def _partial_detach(backend, problems, zero):
    problems.expect_right_or_explained(
        "gradient of sum(x.detach() * x)",
        lambda: gradient(_detach_times_x, backend, X),
        2 * X,
        zero,
    )


def _with_mode(backend, mode):
    """``backend`` with its ``mode`` field set to ``mode``, or None when its selector has no such field."""
    fields = getattr(type(backend), "__frozen_fields__", ())
    if "mode" not in fields:
        return None
    return type(backend)(
        **{name: getattr(backend, name) for name in fields if name != "mode"}, mode=mode
    )


def _mode_pairs(backend):
    """``backend`` itself, and SecondOrder(forward, reverse) / (reverse, forward) of it where it has modes."""
    forward, reverse = _with_mode(backend, "forward"), _with_mode(backend, "reverse")
    pairs = [backend]
    if forward is not None:
        pairs += [SecondOrder(forward, reverse), SecondOrder(reverse, forward)]
    return pairs


def _second_order_breaks(backend, problems, zero):
    t = np.ones_like(X)
    for pair in _mode_pairs(backend):
        for name, f, h in (
            ("sum(x.detach() ** 2)", _detach_squared, 2 * np.eye(X.size)),
            ("sum(x.detach() * x)", _detach_times_x, 2 * np.eye(X.size)),
            ("x[0].item() * sum(x)", _item_times_sum, _item_times_sum_hessian()),
            ("a constant", _constant, np.zeros((X.size, X.size))),
        ):
            problems.expect_right_or_explained(
                f"hessian of {name} by {pair!r}", lambda: hessian(f, pair, X), h, zero
            )
            problems.expect_right_or_explained(
                f"hvp of {name} by {pair!r}", lambda: hvp(f, pair, X, (t,))[0], h @ t, zero
            )


def _item_times_sum_hessian():
    """The Hessian of x[0] * sum(x): 1 in row 0 and column 0, 2 at (0, 0)."""
    h = np.zeros((X.size, X.size))
    h[0, :] += 1
    h[:, 0] += 1
    return h


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "graph_break_partial_item",
            "x[0].item() * sum(x): the gradient or a DifferentiationError",
            _partial_item,
        ),
        BadInput(
            "graph_break_partial_detach",
            "sum(x.detach() * x): the gradient or a DifferentiationError",
            _partial_detach,
        ),
        BadInput(
            "graph_break_second_order_pairs",
            "detach and item in f through every SecondOrder pair of modes: the Hessian or an error",
            _second_order_breaks,
        ),
    ]
