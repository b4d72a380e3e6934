"""The MLX family: ``mlx.core.array``; MLX has no sparse arrays, so sparse results are scipy's.

MLX arrays are immutable as far as diffinterface is concerned (no ``out=``
into them: an update makes a new array behind the same Python object). Its
namespace is :mod:`diffinterface.families.mlx_namespace`, ``mlx.core``
completed with the array API's names. A numpy array becomes an MLX array of
the same dtype (``mx.array`` alone would make float64 float32). Nothing here
imports MLX until a method is called.

    >>> import numpy as np
    >>> from diffinterface.families import FAMILIES
    >>> mlx_family = FAMILIES["mlx"]
    >>> a = mlx_family.from_numpy(np.ones(2), None)
    >>> mlx_family.to_numpy(a).dtype, mlx_family.to_numpy(mlx_family.cast(a, "float32")).dtype
    (dtype('float64'), dtype('float32'))
"""

from __future__ import annotations

import numpy as np

from .base import Family
from .registry import as_numpy


class MLXFamily(Family):
    """MLX arrays (immutable: no ``out=``); namespace over ``mlx.core``; sparse results: ``scipy.sparse``."""

    name = "mlx"
    modules = ("mlx",)
    namespace_module = "diffinterface.families.mlx_namespace"
    precedence = 1
    sparse_type = "scipy.sparse matrices (MLX has no sparse arrays)"
    traced_by = "mx.compile or mx.vmap"
    # mx.sin(a JAX tracer or an autograd box), raised in MLX's C++
    foreign_array_messages = ("received in array initialization",)
    limits = (
        (
            "has no 'complex128'",
            "complex128 (a complex dtype of float64's precision)",
            "MLX's only complex dtype is complex64, of float32's precision: compute in complex64, or "
            "differentiate this function with another backend (di.AutoJAX(), di.AutoTorch())",
        ),
        (
            "mx.compile failed",
            "compiling some derivatives (forward mode through eigh's eigenvectors)",
            "differentiate without compiling (di.AutoMLX(compile=False)), in reverse mode "
            "(di.AutoMLX(mode='reverse')), or with another backend",
        ),
        (
            "repeat(): incompatible function arguments",
            "an array of repeats (xp.repeat), whose result's shape depends on its values",
            "pass the repeats as a Python int",
        ),
    ) + tuple(
        (
            words,
            "derivatives of some of its operations (linear algebra's factorizations, cumulative "
            "products and extrema, scatter's forward mode)",
            "differentiate this function with another backend (di.AutoJAX(), di.AutoTorch()), or "
            "wrap it as di.DifferentiateWith(g, backend) inside an f run with AutoMLX(compile=False)",
        )
        for words in (
            "Not implemented for",
            "JVP not yet implemented",
            "JVP is not implemented",
            "VJP not yet implemented",
            "Cannot calculate VJP",
        )
    )

    def from_numpy(self, a, like):
        from .mlx_namespace import asarray

        return asarray(np.asarray(a))

    def to_numpy(self, a):
        # a copy the caller owns (numpy's view of an MLX buffer would be read-only)
        return np.array(a, copy=True)

    def from_dlpack(self, a):
        return a if self.owns(a.__class__) else self.from_numpy(as_numpy(a), None)

    def cast(self, a, dtype):
        from .mlx_namespace import astype

        return astype(a, dtype)

    def stack(self, arrays, axis=0):
        import mlx.core as mx

        return mx.stack(list(arrays), axis=axis)

    def device(self, a):
        import mlx.core as mx

        return str(mx.default_device())

    def to_device(self, a, device):
        # MLX arrays live in unified memory; a device is where each operation runs, not where an
        # array is
        if device not in ("cpu", "gpu", str(self.device(a))):
            raise ValueError(f"device: expected 'cpu' or 'gpu' for MLX arrays; got {device!r}")
        return a

    def flat_take(self, a, indices):
        import mlx.core as mx

        return mx.take(mx.reshape(a, (-1,)), indices)

    def index_array(self, indices, like):
        import mlx.core as mx

        return mx.array(np.asarray(indices, dtype=np.int32))

    # -- sparse results: scipy's CSR of the entries, as numpy --------------------------------------

    def sparse_builder(self, rows, cols, shape, like):
        from .numpy import NumpyFamily

        build = NumpyFamily().sparse_builder(rows, cols, shape, None)
        return lambda data: build(self.to_numpy(data))

    def dense_builder(self, rows, cols, shape, dense_shape, like):
        import mlx.core as mx

        m, n = shape
        flat = self.index_array(rows.astype(np.int64) * n + cols, like)

        def build(data):
            result = mx.zeros((m * n,), dtype=data.dtype).at[flat].add(data)
            return mx.reshape(result, dense_shape)

        return build
