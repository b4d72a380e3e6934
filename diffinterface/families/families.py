"""Array families as one table, detected by class without importing a framework.

A *family* is the library an array belongs to: ``"numpy"`` (also Python
numbers), ``"torch"``, ``"jax"`` or ``"autograd"`` (autograd's boxes inside a
traced function). A type's family is read from the module that defines it, as
array-api-compat's ``is_torch_array`` does, and remembered per type, so asking
never imports a framework and costs one dictionary look-up.

    >>> import numpy as np
    >>> from diffinterface.families import family_of
    >>> family_of(np.ones(3)), family_of(2.0), family_of("a")
    ('numpy', 'numpy', 'unknown')
"""

from __future__ import annotations

import importlib
from typing import Callable, Optional

import numpy as np

from ..frozen import Frozen


def _torch_from_numpy(a, like):
    import torch

    return torch.from_numpy(a).to(like.device)


def _jax_from_numpy(a, like):
    import jax

    # JAX truncates float64 to float32 unless x64 is on: switch it on for this thread only.
    with jax.enable_x64(a.dtype == np.float64):
        return jax.device_put(a, like.device if hasattr(like, "device") else None)


def _autograd_from_numpy(a, like):
    return a


def _numpy_cast(a, dtype):
    return a.astype(dtype)


def _torch_cast(a, dtype):
    import torch

    return a.to(getattr(torch, dtype))


def _autograd_cast(a, dtype):
    from .autograd_namespace import astype

    return astype(a, dtype, copy=False)


def _numpy_ravel(leaves, dtype):
    return np.concatenate([(a if dtype_name(a) == dtype else a.astype(dtype)).reshape(-1) for a in leaves])


def _torch_ravel(leaves, dtype):
    import torch

    return torch.cat([(a if dtype_name(a) == dtype else _torch_cast(a, dtype)).reshape(-1) for a in leaves])


def _jax_ravel(leaves, dtype):
    import jax

    # float64 exists in JAX only under x64: on for this thread only
    with jax.enable_x64(dtype == "float64"):
        return jax.numpy.concatenate([(a if dtype_name(a) == dtype else a.astype(dtype)).reshape(-1) for a in leaves])


def _autograd_ravel(leaves, dtype):
    import autograd.numpy as anp

    return anp.concatenate([(a if dtype_name(a) == dtype else _autograd_cast(a, dtype)).reshape(-1) for a in leaves])


def _torch_to_numpy(a):
    return a.detach().cpu().numpy()


def _autograd_to_numpy(a):
    from autograd.tracer import getval

    return np.asarray(getval(a))


def _numpy_write(out, result):
    if not isinstance(out, np.ndarray):
        return f"expected a writable numpy array; got {type(out).__name__}"
    if not out.flags.writeable:
        return "expected a writable numpy array; got a read-only one"
    np.copyto(out, result)
    return None


def _torch_write(out, result):
    out.copy_(result)
    return None


class Family(Frozen):
    """One array family: how to recognize its arrays, its namespace, and how to build and write them."""

    name: str
    #: modules whose types belong to the family (``type(a).__module__`` starts with one)
    modules: tuple
    #: the module giving its array-API namespace, imported on demand
    namespace_module: str
    #: ``(numpy array, like) -> array of this family`` on ``like``'s device, dtype kept
    from_numpy: Optional[Callable] = None
    #: ``(out, result) -> None or a reason``: copies ``result`` into the user's buffer ``out``
    write: Optional[Callable] = None
    #: an attribute of its arrays holding their shape and dtype as plain attributes, when the
    #: arrays' own ``shape``/``dtype`` are slower properties reading it (the prepared-call check uses it)
    metadata: Optional[str] = None
    #: ``(a, dtype name) -> a`` as that dtype, in this family (traced values included)
    cast: Callable = _numpy_cast
    #: ``(leaves, dtype name) -> 1-D array``: the leaves cast to ``dtype``, flattened and concatenated
    ravel: Callable = _numpy_ravel
    #: ``a -> numpy array`` (a copy or a view, never a traced value)
    to_numpy: Callable = np.asarray


