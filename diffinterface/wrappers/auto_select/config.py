"""The ``AutoSelect`` selector: which candidates, how close they must agree, how long to time them.

>>> import diffinterface as di
>>> di.AutoSelect([di.AutoFiniteDiff()]) == di.AutoSelect(candidates=(di.AutoFiniteDiff(),))
True
"""

from __future__ import annotations

import math
from typing import Optional

from ...frozen import Frozen
from ...selectors import AbstractBackend


def _positive_number(value, name, allow_zero=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"AutoSelect({name}=...) expected a positive number; got {value!r}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(
            f"AutoSelect({name}=...) expected a {'non-negative' if allow_zero else 'positive'} "
            f"finite number; got {value!r}"
        )


class AutoSelect(AbstractBackend, Frozen):
    """A backend that, at preparation, picks the fastest of several backends whose results agree.

    Preparation prepares every candidate for the call and runs it once;
    candidates that raise (a function written for one framework only, an
    operator a backend cannot do) are dropped, and so are those whose result
    disagrees with the majority beyond ``rtol``. The rest are timed,
    interleaved, for a few calls within ``time_budget`` seconds, and the
    fastest (by median time per call) is kept: the preparation returned *is*
    that candidate's, so prepared calls cost what that backend costs.
    ``di.explain(prep)`` shows the table, ``di.selected_backend(prep)`` the choice.

    An unprepared call with an ``AutoSelect`` backend prepares, and so
    selects, each time (timing one round only): prepare once and pass ``prep=``.

    Parameters
    ----------
    candidates : sequence of backend selectors, optional
        The backends to choose from. ``None`` (the default): every registered
        backend that is installed and takes no arguments (``AutoJAX``,
        ``AutoTorch``, ``AutoAutograd``, ``AutoFiniteDiff``, TensorFlow's when
        registered, third-party ones), each in forward and reverse mode when
        its selector has a ``mode``; never the zero backends.
    rtol : float, optional
        How close results must be to agree: in each part of the result (the
        value, each derivative, aux) on its own, the largest difference at
        most ``rtol`` times the largest magnitude of the two. ``None``:
        1e-5 for float64 results, 1e-2 for lower precisions (finite
        differences must agree with the exact derivatives).
    time_budget : float
        Seconds spent timing the agreeing candidates (each is timed at least
        once, whatever the budget).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: np.sin(x).sum()              # numpy code: only finite differences can run it
    >>> backend = di.AutoSelect([di.AutoFiniteDiff(), di.AutoAutograd()], time_budget=0.05)
    >>> prep = di.prepare_gradient(f, backend, np.ones(3))
    >>> di.selected_backend(prep)
    AutoFiniteDiff(method='central', rel_step=None, abs_step=None)
    >>> di.gradient(f, backend, np.zeros(3), prep=prep).round(6)
    array([1., 1., 1.])
    """

    candidates: Optional[tuple] = None
    rtol: Optional[float] = None
    time_budget: float = 1.0

    def __post_init__(self):
        candidates = self.candidates
        if candidates is not None:
            if isinstance(candidates, (str, bytes, AbstractBackend)) or not hasattr(
                candidates, "__iter__"
            ):
                raise TypeError(
                    "AutoSelect(candidates=...) expected a list of backend selectors such as "
                    f"[di.AutoJAX(), di.AutoTorch()], or None for every installed backend; got {candidates!r}"
                )
            candidates = tuple(candidates)
            if not candidates:
                raise ValueError(
                    "AutoSelect(candidates=...) expected at least one backend selector; got an empty "
                    "list (None selects among every installed backend)"
                )
            for i, candidate in enumerate(candidates):
                if not isinstance(candidate, AbstractBackend) or isinstance(candidate, AutoSelect):
                    raise TypeError(
                        f"AutoSelect(candidates=...): candidates[{i}]: expected a backend selector such "
                        f"as di.AutoJAX() (not an AutoSelect); got {candidate!r}"
                    )
                if candidate in candidates[:i]:
                    raise ValueError(
                        f"AutoSelect(candidates=...): candidates[{i}] repeats {candidate!r}; "
                        "list each backend once"
                    )
            self.__dict__["candidates"] = candidates  # a list given becomes the (hashable) tuple
        if self.rtol is not None:
            _positive_number(self.rtol, "rtol")
        _positive_number(self.time_budget, "time_budget", allow_zero=True)
