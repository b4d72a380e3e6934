"""The numpy family: numpy arrays and scalars, Python numbers, and scipy.sparse matrices as its sparse type.

>>> import numpy as np
>>> from diffinterface.families import FAMILIES
>>> numpy_family = FAMILIES["numpy"]
>>> numpy_family.ravel([np.ones((2, 2)), np.zeros(1, dtype=np.float32)], "float64")
array([1., 1., 1., 1., 0.])
"""

from __future__ import annotations

import numpy as np

from .base import Family, dtype_name
from .complex_step import at_complex_step
from .registry import from_any_family


def _readonly(a):
    a.flags.writeable = False
    return a


def row_pointers(rows, m):
    """The CSR row pointers of row-major sorted ``rows`` of an ``m``-row matrix."""
    return np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))]).astype(np.int64)


class NumpyFamily(Family):
    """numpy arrays (also numpy scalars and Python ``float`` and ``int``); sparse matrices: ``scipy.sparse``."""

    name = "numpy"
    modules = ("numpy",)
    types = (np.ndarray, float, int)
    namespace_module = "numpy"
    sparse_modules = ("scipy.sparse",)
    sparse_type = "scipy.sparse matrices"
    scalar_results = True

    def owns(self, cls) -> bool:
        return issubclass(cls, np.generic) or cls.__module__.startswith(self.modules)

    def namespace(self):
        # at a complex-step point, the functions whose complex meaning is not their real one's
        # continuation are replaced by it, or refuse (complex_step.py)
        if at_complex_step():  # imported here: most programs never take a complex step
            from . import complex_step_namespace

            return complex_step_namespace
        return np

    from_dlpack = from_any_family

    def from_numpy(self, a, like):
        return a

    def to_numpy(self, a):
        return np.asarray(a)

    def cast(self, a, dtype):
        return a.astype(dtype)

    def as_result(self, a):
        return np.asarray(a) if isinstance(a, (float, int, complex, np.generic)) else a

    def writable(self, a):
        return a.copy() if a.__class__ is np.ndarray and not a.flags.writeable else a

    def ravel(self, leaves, dtype):
        return np.concatenate(
            [(a if dtype_name(a) == dtype else a.astype(dtype)).reshape(-1) for a in leaves]
        )

    def stack(self, arrays, axis=0):
        return np.stack(arrays, axis=axis)

    def write(self, out, result):
        if not isinstance(out, np.ndarray):
            return f"expected a writable numpy array; got {type(out).__name__}"
        if not out.flags.writeable:
            return "expected a writable numpy array; got a read-only one"
        np.copyto(out, result)
        return None

    def shares_memory(self, a, b):
        return (
            np.shares_memory(a, b)
            if isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
            else a is b
        )

    def device(self, a):
        return "cpu"

    # -- scipy.sparse -----------------------------------------------------------------------------

    def sparse_format(self, a):
        return "scipy-" + a.format

    def sparse_values(self, matrix):
        return matrix.data

    def same_sparse_pattern(self, out, result):
        return out.indices is result.indices or (
            out.indices.shape == result.indices.shape
            and np.array_equal(out.indices, result.indices)
            and np.array_equal(out.indptr, result.indptr)
        )

    def sparse_coordinates(self, matrix):
        coo = matrix.tocoo()
        return coo.data, coo.row, coo.col

    def index_array(self, indices, like):
        return indices

    def sparse_builder(self, rows, cols, shape, like):
        from scipy.sparse import csr_array

        # read-only: every matrix built shares them
        indices = _readonly(cols.astype(np.int32))
        indptr = _readonly(row_pointers(rows, shape[0]).astype(np.int32))

        def build(data):
            matrix = csr_array((np.asarray(data), indices, indptr), shape=shape, copy=False)
            matrix.has_sorted_indices = True
            return matrix

        return build

    def dense_builder(self, rows, cols, shape, dense_shape, like):
        m, n = shape
        flat = rows.astype(np.int64) * n + cols

        def build(data):
            data = np.asarray(data)
            result = np.zeros(m * n, dtype=data.dtype)
            result[flat] = data
            return result.reshape(dense_shape)

        return build
