"""Random one-source programs as data: a list of steps that prints as Python a user can paste.

A :class:`Program` is an input shape and a list of :class:`Step` s. Step ``i``
defines ``v{i+1}`` from ``x`` and earlier values with one array-API call of
``xp = di.array_namespace(x)``, so every backend runs the same source. The last
value is the array-valued program ``f``; ``g(x) = xp.sum(xp.sin(f(x)))`` is its
scalar-valued variant. Kinked functions (``abs``, ``maximum``, ``where``,
``sort``, ``max``, ``std``, ``eigvalsh``...) carry a *margin*: a numpy
expression of their arguments that is the distance to the kink, so a point is
only used where every margin is large (:meth:`Program.margin`); ``log`` and
``sqrt`` only see positive arguments by construction (``log(1 + v**2)``).

    >>> import numpy as np
    >>> p = Program((3,), (Step("xp.sin(x)"), Step("xp.maximum(v1, x)", "np.min(np.abs(v1 - x))")))
    >>> print(p.function_source())
    def f(x):
        xp = di.array_namespace(x)
        v1 = xp.sin(x)
        v2 = xp.maximum(v1, x)
        return v2
    >>> p.evaluate(np.array([0.5, -1.0, 2.0])).round(3)
    array([ 0.5  , -0.841,  2.   ])
    >>> bool(p.margin(np.array([0.5, -1.0, 2.0])) > 0.02)
    True
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any, Callable, Optional

import numpy as np

import diffinterface as di

from ...families import array_namespace


@dataclasses.dataclass(frozen=True)
class Step:
    """One assignment ``v{i} = expression``; ``margin`` is a numpy expression of the same names (the distance
    to the nearest kink, ``None`` for a smooth step)."""

    expression: str
    margin: Optional[str] = None


def gap(a, axis=None):
    """The smallest distance between two values of ``a`` along ``axis`` (inf when there is one value)."""
    a = np.asarray(a, dtype=np.float64)
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0 or a.shape[axis] < 2:
        return math.inf
    return float(np.min(np.diff(np.sort(a, axis=axis), axis=axis)))


def _margin_names():
    return {"np": np, "gap": gap, "inf": math.inf}


@dataclasses.dataclass(frozen=True)
class Program:
    """An input shape and the steps of ``f``; ``f`` returns the last value (``x`` when there is no step)."""

    shape: tuple
    steps: tuple

    @property
    def output(self):
        return f"v{len(self.steps)}" if self.steps else "x"

    def function_source(self):
        lines = ["def f(x):", "    xp = di.array_namespace(x)"]
        lines += [f"    v{i + 1} = {step.expression}" for i, step in enumerate(self.steps)]
        lines.append(f"    return {self.output}")
        return "\n".join(lines)

    def source(self, x=None):
        """The program as a script: ``f`` (array-valued), ``g`` (scalar-valued) and, given, the point ``x``."""
        text = [
            "import numpy as np",
            "import diffinterface as di",
            "",
            self.function_source(),
            "",
            "def g(x):",
            "    xp = di.array_namespace(x)",
            "    return xp.sum(xp.sin(f(x)))",
        ]
        if x is not None:
            text += ["", f"x = {point_source(x)}"]
        return "\n".join(text)

    def functions(self):
        """``(f, g)`` compiled from :meth:`source` (new function objects at each call, as a user writes them)."""
        return _compiled(self.source())

    def values(self, x):
        """Every value ``x, v1, v2...`` of the program at the numpy point ``x`` (float64, numpy namespace)."""
        x = np.asarray(x, dtype=np.float64)
        names = {"xp": array_namespace(x), "x": x}
        # a variance of one value is nan (with a warning): largest_value then has the point drawn
        # again
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for i, step in enumerate(self.steps):
                names[f"v{i + 1}"] = np.asarray(eval(step.expression, {}, names))  # noqa: S307 - our own source
        return names

    def evaluate(self, x):
        return self.values(x)[self.output]

    def margin(self, x):
        """The smallest margin of any kinked step at ``x`` (inf for a smooth program)."""
        names = {**self.values(x), **_margin_names()}
        margins = [float(eval(step.margin, {}, names)) for step in self.steps if step.margin]  # noqa: S307
        return min(margins, default=math.inf)

    def largest_value(self, x):
        """The largest magnitude of any value of the program at ``x`` (inf when one is not finite)."""
        largest = 0.0
        for value in self.values(x).values():
            if isinstance(value, np.ndarray) and value.size:
                if not np.all(np.isfinite(value)):
                    return math.inf
                largest = max(largest, float(np.max(np.abs(value))))
        return largest


def point_source(x):
    """``x`` (a numpy array) as Python source that rebuilds it exactly in its dtype."""
    x = np.asarray(x)

    def nested(a):
        # str() of a NumPy scalar is the shortest text that rounds back to it in its own dtype
        return str(a) if a.ndim == 0 else "[" + ", ".join(nested(row) for row in a) + "]"

    return f"np.asarray({nested(x)}, dtype=np.{x.dtype.name})"


def _compiled(source) -> tuple[Callable, Callable]:
    names: dict[str, Any] = {"np": np, "di": di}
    exec(compile(source, "<fuzz program>", "exec"), names)  # noqa: S102 - our own generated source
    return names["f"], names["g"]
