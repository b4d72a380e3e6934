"""Counting evaluations of ``f``: the kit's and the benchmarks' :class:`CountingFunction`."""

from __future__ import annotations


class CountingFunction:
    """``f`` with a counter: each call adds one to ``count`` (for a jitted JAX function, each trace).

    Parameters
    ----------
    f : callable
        The function to count; calls pass their positional arguments on.

    Attributes
    ----------
    count : int
        Calls since construction or the last ``take()``.

    Examples
    --------
    >>> from diffinterface.testing import CountingFunction
    >>> counted = CountingFunction(lambda x: 2 * x)
    >>> counted(3.0), counted(4.0), counted.count
    (6.0, 8.0, 2)
    >>> counted.take(), counted.count
    (2, 0)
    """

    def __init__(self, f):
        self.f = f
        self.count = 0
        self.__name__ = getattr(f, "__name__", "f")
        self.__doc__ = getattr(f, "__doc__", None)

    def __call__(self, *args):
        self.count += 1
        return self.f(*args)

    def take(self):
        """The count since the last ``take()``, resetting it."""
        count, self.count = self.count, 0
        return count

    def __repr__(self):
        return f"CountingFunction({self.__name__}, count={self.count})"


#: evaluation-count stages of the plain preparation, in the order a case runs them (the strict
#: preparation's stages follow with a ``strict_`` prefix, then the unprepared ones)
