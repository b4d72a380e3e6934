"""Contexts: extra arguments passed to ``f`` after ``x`` but not differentiated.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x, c: c * (x ** 2).sum()
    >>> di.gradient(f, di.AutoFiniteDiff(), np.ones(2), di.Constant(3.0)).round(4)
    array([6., 6.])
"""

from __future__ import annotations


class Context:
    """Base class of contexts; ``value`` is what ``f`` receives."""

    __slots__ = ("value",)
    kind = "context"

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"{type(self).__name__}({self.value!r})"


class Constant(Context):
    """A value ``f`` reads but is not differentiated with respect to.

    Its value may change between prepared calls without re-preparing (and, on
    JAX, without recompiling).
    """

    __slots__ = ()
    kind = "Constant"


class Cache(Context):
    """Scratch space ``f`` may write into; its content does not matter.

    AutoJAX cannot write into a buffer (``check_inplace(backend)`` is False): there, f returns such values instead."""

    __slots__ = ()
    kind = "Cache"


def check_contexts(contexts):
    """Raise a TypeError naming the position of any argument that is not a context."""
    for i, c in enumerate(contexts):
        if not isinstance(c, Context):
            raise TypeError(
                f"contexts[{i}]: arguments after x must be wrapped in di.Constant(...) or "
                f"di.Cache(...); got {type(c).__name__}"
            )
