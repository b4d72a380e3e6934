"""The autograd family: autograd's boxes, the values ``AutoAutograd`` traces f with.

Their namespace is :mod:`diffinterface.families.autograd_namespace`, an
array-API namespace over ``autograd.numpy`` whose functions all have
derivatives. Outside a traced function autograd's arrays are plain numpy
arrays (the numpy family). Boxes are immutable: no ``out=``.

    >>> import numpy as np
    >>> from diffinterface.families import FAMILIES
    >>> FAMILIES["autograd"].ravel([np.ones((2, 1)), np.zeros(1)], "float64")
    array([1., 1., 0.])
"""

from __future__ import annotations

import numpy as np

from .base import Family, dtype_name
from .registry import from_any_family


class AutogradFamily(Family):
    """autograd's boxes (``ArrayBox`` and the forward-mode ones), over numpy values."""

    name = "autograd"
    #: its boxes trace the others: the namespace of the functions autograd differentiates
    precedence = 3
    concrete = False
    modules = ("autograd",)
    namespace_module = "diffinterface.families.autograd_namespace"
    limits = (
        (
            "'ArrayBox' object has no attribute 'mT'",
            "the array API's matrix transpose attribute (x.mT)",
            "use xp.matrix_transpose(x), which every backend differentiates",
        ),
        (
            "bad operand type for unary +: 'ArrayBox'",
            "the unary plus of the array API (+x)",
            "write x itself, or xp.positive(x)",
        ),
    )

    from_dlpack = from_any_family

    def from_numpy(self, a, like):
        return a

    def to_numpy(self, a):
        from autograd.tracer import getval

        return np.asarray(getval(a))

    def cast(self, a, dtype):
        from .autograd_namespace import astype

        return astype(a, dtype, copy=False)

    def ravel(self, leaves, dtype):
        import autograd.numpy as anp

        return anp.concatenate(
            [(a if dtype_name(a) == dtype else self.cast(a, dtype)).reshape(-1) for a in leaves]
        )

    def stack(self, arrays, axis=0):
        import autograd.numpy as anp

        return anp.stack(list(arrays), axis=axis)

    def device(self, a):
        return "cpu"
