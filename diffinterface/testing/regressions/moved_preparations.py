"""Regression probes: a same-point preparation moved to another point answers at that point.

``diffinterface.scipy.objective`` moves its same-point ``hessp`` preparation
from iterate to iterate (``diffinterface.core.same_point.moved``) where the
adapter can: JAX's moved preparations compute each product at the new point
with functions compiled at the first move, instead of linearizing at every
point. Each product of a preparation moved once, then again, one seed and a
batch of two, is the one at its own point (the first move compiles, the
second reuses). A backend that cannot move prepares again: nothing to check.

    >>> import diffinterface as di
    >>> from diffinterface.testing.probes import run_probes
    >>> run_probes(probes(), di.AutoJAX()).found
    []
"""

from __future__ import annotations

import numpy as np

from ...contexts import Constant
from ...core.same_point import moved
from ..probes import BadInput
from .stale_state import _SAME_POINT, X

#: the points the preparation is moved to, one after the other
POINTS = (np.array([1.5, 0.75, -2.0]), np.array([-0.5, 2.0, 0.25]))


def _moved_same_point(backend, problems, zero):
    c = np.full(3, 2.0)
    seeds = (np.array([1.0, -2.0, 0.5]), np.array([0.25, 1.0, -1.0]))
    for name, prepare, call, f, _, expected in _SAME_POINT:
        for batch in (seeds[:1], seeds):
            prep = prepare(f, backend, X.copy(), batch, Constant(c))
            for step, point in enumerate(POINTS):
                prep = moved(prep, point.copy())
                if prep is None:  # this backend prepares again at each point
                    break
                for i, seed in enumerate(batch):
                    problems.expect_result(
                        f"{name} {i + 1} of {len(batch)} of a same-point preparation moved "
                        f"{'once' if step == 0 else 'twice'}",
                        lambda: call(f, backend, point, batch, Constant(c), prep=prep)[i],
                        expected(point, c, seed),
                        like=point,
                        zero=zero,
                    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "moved_same_point",
            "a same-point preparation moved to another point, then to a third, answers there "
            "(pushforward, pullback, hvp; one seed and a batch)",
            _moved_same_point,
        ),
    ]
