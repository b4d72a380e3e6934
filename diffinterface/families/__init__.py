"""Array families: one module per family, each implementing the one :class:`Family` protocol.

- :mod:`.base`: the ``Family`` protocol (detection, namespace, conversions, ``out=``
  writes, sparse matrices, device) with array-API defaults;
- :mod:`.registry`: ``FAMILIES``, ``register_family``, detection by class (``family_of``),
  shapes, dtypes, namespaces (``array_namespace``);
- :mod:`.conversion`: building arrays in a family, casting, writing into ``out=`` buffers;
- the families: :mod:`.numpy`, :mod:`.torch`, :mod:`.jax`, :mod:`.autograd`,
  :mod:`.tensorflow`, :mod:`.mlx` (each with its namespace module where it needs one).

Adding a family is one module defining a ``Family`` subclass, plus its
``register_family`` line below (or a ``register_family`` call of its own).
Registration order is the order detection tries the families and error
messages list them.
"""

from .autograd import AutogradFamily
from .base import Family
from .conversion import cast, from_numpy, owned, write_out
from .jax import JaxFamily
from .mlx import MLXFamily
from .numpy import NumpyFamily
from .registry import (
    FAMILIES,
    FLOAT_DTYPES,
    NUMBERS,
    array_namespace,
    as_numpy,
    describe,
    dtype_name,
    family_of,
    has_complex_leaf,
    is_array,
    is_complex,
    namespace,
    register_family,
    require_real_float,
    shape_of,
    size_of,
    sparse_family,
    traced_family,
    sparse_format,
    unregister_family,
)
from .tensorflow import TensorFlowFamily
from .torch import TorchFamily

register_family(NumpyFamily())
register_family(TorchFamily())
register_family(JaxFamily())
register_family(AutogradFamily())
register_family(TensorFlowFamily())
register_family(MLXFamily())

__all__ = [
    "FAMILIES",
    "NUMBERS",
    "Family",
    "array_namespace",
    "as_numpy",
    "cast",
    "describe",
    "dtype_name",
    "FLOAT_DTYPES",
    "require_real_float",
    "has_complex_leaf",
    "is_complex",
    "family_of",
    "from_numpy",
    "is_array",
    "namespace",
    "owned",
    "register_family",
    "shape_of",
    "size_of",
    "sparse_family",
    "sparse_format",
    "traced_family",
    "unregister_family",
    "write_out",
]
