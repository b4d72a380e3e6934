"""Hessian-vector products of a scalar-valued ``f``: ``H(x) @ t`` for each tangent ``t``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x[0] * x[1]) ** 2
    >>> di.hvp(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), (np.array([1.0, 0.0]),))[0].round(5)
    array([8., 8.])

Results form a tuple shaped like ``x``, one per tangent. Fallback (see
``operators/_second_order.py``): the outer backend's pushforward of the inner
backend's gradient (forward-over-reverse by default), or its pullback when the
outer works in reverse mode. ``gradient_and_hvp`` takes the gradient from that
same pass: no second gradient evaluation.
"""

from __future__ import annotations

from ..core import FALLBACKS, OPERATORS, Impl, call, prepare, require_scalar_output
from ._second_order import differentiated_problem, outer_mode

_OP = OPERATORS["hvp"]


def prepare_hvp(f, backend, x, tangents, *contexts, strict=True):
    """Prepare ``hvp`` for ``f`` at arrays like ``x`` and a batch like ``tangents``."""
    return prepare(_OP, f, backend, x, tangents, contexts, None, strict)


def hvp(f, backend, x, tangents, *contexts, prep=None, out=None):
    """``H(x) @ t`` for each ``t`` in the tuple ``tangents``; a tuple shaped like x."""
    return call(_OP, 0, f, backend, x, tangents, contexts, prep, out, None)


def gradient_and_hvp(f, backend, x, tangents, *contexts, prep=None, out=None):
    """``(gradient(f)(x), hvp(...))``; ``out`` is ``(gradient buffer, tuple of buffers)``, None entries allowed."""
    return call(_OP, 1, f, backend, x, tangents, contexts, prep, out, None)


def _hvp_fallback(problem):
    require_scalar_output(problem, "hvp")
    gradient_problem = differentiated_problem(problem, "gradient")
    if outer_mode(gradient_problem.adapter) == "forward":
        impl = gradient_problem.impl("pushforward", tangents=problem.tangents)
        return Impl(hvp=impl.pushforward, gradient_and_hvp=impl.value_and_pushforward)
    # H is symmetric, so the pullback t @ H of the gradient is H @ t.
    impl = gradient_problem.impl("pullback", tangents=problem.tangents)
    return Impl(hvp=impl.pullback, gradient_and_hvp=impl.value_and_pullback)


FALLBACKS["hvp"] = _hvp_fallback
