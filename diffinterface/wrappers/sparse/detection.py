"""Sparsity detection: the pattern of a Jacobian or Hessian over flattened indices.

``detect(problem, detector, kind)`` returns ``(rows, cols, shape)``, the
entries row-major sorted and unique (the order the results' CSR data uses),
for ``kind`` "jacobian" (``f(x).size x x.size``) or "hessian" (``x.size x
x.size``, symmetric). The tracing detector hands ``f`` to asdex, which walks
JAX's jaxpr of ``f`` (no derivative is evaluated); the dense detector computes
one dense derivative with the public operators; a known pattern is checked
against the problem's shapes.
"""

from __future__ import annotations

import numpy as np

from ...families import FAMILIES, as_numpy, family_of, is_array
from ...families.jax import JaxFamily
from ...errors import UnsupportedError
from ...operators import hessian, jacobian
from .config import DenseSparsityDetector, TracerSparsityDetector

_ALTERNATIVES = (
    "use AutoSparse(..., sparsity_detector=di.DenseSparsityDetector(backend)) (the local pattern at x, "
    "from one dense derivative) or di.KnownSparsity(pattern) (a pattern you give)"
)


def detect(problem, detector, kind):
    """``(rows, cols, shape)`` of the ``kind`` ("jacobian" or "hessian") pattern of ``problem``."""
    m = problem.x_size if kind == "hessian" else problem.spec.size
    shape = (m, problem.x_size)
    if isinstance(detector, TracerSparsityDetector):
        rows, cols = _traced(problem, kind)
    elif isinstance(detector, DenseSparsityDetector):
        rows, cols = _dense(problem, detector, kind)
    else:
        rows, cols = _known(detector, kind, shape)
    flat = np.unique(np.asarray(rows, dtype=np.int64) * shape[1] + np.asarray(cols, dtype=np.int64))
    rows, cols = flat // shape[1], flat % shape[1]
    return rows.astype(np.int32), cols.astype(np.int32), shape


# -- tracing with JAX (asdex) ----------------------------------------------------------------------


def _to_jax(value):
    """A numpy, torch or JAX array (or number) as a JAX array of the same dtype (the others through the host)."""
    if family_of(value) == JaxFamily.name:
        return value
    return FAMILIES[JaxFamily.name].from_numpy(as_numpy(value), None)


def _traced(problem, kind):
    import asdex
    import jax

    if problem.y is not None:
        raise UnsupportedError(
            "sparsity_detector: TracerSparsityDetector traces f with JAX, which cannot trace a two-argument "
            f"f(y, x) that writes into y; {_ALTERNATIVES}"
        )
    # Array contexts are traced arguments outside argnums (their entries are no columns);
    # other values are closed over, as f sees them.
    traced = [
        i
        for i, value in enumerate(problem.ctx)
        if is_array(value) and FAMILIES[family_of(value)].concrete
    ]
    ctx = list(problem.ctx)
    f = problem.f

    def function(x, *arrays):
        values = list(ctx)
        for i, a in zip(traced, arrays):
            values[i] = a
        return f(x, *values)

    args = (_to_jax(problem.x), *(_to_jax(ctx[i]) for i in traced))
    detector = asdex.hessian_sparsity if kind == "hessian" else asdex.jacobian_sparsity
    wide = any(str(a.dtype) == "float64" for a in args)
    try:
        with jax.enable_x64(wide):
            pattern = detector(function, *args, argnums=0)
    except Exception as error:  # noqa: BLE001 - explained below, by what failed
        raise _tracing_failure(jax, function, args, wide, error) from error
    return pattern.rows, pattern.cols


def _tracing_failure(jax, function, args, wide, error):
    """The UnsupportedError for asdex's ``error``: f that JAX cannot trace, or an operation asdex cannot handle.

    Tracing f once more with JAX alone (``jax.eval_shape``, no evaluation)
    tells the two apart, on this error path only.
    """
    try:
        with jax.enable_x64(wide):
            jax.eval_shape(function, *args)
    except Exception as traced:  # noqa: BLE001 - JAX itself cannot trace f: that is the cause
        return UnsupportedError(
            f"sparsity_detector: TracerSparsityDetector traces f with JAX, which could not trace it "
            f"({type(traced).__name__}: {traced}). Write f with xp = di.array_namespace(x) (or jax.numpy), "
            f"with no numpy, float() or .item() on values computed from x, so JAX can trace it, or {_ALTERNATIVES}"
        )
    return UnsupportedError(
        f"sparsity_detector: TracerSparsityDetector traced f with JAX, but asdex, which reads the sparsity "
        f"pattern off that trace, cannot handle one of its operations ({type(error).__name__}: {error}). "
        f"f itself is fine; {_ALTERNATIVES}"
    )


# -- one dense derivative ---------------------------------------------------------------------------


def _dense(problem, detector, kind):
    if kind == "hessian":
        matrix = as_numpy(hessian(problem.f, detector.backend, problem.x, *problem.contexts))
        matrix = np.abs(matrix.reshape(problem.x_size, problem.x_size))
        matrix = np.maximum(matrix, matrix.T)  # star coloring needs a symmetric pattern
    else:
        matrix = as_numpy(
            jacobian(problem.f, detector.backend, problem.x, *problem.contexts, y=problem.y)
        )
        matrix = np.abs(matrix.reshape(problem.spec.size, problem.x_size))
    return np.nonzero(matrix > detector.atol)


# -- a pattern the user gives ---------------------------------------------------------------------


def _known(detector, kind, shape):
    if detector.shape != shape:
        what = "x.size x x.size" if kind == "hessian" else "f(x).size x x.size"
        raise ValueError(
            f"sparsity_detector: KnownSparsity for this {kind} needs a pattern of shape {what} = {shape}; "
            f"got {detector.shape}"
        )
    rows, cols = detector.coordinates()
    if kind == "hessian":
        flat = rows * shape[1] + cols
        missing = np.setdiff1d(cols * shape[1] + rows, flat).size
        if missing:
            raise ValueError(
                "sparsity_detector: KnownSparsity for a Hessian needs a symmetric pattern; "
                f"{missing} entries have no transposed entry"
            )
    return rows, cols
