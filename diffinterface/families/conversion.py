"""Building arrays of a family, casting, and writing results into the user's buffers (``out=``, ``y=``)."""

from __future__ import annotations

import numpy as np

from .registry import (
    FAMILIES,
    describe,
    dtype_name,
    family_of,
    shape_of,
    sparse_family,
    sparse_format,
)


def owned(x):
    """``x`` as an adapter hands it to f at the user's x itself: a fresh copy of a NumPy array, any
    other value as it is.

    f may write into its argument (``x[0] = 0.0``, ``x += 1``): given the
    caller's own array, it would change the user's x (inputs are never
    mutated), and every later point formed from x would start from the
    changed values. Points an adapter forms from x (``x + h``) are fresh
    arrays already; Python and NumPy scalars cannot be written into.

    >>> import numpy as np
    >>> x = np.ones(2)
    >>> owned(x) is x, owned(1.5)
    (False, 1.5)
    """
    return x.copy() if isinstance(x, np.ndarray) else x


def from_numpy(a, family, like):
    """The numpy array ``a`` in ``family``, with its dtype kept and on ``like``'s device.

    >>> import numpy as np
    >>> from_numpy(np.ones(2), "numpy", None)
    array([1., 1.])
    """
    return FAMILIES[family].from_numpy(a, like)


def cast(a, dtype):
    """``a`` as ``dtype`` (a name) in its own family, traced values included; ``a`` itself when it already is."""
    if dtype_name(a) == dtype:
        return a
    return FAMILIES[family_of(a)].cast(a, dtype)


def write_out(out, result, name="out", avoid=None):
    """Copy ``result`` into the user's buffer ``out`` (checked) and return ``out``.

    Tuples of results go into tuples of buffers; a ``None`` entry keeps that
    result as it is. Every buffer is checked before any is written, so a
    refused ``out=`` leaves all of them unchanged; ``avoid`` (x) must not
    share memory with any buffer.

    >>> import numpy as np
    >>> buffer = np.zeros(2)
    >>> write_out(buffer, np.ones(2)) is buffer
    True
    """
    pairs = list(_pairs(out, result, name))
    for o, r, label in pairs:
        if sparse_format(r) is not None:
            _check_sparse_buffer(o, r, label)
        else:
            _check_buffer(o, r, label, avoid)
    for o, r, label in pairs:
        if sparse_format(r) is not None:
            _write_sparse_values(o, r, label)
            continue
        problem = FAMILIES[family_of(o)].write(o, r)
        if problem is not None:
            raise ValueError(f"{label}: {problem}")
    return _written(out, result)


def _check_sparse_buffer(out, result, name):
    """The sparse ``out`` must have ``result``'s format, shape, dtype and pattern (only values are written)."""
    family = sparse_family(result)
    if family.write is None:
        raise ValueError(
            f"{name}: {family.sparse_type} are immutable and cannot be written in place; "
            f"call without {name}="
        )
    sparse = sparse_format(result)
    expected = f"a {sparse} matrix of shape {shape_of(result)} and dtype {dtype_name(result)} with the prepared pattern"
    if (
        sparse_format(out) != sparse
        or shape_of(out) != shape_of(result)
        or dtype_name(out) != dtype_name(result)
    ):
        given = f"{sparse_format(out) or type(out).__name__} of shape {shape_of(out)} and dtype {dtype_name(out)}"
        raise ValueError(f"{name}: expected {expected}; got a {given}")
    if not family.same_sparse_pattern(out, result):
        raise ValueError(f"{name}: expected {expected}; got a matrix with another pattern")


def _write_sparse_values(out, result, name):
    family = sparse_family(result)
    problem = family.write(family.sparse_values(out), family.sparse_values(result))
    if problem is not None:
        raise ValueError(f"{name}: {problem}")


def _written(out, result):
    """``out``, with the results of its None entries in their place."""
    if isinstance(result, tuple):
        return tuple(r if o is None else _written(o, r) for o, r in zip(out, result))
    return out


def _pairs(out, result, name):
    if isinstance(result, tuple):
        if not isinstance(out, tuple) or len(out) != len(result):
            raise ValueError(
                f"{name}: expected a tuple of {len(result)} buffers (None entries allowed); "
                f"got {type(out).__name__}"
                + (f" of length {len(out)}" if isinstance(out, tuple) else "")
            )
        for i, (o, r) in enumerate(zip(out, result)):
            if o is not None:
                yield from _pairs(o, r, f"{name}[{i}]")
        return
    yield out, result, name


def _check_buffer(out, result, name, avoid):
    if (
        family_of(out) != family_of(result)
        or shape_of(out) != shape_of(result)
        or dtype_name(out) != dtype_name(result)
    ):
        raise ValueError(
            f"{name}: expected a buffer like the result, a {describe(result)}; got a {describe(out)}"
        )
    family = FAMILIES[family_of(out)]
    if family.write is None:
        raise ValueError(
            f"{name}: {family.name} arrays are immutable and cannot be written in place; call without {name}="
        )
    if getattr(out, "flags", None) is not None and not out.flags.writeable:
        raise ValueError(f"{name}: expected a writable buffer; got a read-only {describe(out)}")
    if getattr(out, "requires_grad", False):
        raise ValueError(
            f"{name}: expected a buffer outside autograd's graph; got a tensor that requires grad"
        )
    if (
        avoid is not None
        and family_of(avoid) == family_of(out)
        and family.shares_memory(out, avoid)
    ):
        raise ValueError(
            f"{name}: the buffer shares memory with x, which diffinterface never modifies; "
            "pass a separate buffer"
        )
