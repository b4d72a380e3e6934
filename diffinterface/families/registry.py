"""The registered array families, and detection by class without importing a framework.

``FAMILIES`` maps each family's name to its :class:`~.base.Family` (filled by
``families/__init__.py``, one :func:`register_family` line per family
module). A type's family is read from the module that defines it, as
array-api-compat's ``is_torch_array`` does, and remembered per type, so asking
never imports a framework and costs one dictionary look-up.

    >>> import numpy as np
    >>> from diffinterface.families import family_of
    >>> family_of(np.ones(3)), family_of(2.0), family_of("a")
    ('numpy', 'numpy', 'unknown')
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .base import Family, dtype_name

#: the registered families by name, in registration order
FAMILIES: dict[str, Family] = {}

#: the family of Python numbers, and of what is built from them alone (a pytree of floats, say)
NUMBERS = "numpy"

#: types whose family is known without asking: a bool is no array, though an int is one
_PRESET: dict = {bool: "unknown"}

_BY_TYPE: dict = dict(_PRESET)

#: the family of each type seen, whose sparse matrices it may be (None: no family's)
_SPARSE_BY_TYPE: dict = {}

#: the families' names, highest precedence first (see ``Family.precedence``)
_BY_PRECEDENCE: list = []


def register_family(family: Family) -> Family:
    """Add ``family`` to ``FAMILIES``, so that its arrays are detected everywhere; returns it.

    Parameters
    ----------
    family : Family
        An instance of a :class:`~.base.Family` subclass; a family of the same name is replaced.

    Returns
    -------
    Family
        ``family``.

    Examples
    --------
    >>> import numpy as np
    >>> from diffinterface.families import FAMILIES, Family, family_of, register_family, unregister_family
    >>> Toy = type("Toy", (), {"__module__": "toy_arrays", "shape": (2,), "dtype": np.dtype("float64")})
    >>> class ToyFamily(Family):
    ...     name, modules, namespace_module = "toy", ("toy_arrays",), "numpy"
    >>> register_family(ToyFamily())
    <Family toy>
    >>> family_of(Toy())
    'toy'
    >>> unregister_family("toy"); family_of(Toy())
    'unknown'
    """
    if not isinstance(family, Family):
        raise TypeError(
            f"family: expected an instance of a diffinterface.families.Family subclass; "
            f"got {type(family).__name__}"
        )
    FAMILIES[family.name] = family
    _forget_types()
    return family


def unregister_family(name: str) -> None:
    """Remove the family ``name`` from ``FAMILIES`` (its arrays become "unknown")."""
    del FAMILIES[name]
    _forget_types()


def _forget_types() -> None:
    """Start the per-type caches again from the families' own types (a new family may own a type seen before)."""
    _BY_TYPE.clear()
    _BY_TYPE.update(_PRESET)
    for family in FAMILIES.values():
        _BY_TYPE.update(dict.fromkeys(family.types, family.name))
    _SPARSE_BY_TYPE.clear()
    _BY_PRECEDENCE[:] = sorted(FAMILIES, key=lambda name: -FAMILIES[name].precedence)


def _family_of_type(cls) -> str:
    name = next((f.name for f in FAMILIES.values() if f.owns(cls)), "unknown")
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


def traced_family(x) -> Optional[Family]:
    """The family of the first array leaf of ``x`` (an array or a pytree) that is a traced value
    without concrete values (:meth:`Family.has_values`), or None when every leaf has values.

    >>> import numpy as np
    >>> traced_family({"a": np.ones(2), "b": 1.0}) is None
    True
    """
    name = _BY_TYPE.get(x.__class__)
    if name is not None:  # an array itself: no tree to walk, and no pytree library to import
        family = FAMILIES.get(name)
        return family if family is not None and not family.has_values(x) else None
    import optree

    for leaf in optree.tree_leaves(x, none_is_leaf=True):
        family = FAMILIES.get(family_of(leaf))
        if family is not None and not family.has_values(leaf):
            return family
    return None


def as_numpy(a):
    """``a``, an array of any family or a Python number, as a numpy array (a view where it can).

    >>> as_numpy(2.0)
    array(2.)
    """
    family = FAMILIES.get(family_of(a))
    return np.asarray(a) if family is None else np.asarray(family.to_numpy(a))


