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
    JAX, without recompiling): a preparation records that a Constant is there,
    not what it holds. This is how extra arguments reach ``f``, where
    ``jax.grad`` would take ``argnums`` and scipy ``args=``.

    Parameters
    ----------
    value : any
        What ``f`` receives in this position: a number, an array, a pytree, any
        Python object. It is passed as it is (never copied, converted or modified).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> def loss(w, data):
    ...     return ((data * w) ** 2).sum()
    >>> backend = di.AutoFiniteDiff()
    >>> prep = di.prepare_gradient(loss, backend, np.ones(2), di.Constant(np.ones(2)))
    >>> di.gradient(loss, backend, np.ones(2), di.Constant(np.array([1.0, 3.0])), prep=prep).round(4)
    array([ 2., 18.])
    """

    __slots__ = ()
    kind = "Constant"


class Cache(Context):
    """Scratch space ``f`` may write into; its content does not matter.

    Only backends that can differentiate through a write into a buffer accept
    an ``f`` that writes into its Cache: ``di.check_inplace(backend)`` says
    which (True for AutoTorch, whose in-place writes into a torch buffer are
    recorded, and for AutoFiniteDiff, which evaluates f on plain numpy arrays).
    JAX cannot (its arrays are immutable, and a traced value cannot be stored
    into a numpy buffer), nor can HIPS autograd (its boxes cannot be assigned
    into an array), so AutoJAX and AutoAutograd raise an error naming the
    Cache. Instead, build the intermediate without writing, from the array
    namespace (``xp.stack``, ``xp.concat``, ``xp.where``) and return or use it,
    or pick a backend for which ``di.check_inplace`` is True.
    ``AutoFiniteDiff(method="complex")`` evaluates f at complex points, which a
    real Cache cannot hold: use ``method="central"`` for an f that writes into one.

    Parameters
    ----------
    value : array
        The buffer ``f`` receives in this position, of the family and dtype
        ``f`` writes (a numpy array for AutoFiniteDiff, a tensor for AutoTorch).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> def f(x, scratch):
    ...     scratch[:] = x ** 2  # written, then read
    ...     return scratch.sum()
    >>> di.gradient(f, di.AutoFiniteDiff(), np.ones(2), di.Cache(np.zeros(2))).round(4)
    array([2., 2.])
    >>> di.check_inplace(di.AutoFiniteDiff()), di.check_inplace(di.AutoJAX())
    (True, False)
    """

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
