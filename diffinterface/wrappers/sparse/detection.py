"""Sparsity detection: the pattern of a Jacobian or Hessian over flattened indices.

``detect(problem, detector, kind)`` returns ``(rows, cols, shape)``, the
entries row-major sorted and unique (the order the results' CSR data uses),
for ``kind`` "jacobian" (``f(x).size x x.size``) or "hessian" (``x.size x
x.size``, symmetric). The tracing detector hands ``f`` to asdex
(:mod:`diffinterface.backends.asdex`: no derivative is evaluated); the dense detector computes
one dense derivative with the public operators; a known pattern is checked
against the problem's shapes.
"""

from __future__ import annotations

import numpy as np

from ...backends import asdex
from ...families import as_numpy
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
        rows, cols = asdex.traced_pattern(problem, kind, _ALTERNATIVES)
    elif isinstance(detector, DenseSparsityDetector):
        rows, cols = _dense(problem, detector, kind)
    else:
        rows, cols = _known(detector, kind, shape)
    flat = np.unique(np.asarray(rows, dtype=np.int64) * shape[1] + np.asarray(cols, dtype=np.int64))
    rows, cols = flat // shape[1], flat % shape[1]
    return rows.astype(np.int32), cols.astype(np.int32), shape


# -- one dense derivative ------------------------------------------------------------------------


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


# -- a pattern the user gives --------------------------------------------------------------------


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
