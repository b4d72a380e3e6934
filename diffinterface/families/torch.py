"""The torch family: tensors (``Parameter`` included), and sparse CSR tensors as its sparse type.

Nothing here imports torch until a method is called on a tensor.

    >>> import numpy as np, torch
    >>> from diffinterface.families import FAMILIES
    >>> torch_family = FAMILIES["torch"]
    >>> torch_family.cast(torch.ones(2), "float64").dtype, torch_family.to_numpy(torch.ones(2, requires_grad=True))
    (torch.float64, array([1., 1.], dtype=float32))
"""

from __future__ import annotations

import warnings

import numpy as np

from .base import Family, dtype_name
from .numpy import row_pointers
from .registry import as_numpy


def _shared_tensor(a):
    """``a`` as a tensor sharing its memory, or a copy where torch cannot (negative strides, ``a[::-1]``)."""
    import torch

    try:
        return torch.from_numpy(a)
    except ValueError:
        return torch.from_numpy(a.copy())


class TorchFamily(Family):
    """torch tensors; their namespace is array-api-compat's torch (symmetric-matrix routines read the symmetric part: ``torch_namespace.py``); sparse matrices: sparse CSR tensors."""

    name = "torch"
    modules = ("torch",)
    namespace_module = "diffinterface.families.torch_namespace"
    precedence = 1
    sparse_modules = ("torch",)
    sparse_type = "torch sparse CSR tensors"
    traced_by = "a torch.func transform (vmap, grad, jacrev, jacfwd)"
    limits = (
        (
            "step must be greater than zero",
            "slicing with a negative step (x[::-1])",
            "reverse with xp.flip(x, axis=...) instead, which every backend differentiates",
        ),
    )

    def has_values(self, a):
        import torch

        # torch.func wraps the tensors it transforms; a batched one has no values of its own
        return not torch._C._functorch.is_functorch_wrapped_tensor(a)

    def from_numpy(self, a, like):
        return _shared_tensor(a).to(like.device)

    def to_numpy(self, a):
        return a.detach().cpu().numpy()

    def from_dlpack(self, a):
        import torch

        if isinstance(a, torch.Tensor):
            return a
        if hasattr(a, "__dlpack__") and not isinstance(a, np.ndarray):
            return torch.from_dlpack(a)  # a JAX array: shared, on its device
        a = as_numpy(a)
        # torch cannot mark a tensor read-only: a read-only buffer (a JAX value's) is copied first
        return _shared_tensor(a if a.flags.writeable else a.copy())

    def cast(self, a, dtype):
        import torch

        return a.to(getattr(torch, dtype))

    def real_view(self, a):
        import torch

        return torch.view_as_real(a.resolve_conj())  # a view, no copy; differentiable

    def complex_from_parts(self, re, im):
        import torch

        return torch.complex(re, im)

    def ravel(self, leaves, dtype):
        import torch

        return torch.cat(
            [(a if dtype_name(a) == dtype else self.cast(a, dtype)).reshape(-1) for a in leaves]
        )

    def stack(self, arrays, axis=0):
        import torch

        return torch.stack(arrays, dim=axis)

    def write(self, out, result):
        out.copy_(result)
        return None

    def shares_memory(self, a, b):
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()

    def device(self, a):
        return a.device

    def to_device(self, a, device):
        return a.to(device)

    # -- sparse CSR tensors -----------------------------------------------------------------------

    def sparse_format(self, a):
        return "torch-csr" if str(getattr(a, "layout", "")) == "torch.sparse_csr" else None

    def is_sparse(self, a):
        return str(getattr(a, "layout", "torch.strided")) != "torch.strided"

    def sparse_values(self, matrix):
        return matrix.values()

    def same_sparse_pattern(self, out, result):
        return out.col_indices() is result.col_indices() or (
            out.col_indices().shape == result.col_indices().shape
            and bool((out.col_indices() == result.col_indices()).all())
            and bool((out.crow_indices() == result.crow_indices()).all())
        )

    def sparse_coordinates(self, matrix):
        matrix = matrix.to_sparse_coo().coalesce()
        indices = matrix.indices().cpu().numpy()
        return matrix.values().detach().cpu().numpy(), indices[0], indices[1]

    def index_array(self, indices, like):
        import torch

        return torch.from_numpy(indices).to(like.device)

    def sparse_builder(self, rows, cols, shape, like):
        import torch

        crow = self.index_array(row_pointers(rows, shape[0]), like)
        col = self.index_array(cols.astype(np.int64), like)
        with warnings.catch_warnings():
            # torch warns once per process that sparse CSR is in beta: once here, silenced, and
            # never in a call
            warnings.simplefilter("ignore", UserWarning)
            torch.sparse_csr_tensor(crow, col, torch.zeros(len(col)), size=shape)

        def build(data):
            return torch.sparse_csr_tensor(crow, col, data, size=shape)

        return build

    def dense_builder(self, rows, cols, shape, dense_shape, like):
        import torch

        m, n = shape
        device = like.device
        flat = self.index_array(rows.astype(np.int64) * n + cols, like)

        def build(data):
            result = torch.zeros(m * n, dtype=data.dtype, device=device)
            result[flat] = data
            return result.reshape(dense_shape)

        return build
