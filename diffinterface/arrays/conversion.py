"""Building arrays of a family, casting, and writing results into the user's buffers (``out=``, ``y=``)."""

from __future__ import annotations

import numpy as np

from .families import FAMILIES, describe, dtype_name, family_of, shape_of


def from_numpy(a, family, like):
    """The numpy array ``a`` in ``family``, with its dtype kept and on ``like``'s device.

    >>> import numpy as np
    >>> from_numpy(np.ones(2), "numpy", None)
    array([1., 1.])
    """
    return FAMILIES[family].from_numpy(a, like)


def cast(a, dtype):
    """``a`` as ``dtype`` (a name) in its own family; ``a`` itself when it already is."""
    if dtype_name(a) == dtype:
        return a
    if family_of(a) == "torch":
        import torch

        return a.to(getattr(torch, dtype))
    return a.astype(dtype)


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
                         f"call without {name}=")
    expected = f"a {sparse} matrix of shape {shape_of(result)} and dtype {dtype_name(result)} with the prepared pattern"
    if sparse_format(out) != sparse or shape_of(out) != shape_of(result) or dtype_name(out) != dtype_name(result):
        given = f"{sparse_format(out) or type(out).__name__} of shape {shape_of(out)} and dtype {dtype_name(out)}"
        raise ValueError(f"{name}: expected {expected}; got a {given}")
    if sparse == "torch-csr":
        same = out.col_indices() is result.col_indices() or (
            out.col_indices().shape == result.col_indices().shape
            and bool((out.col_indices() == result.col_indices()).all())
            and bool((out.crow_indices() == result.crow_indices()).all())
        )
        if not same:
            raise ValueError(f"{name}: expected {expected}; got a matrix with another pattern")
        out.values().copy_(result.values())
        return out
    same = out.indices is result.indices or (
        out.indices.shape == result.indices.shape
        and np.array_equal(out.indices, result.indices) and np.array_equal(out.indptr, result.indptr)
    )
    if not same:
        raise ValueError(f"{name}: expected {expected}; got a matrix with another pattern")
    np.copyto(out.data, result.data)
    return out


def write_out(out, result, name="out"):
    """Copy ``result`` into the user's buffer ``out`` (checked) and return ``out``.

    Tuples of results go into tuples of buffers; a ``None`` entry keeps that result as it is.

    >>> import numpy as np
    >>> buffer = np.zeros(2)
    >>> write_out(buffer, np.ones(2)) is buffer
    True
    """
    if isinstance(result, tuple):
        if not isinstance(out, tuple) or len(out) != len(result):
            raise ValueError(
                f"{name}: expected a tuple of {len(result)} buffers (None entries allowed); "
                f"got {type(out).__name__}" + (f" of length {len(out)}" if isinstance(out, tuple) else "")
            )
        return tuple(r if o is None else write_out(o, r, f"{name}[{i}]") for i, (o, r) in enumerate(zip(out, result)))
    sparse = sparse_format(result)
    if sparse is not None:
        return _write_sparse(out, result, name, sparse)
    if (
        family_of(out) != family_of(result)
        or shape_of(out) != shape_of(result)
        or dtype_name(out) != dtype_name(result)
    ):
        raise ValueError(f"{name}: expected a buffer like the result, a {describe(result)}; got a {describe(out)}")
    family = FAMILIES[family_of(out)]
    if family.write is None:
        raise ValueError(
            f"{name}: {family.name} arrays are immutable and cannot be written in place; call without {name}="
        )
    problem = family.write(out, result)
    if problem is not None:
        raise ValueError(f"{name}: {problem}")
    return out
