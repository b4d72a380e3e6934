"""Array families without importing frameworks.

A *family* is the library an array belongs to: ``"numpy"`` (also Python
scalars), ``"torch"``, ``"jax"`` or ``"autograd"`` (autograd's boxes inside a
traced function). Families are read from the type's module, as array-api-compat
does, so asking never imports a framework.

    >>> import numpy as np, diffinterface as di
    >>> di.array_namespace(np.ones(3)).__name__
    'numpy'
"""

from __future__ import annotations

import sys

import numpy as np

_NUMPY_TYPES = (np.ndarray, np.generic, float, int)


def family_of(x) -> str:
    """The array family of ``x``: "numpy", "torch", "jax" or "autograd"."""
    if isinstance(x, _NUMPY_TYPES):
        return "numpy"
    module = type(x).__module__
    if module.startswith("torch"):
        return "torch"
    if module.startswith(("jax", "jaxlib")):
        return "jax"
    if module.startswith("autograd"):
        return "autograd"
    return "unknown"


def is_array(x) -> bool:
    """True for anything with a shape and dtype in a known family (or a Python number)."""
    return family_of(x) != "unknown" and not isinstance(x, bool)


def shape_of(x) -> tuple:
    """``x.shape`` as a tuple of ints (``()`` for Python numbers)."""
    shape = getattr(x, "shape", None)
    return () if shape is None else tuple(shape)


def dtype_name(x) -> str:
    """A family-independent dtype name: "float64", "float32", "complex128"..."""
    if isinstance(x, float):
        return "float64"
    if isinstance(x, int):
        return "int64"
    dtype = getattr(x, "dtype", None)
    return str(dtype).replace("torch.", "") if dtype is not None else type(x).__name__


def describe(x) -> str:
    """Family, dtype and shape of ``x`` in one short string, for error messages."""
    if not is_array(x):
        return f"{type(x).__name__} object"
    return f"{family_of(x)} {dtype_name(x)} array of shape {shape_of(x)}"


def size_of(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def array_namespace(*arrays):
    """The array-API namespace of the inputs, so one function source serves every backend.

    numpy arrays give ``numpy``; torch tensors array-api-compat's torch namespace;
    JAX arrays and tracers ``jax.numpy``; autograd's boxes ``autograd.numpy``.
    Mixed inputs give the namespace of the framework that is tracing (autograd
    boxes over JAX over torch over numpy).

        >>> import numpy as np, diffinterface as di
        >>> def f(x):
        ...     xp = di.array_namespace(x)
        ...     return xp.sum(xp.sin(x) * x ** 2)
        >>> float(f(np.zeros(3)))
        0.0
    """
    families = {family_of(a) for a in arrays}
    for family in ("autograd", "jax", "torch", "numpy"):
        if family in families:
            return namespace(family)
    raise TypeError(
        "array_namespace(*arrays) expected numpy, torch, JAX or autograd arrays; got "
        + ", ".join(type(a).__name__ for a in arrays)
    )


def namespace(family: str):
    """The namespace module for an array family (imports that framework)."""
    if family == "numpy":
        return np
    if family == "jax":
        import jax.numpy

        return jax.numpy
    if family == "torch":
        try:
            import array_api_compat.torch as xp
        except ImportError:  # pragma: no cover - array-api-compat is in the torch extra
            import torch as xp
        return xp
    if family == "autograd":
        import autograd.numpy

        return autograd.numpy
    raise TypeError(f"unknown array family {family!r}")


def from_numpy(a, family, like):
    """The numpy array ``a`` in ``family``, with its dtype kept and on ``like``'s device.

    JAX would truncate float64 to float32 unless x64 is on: the conversion
    switches it on for this thread only, and only for float64.
    """
    if family == "numpy":
        return a
    if family == "torch":
        import torch

        return torch.from_numpy(a).to(like.device)
    if family == "jax":
        import jax

        with jax.enable_x64(a.dtype == np.float64):
            return jax.device_put(a, like.device if hasattr(like, "device") else None)
    return namespace(family).asarray(a)


def sparse_format(a):
    """"scipy-csr", "torch-csr" or "bcoo" for the sparse matrices diffinterface returns, else None."""
    module = type(a).__module__
    if module.startswith("scipy.sparse"):
        return "scipy-" + a.format
    if module.startswith("jax.experimental.sparse"):
        return "bcoo"
    if module.startswith("torch") and str(getattr(a, "layout", "")) == "torch.sparse_csr":
        return "torch-csr"
    return None


def _write_sparse(out, result, name, sparse):
    """Overwrite the values of the sparse ``out``, which must have ``result``'s pattern."""
    if sparse == "bcoo":
        raise ValueError(f"{name}: JAX sparse matrices (BCOO) are immutable and cannot be written in place; "
                         "call without out=")
    expected = f"a {sparse} matrix of shape {shape_of(result)} and dtype {dtype_name(result)} with the prepared pattern"
    if sparse_format(out) != sparse or shape_of(out) != shape_of(result) or dtype_name(out) != dtype_name(result):
        given = f"{sparse_format(out) or type(out).__name__} of shape {shape_of(out)} and dtype {dtype_name(out)}"
        raise ValueError(f"{name}: expected {expected}; got a {given}")
    if sparse == "torch-csr":
        same = (out.col_indices() is result.col_indices() or
                (out.col_indices().shape == result.col_indices().shape
                 and bool((out.col_indices() == result.col_indices()).all())
                 and bool((out.crow_indices() == result.crow_indices()).all())))
        if not same:
            raise ValueError(f"{name}: expected {expected}; got a matrix with another pattern")
        out.values().copy_(result.values())
        return out
    same = out.indices is result.indices or (
        out.indices.shape == result.indices.shape
        and np.array_equal(out.indices, result.indices) and np.array_equal(out.indptr, result.indptr))
    if not same:
        raise ValueError(f"{name}: expected {expected}; got a matrix with another pattern")
    np.copyto(out.data, result.data)
    return out


def framework_loaded(name: str) -> bool:
    return name in sys.modules


def write_out(out, result, name="out"):
    """Copy ``result`` into the user's buffer ``out`` (checked) and return ``out``.

    Tuples of results go into tuples of buffers.
    """
    if isinstance(result, tuple):
        if not isinstance(out, tuple) or len(out) != len(result):
            raise ValueError(
                f"{name}: expected a tuple of {len(result)} buffers (one per tangent); "
                f"got {type(out).__name__}"
                + (f" of length {len(out)}" if isinstance(out, tuple) else "")
            )
        return tuple(write_out(o, r, f"{name}[{i}]") for i, (o, r) in enumerate(zip(out, result)))
    sparse = sparse_format(result)
    if sparse is not None:
        return _write_sparse(out, result, name, sparse)
    if (
        family_of(out) != family_of(result)
        or shape_of(out) != shape_of(result)
        or dtype_name(out) != dtype_name(result)
    ):
        raise ValueError(f"{name}: expected a buffer like the result, a {describe(result)}; got a {describe(out)}")
    family = family_of(out)
    if family == "numpy":
        if not isinstance(out, np.ndarray):
            raise ValueError(f"{name}: expected a writable numpy array; got {type(out).__name__}")
        np.copyto(out, result)
    elif family == "torch":
        out.copy_(result)
    else:
        raise ValueError(
            f"{name}: {family} arrays are immutable and cannot be written in place; "
            "call without out="
        )
    return out
