"""Empty problems: ``x`` or ``f(x)`` of size 0, answered from shapes alone.

A Jacobian with no columns (``x.size == 0``) or no rows (``f(x).size == 0``)
has no entries, so every derivative of such a problem is known exactly from
the shapes and dtypes learned at preparation: empty arrays where a result has
a zero-size axis, and exact zeros where a result is an empty sum (a
pushforward along an empty ``x``, a pullback through an empty ``y``). The
frameworks disagree about such problems (stacking no rows, batching over no
seeds), so :func:`prepare_empty` builds the answer once, in the core, for
every backend; it is decided at preparation, so prepared calls of non-empty
problems pay nothing.

Evaluations: preparing an empty-``x`` problem evaluates ``f`` once (its output
shape); a plain operator then evaluates nothing, and an operator that returns
the value (``value_and_gradient``, ...) evaluates ``f`` once per call.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: np.sum(x) * np.ones(3)
    >>> di.jacobian(f, di.AutoFiniteDiff(), np.zeros(0)).shape
    (3, 0)
    >>> value, grad = di.value_and_gradient(lambda x: np.sum(x), di.AutoFiniteDiff(), np.zeros((2, 0)))
    >>> float(value), grad.shape
    (0.0, (2, 0))
"""

from __future__ import annotations

import numpy as np

from ..families import FAMILIES, from_numpy
from .adapter import Impl
from .problem import require_scalar_output


class EmptyAnswer:
    """What an operator's empty-problem rule builds its :class:`Impl` from (``Rules.empty``).

    ``value(x, ctx)`` is f(x) as the adapter evaluates it (a fresh array for a
    two-argument f); ``x_like()`` and ``y_like()`` are zeros shaped like x and
    like f(x); ``zeros(shape, dtype)`` any others, all in the user's family.
    """

    def __init__(self, problem, spec):
        family, like = problem.family, problem.x
        f = problem.f if problem.y is not None else problem.adapter.prepare_evaluation(problem)
        self.x_shape, self.x_dtype, self.y_shape, self.y_dtype = (
            problem.x_shape,
            problem.x_dtype,
            spec.shape,
            spec.dtype,
        )
        y_shape, y_dtype = self.y_shape, self.y_dtype

        def zeros(shape, dtype):
            return from_numpy(np.zeros(shape, dtype=dtype), family, like)

        if problem.y is None and FAMILIES[family].scalar_results:
            as_result = FAMILIES[family].as_result

            def value(x, ctx):
                return as_result(f(x, *ctx))  # a 0-d array, not a scalar (see core/adapter.py)
        elif problem.y is None:

            def value(x, ctx):
                return f(x, *ctx)
        else:

            def value(x, ctx):
                # a fresh buffer: the core copies the value into the user's y
                y = zeros(y_shape, y_dtype)
                f(y, x, *ctx)
                return y

        self.zeros, self.value = zeros, value

    def x_like(self):
        return self.zeros(self.x_shape, self.x_dtype)

    def y_like(self):
        return self.zeros(self.y_shape, self.y_dtype)

    def per_seed(self, op, like, first=None):
        """The :class:`Impl` of the seeded ``op``: ``like()`` for each seed, after ``first(x, ctx)`` (the value)."""
        first = first or self.value

        def plain(x, seeds, *ctx):
            return tuple(like() for _ in seeds)

        return Impl(
            **{op.plain: plain, op.valued: lambda x, seeds, *ctx: (first(x, ctx), plain(x, seeds))}
        )


def prepare_empty(op, problem):
    """The :class:`Impl` of ``op`` for an empty problem (see the module docstring), by its family's rule."""
    spec = require_scalar_output(problem, op.name) if op.scalar_y else problem.spec
    return op.rules.empty(EmptyAnswer(problem, spec))
