"""What finite differences refuse, because the differences would be silently wrong: each a clear error.

- f returned a real value at a complex-step point (the imaginary part that
  carries the derivative was dropped);
- f wrote into a ``di.Cache`` at a complex-step point (a real buffer keeps
  only the real part);
- a complex x with the complex step, which steps x along i·h itself (:data:`COMPLEX_STEP_REAL_X_ONLY`);
- f computes in a narrower dtype than x (float32 values of a float64 x: the
  differences have float32's precision, as when f calls ``jax.numpy`` on x).
"""

from __future__ import annotations

import numpy as np

from ...contexts import Cache
from ...errors import FIX, DifferentiationError, GraphBreakError, UnsupportedError, function_name

#: why method="complex" refuses a complex x: its real view's parts would be stepped along i·h and
#: mixed up
COMPLEX_STEP_REAL_X_ONLY = (
    "the complex step (method='complex') evaluates f at x + i·h·t, which needs a real x; "
    "use AutoFiniteDiff(method='central'), which steps a complex x's real and imaginary "
    "parts in turn"
)


def dropped_imaginary_part(f, backend, value):
    """The error for ``f`` that returned a real value at a complex-step point: its derivative would read 0.

    ``backend``: the selector, or its repr (what a function sent to a worker process holds).
    """
    backend = backend if isinstance(backend, str) else repr(backend)
    return GraphBreakError(
        f"f: {function_name(f)} returned a real {value.dtype} value at the complex point where {backend} "
        "evaluates it, so the imaginary part that carries the derivative was dropped and the derivative "
        "would read as zeros. The usual causes: float() or .item() on a value computed from x, .real, "
        "np.abs, astype(float), np.asarray(..., dtype=float), or a real output written from x. Keep f "
        "complex-safe (xp = di.array_namespace(x), no casts), or use AutoFiniteDiff(method='central')."
    )


def refuse_caches(problem, backend):
    """Raise naming the first ``di.Cache`` among the contexts: f would write complex values into it."""
    caches = [i for i, c in enumerate(problem.contexts) if isinstance(c, Cache)]
    if caches:
        raise UnsupportedError(
            f"contexts[{caches[0]}]: {backend!r} evaluates f at complex points, which a di.Cache of x's "
            "real dtype cannot hold (the imaginary part written into it would be lost). Use "
            "AutoFiniteDiff(method='central'), or build the intermediate without writing into a buffer"
        )


def _narrower(dtype, x_dtype):
    """True when real ``dtype`` holds fewer digits than real ``x_dtype`` (float32 values of a float64 x)."""
    got, want = np.dtype(dtype), np.dtype(x_dtype)
    return got.kind == want.kind == "f" and got.itemsize < want.itemsize


def require_x_precision(problem, spec, backend):
    """Raise when f's output (``spec``) is of a narrower dtype than x: its differences lose x's precision."""
    if _narrower(spec.dtype, problem.x_dtype):
        raise DifferentiationError(
            f"f: {function_name(problem.f)} returned {spec.dtype} values for a {problem.x_dtype} x, and "
            f"{backend!r} differences f's values: the derivative would have {spec.dtype}'s precision, "
            "not x's. f computes in a narrower dtype than x, as another framework's functions do on x "
            f"(jax.numpy without x64 computes in float32). {FIX}"
        )
