"""Arrays of every family, handled without importing a framework until one is needed.

- :mod:`.families`: the table of array families, detection by class, shapes, dtypes,
  namespaces (``array_namespace``);
- :mod:`.conversion`: building arrays in a family, casting, writing into ``out=`` buffers.
"""

from .conversion import cast, from_numpy, write_out
from .families import (
    FAMILIES,
    Family,
    array_namespace,
    describe,
    dtype_name,
    family_of,
    is_array,
    namespace,
    shape_of,
    size_of,
)

__all__ = [
    "FAMILIES", "Family", "array_namespace", "cast", "describe", "dtype_name", "family_of", "from_numpy",
    "is_array", "namespace", "shape_of", "size_of", "write_out",
]