def from_any_family(family: Family, a):
    """``a``, an array of any family, in ``family`` through numpy (``a`` itself when it is one already).

    The ``from_dlpack`` of families whose arrays live in host memory, which
    read every other family's array through that family's ``to_numpy``.
    """
    return a if family_of(a) == family.name else family.from_numpy(as_numpy(a), None)


def sparse_family(a) -> Optional[Family]:
    """The family whose sparse matrices ``a`` may be (read from its type's module), else None."""
    cls = a.__class__
    try:
        return _SPARSE_BY_TYPE[cls]
    except KeyError:
        module = cls.__module__
        family = next(
            (
                f
                for f in FAMILIES.values()
                if f.sparse_modules and module.startswith(f.sparse_modules)
            ),
            None,
        )
        _SPARSE_BY_TYPE[cls] = family
        return family


def sparse_format(a) -> Optional[str]:
    """ "scipy-csr", "torch-csr" or "bcoo" for the sparse matrices diffinterface returns, else None.

    >>> import numpy as np
    >>> sparse_format(np.eye(2)) is None
    True
    """
    family = sparse_family(a)
    return None if family is None else family.sparse_format(a)


def shape_of(x) -> tuple:
    """``x.shape`` as a tuple of ints (``()`` for Python numbers)."""
    shape = getattr(x, "shape", None)
    return () if shape is None else tuple(shape)


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
    return entry.namespace()


def array_namespace(*arrays):
    """The array-API namespace of the inputs, so one function source serves every backend.

    numpy arrays give ``numpy``; torch tensors array-api-compat's torch
    namespace; JAX arrays and tracers ``jax.numpy``; autograd's boxes an
    array-API namespace over ``autograd.numpy``. Mixed inputs give the
    namespace of the framework that is tracing (autograd boxes over JAX over
    torch over numpy). Python numbers (``bool``, ``int``, ``float``,
    ``complex``) never decide: alone they give ``numpy``.

    Parameters
    ----------
    *arrays : arrays or Python numbers
        The values whose namespace is wanted, usually ``f``'s ``x`` (what the
        backend passes in: a numpy array, a tensor, a tracer or a box).

    Returns
    -------
    module
        A namespace with the array API's functions (``xp.sin``, ``xp.sum``,
        ``xp.stack``, ...) that the tracing framework differentiates.

    Raises
    ------
    TypeError
        An argument of no array family known to diffinterface.

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
    # Python numbers adapt to any array they meet, so they decide nothing unless they are all there
    # is.
    families = {family_of(a) for a in arrays if a.__class__ not in _PYTHON_SCALARS}
    if not families and arrays:
        return FAMILIES["numpy"].namespace()
    for family in _BY_PRECEDENCE:
        if family in families:
            return FAMILIES[family].namespace()
    raise TypeError(
        "array_namespace(*arrays): expected numpy, torch, JAX or autograd arrays or Python numbers; got "
        + ", ".join(type(a).__name__ for a in arrays)
    )


_PYTHON_SCALARS = frozenset((bool, int, float, complex))


#: the real floating-point dtypes diffinterface differentiates in
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


def require_real_float(value, name, fix):
    """Raise a TypeError naming ``name`` unless ``value`` (an array or a float) has a real floating dtype.

    ``fix`` starts the message's advice (diffinterface does not change dtypes).
    """
    if value.__class__ is not float and dtype_name(value) not in FLOAT_DTYPES:
        raise TypeError(
            f"{name}: expected a real floating-point array (float32 or float64); got "
            f"{describe(value)}. {fix}: diffinterface does not change dtypes."
        )


def is_complex(value):
    """True for an array (of any family, traced values included) of a complex dtype."""
    return (
        value.__class__ is not float and is_array(value) and dtype_name(value).startswith("complex")
    )


def has_complex_leaf(x):
    """True when ``x`` (an array or a pytree of arrays) holds a complex array; asked once, at preparation."""
    if is_array(x):
        return is_complex(x)
    try:
        import optree
    except ImportError:  # pragma: no cover - a pytree x needs optree anyway, which says so
        return False
    return any(is_complex(leaf) for leaf in optree.tree_leaves(x))
