"""The fallbacks' shared step: an operator's methods from a primitive run over fixed seeds.

Gradient, Jacobian and derivative fallbacks stack the pushforwards (or
pullbacks) of a basis; pushforward and pullback fallbacks build the Jacobian
from the other primitive and multiply each of the call's seeds by it. Both
are :func:`impl_from_seeded` with their own ``combine``.
"""

from __future__ import annotations

from typing import Callable

from ..core import Impl
from ..core.batching import record


def impl_from_seeded(op, seeded, combine):
    """The :class:`Impl` of ``op`` whose results are ``combine(parts)`` (``combine(parts, seeds)`` for seeded ``op``).

    ``seeded`` is a :class:`~diffinterface.core.Seeded` primitive; the plain
    method runs it without its value, so no evaluation is spent on a value
    that is thrown away.

    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.core import OPERATORS, Problem, get_adapter
    >>> problem = Problem(get_adapter(di.AutoFiniteDiff()), lambda x: (x ** 2).sum(), np.ones(2), None, (), None)
    >>> columns = problem.seeded("pushforward", problem.basis((2,), "float64"))
    >>> impl = impl_from_seeded(OPERATORS["gradient"], columns, np.stack)
    >>> impl.gradient(np.array([1.0, 2.0])).round(4)
    array([2., 4.])
    """
    results, value_and_results = seeded.results, seeded.value_and_results
    plain: Callable
    valued: Callable
    if op.seeds is None:

        def plain(x, *ctx):
            return combine(results(x, *ctx))

        def valued(x, *ctx):
            y, parts = value_and_results(x, *ctx)
            return y, combine(parts)

    else:

        def plain(x, seeds, *ctx):
            return combine(results(x, *ctx), seeds)

        def valued(x, seeds, *ctx):
            y, parts = value_and_results(x, *ctx)
            return y, combine(parts, seeds)

    return record(Impl(**{op.plain: plain, op.valued: valued}), seeded.batch_size)
