"""The fallbacks' shared step: an operator's methods from a primitive run over fixed seeds.

Gradient, Jacobian and derivative fallbacks stack the pushforwards (or
pullbacks) of a basis; pushforward and pullback fallbacks build the Jacobian
from the other primitive and multiply each of the call's seeds by it
(:func:`through_jacobian`). Both are :func:`impl_from_seeded` with their own
``combine``.
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


def through_jacobian(op, problem):
    """The :class:`Impl` of a seeded first-order ``op`` from the Jacobian that the other one builds.

    A pushforward's fallback (reverse-mode adapters) stacks the pullbacks of
    the output's basis, the Jacobian's rows; a pullback's (forward-mode
    adapters) the pushforwards of x's basis, its columns. Each of the call's
    tangents ``t`` is then ``J @ t``, each cotangent ``c`` is ``c @ J``: one
    sweep at each call, whatever the number of seeds.
    """
    xp, spec, x_shape = problem.xp, problem.spec, problem.x_shape
    m, n = spec.size, problem.x_size
    if op.seeds == "tangents":
        rows = problem.seeded("pullback", problem.basis(spec.shape, spec.dtype))

        def apply(parts, tangents):
            jac = xp.reshape(xp.stack(parts), (m, n))
            return tuple(xp.reshape(jac @ xp.reshape(t, (n,)), spec.shape) for t in tangents)

        return impl_from_seeded(op, rows, apply)
    columns = problem.seeded("pushforward", problem.basis(x_shape, problem.x_dtype))

    def apply_transposed(parts, cotangents):
        jac = xp.stack([xp.reshape(c, (m,)) for c in parts], axis=1)
        return tuple(xp.reshape(xp.reshape(c, (m,)) @ jac, x_shape) for c in cotangents)

    return impl_from_seeded(op, columns, apply_transposed)
