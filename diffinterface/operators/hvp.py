"""Hessian-vector products of a scalar-valued ``f``: ``H(x) @ t`` for each tangent ``t``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x[0] * x[1]) ** 2
    >>> di.hvp(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), (np.array([1.0, 0.0]),))[0].round(5)
    array([8., 8.])

Results form a tuple shaped like ``x``, one per tangent. Fallback (see
``backends/second_order.py``): the outer backend's pushforward of the inner
backend's gradient (forward-over-reverse by default), or its pullback when the
outer works in reverse mode. ``gradient_and_hvp`` takes the gradient from that
same pass: no second gradient evaluation.
"""

from __future__ import annotations

from ..arrays import write_out
from ..backends.base import Impl
from ..backends.second_order import differentiated_problem, outer_mode
from ._core import FALLBACKS, context_values, prepare, require_scalar_output, run


def prepare_hvp(f, backend, x, tangents, *contexts, strict=False):
    """Prepare ``hvp`` for ``f`` at arrays like ``x`` and a batch like ``tangents``."""
    return prepare("hvp", f, backend, x, contexts, tangents=tangents, strict=strict)


def hvp(f, backend, x, tangents, *contexts, prep=None, out=None):
    """``H(x) @ t`` for each ``t`` in the tuple ``tangents``; a tuple shaped like x."""
    if prep is not None and prep.fast == "hvp" and out is None:
        fn = prep.impl.hvp
        return fn(x, tangents, *context_values(contexts)) if contexts else fn(x, tangents)
    return run("hvp", "hvp", f, backend, x, contexts, prep, tangents=tangents, out=out)


def gradient_and_hvp(f, backend, x, tangents, *contexts, prep=None, out=None):
    """``(gradient(f)(x), hvp(...))``; ``out`` is ``(gradient buffer, tuple of buffers)``, None entries allowed."""
    if prep is not None and prep.fast == "hvp" and out is None:
        fn = prep.impl.gradient_and_hvp
        return fn(x, tangents, *context_values(contexts)) if contexts else fn(x, tangents)
    gradient, products = run("hvp", "gradient_and_hvp", f, backend, x, contexts, prep, tangents=tangents)
    if out is None:
        return gradient, products
    if not isinstance(out, tuple) or len(out) != 2:
        raise ValueError(
            "out: expected a pair (gradient buffer, tuple of hvp buffers), None entries allowed; "
            f"got {type(out).__name__}" + (f" of length {len(out)}" if isinstance(out, tuple) else "")
        )
    if out[0] is not None:
        gradient = write_out(out[0], gradient, "out[0]")
    if out[1] is not None:
        products = write_out(out[1], products, "out[1]")
    return gradient, products


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
