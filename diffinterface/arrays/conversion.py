"""Building arrays of a family, casting, and writing results into the user's buffers (``out=``, ``y=``)."""

from __future__ import annotations

from .families import FAMILIES, describe, dtype_name, family_of, shape_of


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
    family = family_of(a)
    if family == "torch":
        import torch

        return a.to(getattr(torch, dtype))
    if family == "autograd":
        return _autograd_cast()(a, dtype)
    return a.astype(dtype)


_AUTOGRAD_CAST = []


def _autograd_cast():
    """A cast autograd differentiates in both modes (its own ``astype`` has no forward-mode rule)."""
    if not _AUTOGRAD_CAST:
        from autograd.extend import defjvp, defvjp, primitive

        @primitive
        def cast_box(a, dtype):
            return a.astype(dtype)

        defvjp(cast_box, lambda ans, a, dtype: lambda g: cast_box(g, a.dtype))
        defjvp(cast_box, lambda g, ans, a, dtype: cast_box(g, dtype))
        _AUTOGRAD_CAST.append(cast_box)
    return _AUTOGRAD_CAST[0]


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