FAMILIES = {
    family.name: family
    for family in (
        Family("numpy", ("numpy",), "numpy", lambda a, like: a, _numpy_write),
        Family("torch", ("torch",), "array_api_compat.torch", _torch_from_numpy, _torch_write,
               cast=_torch_cast, ravel=_torch_ravel, to_numpy=_torch_to_numpy),
        Family("jax", ("jax", "jaxlib"), "jax.numpy", _jax_from_numpy, metadata="aval", ravel=_jax_ravel),
        Family("autograd", ("autograd",), "diffinterface.families.autograd_namespace", _autograd_from_numpy,
               cast=_autograd_cast, ravel=_autograd_ravel, to_numpy=_autograd_to_numpy),
    )
}

_BY_TYPE = {np.ndarray: "numpy", float: "numpy", int: "numpy", bool: "unknown"}


def _family_of_type(cls) -> str:
    if issubclass(cls, np.generic):
        name = "numpy"
    else:
        module = cls.__module__
        name = next((f.name for f in FAMILIES.values() if module.startswith(f.modules)), "unknown")
    _BY_TYPE[cls] = name
    return name


def family_of(x) -> str:
    """The array family of ``x``: "numpy", "torch", "jax", "autograd", or "unknown"."""
    name = _BY_TYPE.get(x.__class__)
    return name if name is not None else _family_of_type(x.__class__)


def is_array(x) -> bool:
    """True for anything with a shape and dtype in a known family (or a Python number, not a bool)."""
    name = _BY_TYPE.get(x.__class__)
    return (name if name is not None else _family_of_type(x.__class__)) != "unknown"


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


def size_of(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def describe(x) -> str:
    """Family, dtype and shape of ``x`` in one short string, for error messages."""
    if not is_array(x):
        return f"{type(x).__name__} object"
    return f"{family_of(x)} {dtype_name(x)} array of shape {shape_of(x)}"


def namespace(family: str):
    """The array-API namespace module of a family (imports that framework)."""
    entry = FAMILIES.get(family)
    if entry is None:
        raise TypeError(f"family: expected one of {', '.join(FAMILIES)}; got {family!r}")
    if entry.name == "numpy":
        return np
    return importlib.import_module(entry.namespace_module)


#: which family's namespace wins when arrays of several families meet: the framework that traces
_PRECEDENCE = ("autograd", "jax", "torch", "numpy")


def array_namespace(*arrays):
    """The array-API namespace of the inputs, so one function source serves every backend.

    numpy arrays give ``numpy``; torch tensors array-api-compat's torch
    namespace; JAX arrays and tracers ``jax.numpy``; autograd's boxes an
    array-API namespace over ``autograd.numpy``. Mixed inputs give the
    namespace of the framework that is tracing (autograd boxes over JAX over
    torch over numpy). Python numbers (``bool``, ``int``, ``float``,
    ``complex``) never decide: alone they give ``numpy``.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> def f(x):
    ...     xp = di.array_namespace(x)
    ...     return xp.sum(xp.sin(x) * x ** 2)
    >>> float(f(np.zeros(3)))
    0.0
    >>> di.array_namespace(1j, True).__name__, di.array_namespace(2.0, np.ones(2)).__name__
    ('numpy', 'numpy')
    """
    # Python numbers adapt to any array they meet, so they decide nothing unless they are all there is.
    families = {family_of(a) for a in arrays if a.__class__ not in _PYTHON_SCALARS}
    if not families and arrays:
        return np
    for family in _PRECEDENCE:
        if family in families:
            return namespace(family)
    raise TypeError(
        "array_namespace(*arrays): expected numpy, torch, JAX or autograd arrays or Python numbers; got "
        + ", ".join(type(a).__name__ for a in arrays)
    )


_PYTHON_SCALARS = frozenset((bool, int, float, complex))
