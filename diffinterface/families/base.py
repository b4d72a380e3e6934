"""The ``Family`` protocol: everything diffinterface asks of an array family, in one class.

A family is the library an array belongs to. Each family module of this
package (``numpy.py``, ``torch.py``, ``jax.py``, ``autograd.py``) defines one
subclass of :class:`Family` and ``families/__init__.py`` registers one
instance of it (:func:`~diffinterface.families.registry.register_family`).
Every other module asks the registered instance (``FAMILIES[name]``) and
never branches on a family's name.

The defaults below follow the array API standard through the family's
namespace, so a family whose namespace is standard needs little more than
its name, its modules and its namespace; the built-in families override
what their framework does faster or differently. A family module imports its
framework inside its methods only: registering a family imports nothing.

    >>> import numpy as np
    >>> class Toy(Family):
    ...     name, modules, namespace_module = "toy", ("toy_arrays",), "numpy"
    >>> toy = Toy()
    >>> toy, toy.stack([np.ones(2), np.zeros(2)]).shape, toy.write is None
    (<Family toy>, (2, 2), True)
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Optional

import numpy as np


def dtype_name(x) -> str:
    """A family-independent dtype name: "float64", "float32", "complex128"...

    >>> import numpy as np
    >>> dtype_name(np.ones(2, dtype=np.float32)), dtype_name(1.0), dtype_name(3)
    ('float32', 'float64', 'int64')
    """
    if isinstance(x, float):
        return "float64"
    if isinstance(x, int):
        return "int64"
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return type(x).__name__
    text = str(dtype)
    # TensorFlow's dtypes print as "<dtype: 'float64'>", whose name is the plain one; a framework's
    # own dtype objects print qualified ("torch.float64", "<package>.<module>.float64"): the last part
    return dtype.name if text[0] == "<" else text.rpartition(".")[2]


class Family:
    """One array family: how to recognize its arrays, its namespace, and how to build, convert and write them.

    Attributes
    ----------
    name : str
        The family's name, as ``family_of`` returns it.
    modules : tuple of str
        Modules whose types belong to the family (``type(a).__module__`` starts with one).
    types : tuple of type
        Types of the family besides those (numpy's: Python ``float`` and ``int``).
    namespace_module : str
        The module giving its array-API namespace, imported on demand.
    precedence : int
        Which namespace wins when arrays of several families meet in one call: the highest, the
        framework that traces the others (autograd's boxes over JAX over torch over numpy).
    concrete : bool
        False for a family whose arrays exist only inside a traced function (autograd's boxes):
        values to close over, not data to hand to another framework.
    metadata : str or None
        An attribute of its arrays holding their shape and dtype as plain attributes, when the
        arrays' own ``shape``/``dtype`` are slower properties reading it (the prepared-call check uses it).
    write : callable or None
        ``write(out, result) -> None or a reason``: copies ``result`` into the user's buffer ``out``;
        None for families whose arrays are immutable.
    sparse_modules : tuple of str
        Modules whose types are the family's sparse matrices (checked with :meth:`sparse_format`).
    sparse_type : str
        What the family's sparse matrices are called, in error messages.
    scalar_results : bool
        True for a family whose reductions and indexing give scalars of their own type, not
        0-d arrays (numpy's ``np.float64``): the core turns such results into 0-d arrays
        (:meth:`as_result`).
    traced_by : str
        The transforms under which the family's arrays are traced values without concrete values
        (:meth:`has_values`), for error messages ("" for a family never traced so).
    traced_value_errors : frozenset of str
        Names of the framework's exceptions that refuse to read a traced value (numpy, ``float()``
        or ``.item()`` on it): :meth:`is_traced_value_error`.
    limits : tuple of (str, str, str)
        What the framework cannot do although the array API allows it, each as ``(words in its
        error, what is not supported, the way around it)``: the boundary names the limit that a
        failure of ``f`` shows (:func:`diffinterface.core.boundary.framework_limit`).
    """

    __slots__ = ()

    name: str
    modules: tuple
    types: tuple = ()
    namespace_module: str
    precedence: int = 0
    concrete: bool = True
    metadata: Optional[str] = None
    write: Optional[Callable[[Any, Any], Optional[str]]] = None
    sparse_modules: tuple = ()
    sparse_type: str = "sparse matrices"
    scalar_results: bool = False
    traced_by: str = ""
    traced_value_errors: frozenset = frozenset()
    #: what the framework's C functions say when given another family's array (no Python frame of
    #: theirs in the traceback to tell whose error it is)
    foreign_array_messages: tuple[str, ...] = ()
    limits: tuple[tuple[str, str, str], ...] = ()

    def __repr__(self):
        return f"<Family {self.name}>"

    # -- detection and namespace ---------------------------------------------------------------

    def owns(self, cls) -> bool:
        """True when the type ``cls`` belongs to the family (read from its module: imports nothing)."""
        return cls.__module__.startswith(self.modules)

    def namespace(self):
        """The family's array-API namespace module (imports the framework)."""
        return importlib.import_module(self.namespace_module)

    def has_values(self, a) -> bool:
        """False when ``a`` is a traced value with no concrete values to read (a JAX tracer inside
        ``jax.jit``, a batched tensor inside ``torch.func.vmap``); True for every array of a family
        that never traces so (this default)."""
        return True

    def is_traced_value_error(self, error) -> bool:
        """True when ``error`` is the framework refusing to read the values of one of its traced
        arrays (numpy called on a JAX tracer inside ``jax.jit``)."""
        kind = type(error)
        return (
            kind.__module__.startswith(self.modules) and kind.__name__ in self.traced_value_errors
        )

    def refuses_foreign_array(self, error) -> bool:
        """True when ``error`` is one of this framework's functions refusing another family's array."""
        return isinstance(error, (TypeError, ValueError)) and any(
            message in str(error) for message in self.foreign_array_messages
        )

    # -- building and converting ---------------------------------------------------------------

    def from_numpy(self, a, like):
        """The numpy array ``a`` in this family, dtype kept, on ``like``'s device.

        ``like`` is an array of this family; None (the default device) is
        accepted where the family has one default (not torch: use :meth:`from_dlpack`).
        """
        return self.namespace().asarray(a)

    def to_numpy(self, a):
        """``a`` as a numpy array (a copy or a view, never a traced value)."""
        return np.asarray(a)

    def from_dlpack(self, a):
        """A concrete array ``a`` of any family in this one, dtype kept.

        Memory is shared where both frameworks can: through DLPack (the result
        stays on ``a``'s device) or numpy's buffer. Otherwise the values go
        through numpy, to this family's default device. ``a`` itself when it
        already is one of this family. This default reads ``a`` with
        ``np.asarray``; the built-in families convert through ``a``'s own
        family (:func:`~diffinterface.families.registry.from_any_family`).
        """
        return a if self.owns(a.__class__) else self.from_numpy(np.asarray(a), None)

    def cast(self, a, dtype: str):
        """``a`` as the dtype named ``dtype``, in this family (traced values included)."""
        return self.namespace().astype(a, dtype)

    def ravel(self, leaves, dtype: str):
        """The ``leaves`` (arrays of this family) cast to ``dtype``, flattened and concatenated into one 1-D array."""
        xp = self.namespace()
        return xp.concat(
            [
                xp.reshape(a if dtype_name(a) == dtype else self.cast(a, dtype), (-1,))
                for a in leaves
            ]
        )

    def stack(self, arrays, axis: int = 0):
        """The ``arrays`` (of this family, one shape) joined along a new axis ``axis``."""
        return self.namespace().stack(list(arrays), axis=axis)

    def real_view(self, a):
        """The complex array ``a`` as real numbers: its real and imaginary parts stacked along a new last axis."""
        xp = self.namespace()
        return xp.stack((xp.real(a), xp.imag(a)), axis=-1)

    def complex_from_parts(self, re, im):
        """The complex array ``re + i im`` from two real arrays of this family, differentiably (traced values too)."""
        return re + 1j * im

    def as_result(self, a):
        """``a``, computed by this family, as the array a result is: where the family gives scalars of
        its own type (``scalar_results``: numpy's ``np.float64``, a Python float), a 0-d array; this
        default returns ``a`` itself."""
        return a

    def writable(self, a):
        """``a`` itself when its buffer can be written, else a writable copy (a read-only numpy view);
        this default returns ``a`` itself (its arrays are immutable, or always writable)."""
        return a

    def shares_memory(self, a, b) -> bool:
        """True when the arrays ``a`` and ``b`` of this family may share memory (a buffer must not share x's)."""
        return a is b

    def device(self, a):
        """The device ``a`` lives on, in its framework's terms ("cpu" for host-only families)."""
        return getattr(a, "device", "cpu")

    def to_device(self, a, device: str):
        """A copy of ``a`` (an array of this family) on the device named ``device`` ("cpu", "cuda:0", "gpu").

        This default is for host-only families: their one device is "cpu".
        """
        if device != "cpu":
            raise ValueError(
                f"device: {self.name} arrays live on the CPU only (device 'cpu'); got {device!r}"
            )
        return a

    # -- sparse matrices -------------------------------------------------------------------------

    def sparse_format(self, a) -> Optional[str]:
        """The format of ``a`` (a type of ``sparse_modules``) when it is one of the family's sparse
        matrices ("scipy-csr", "bcoo", "torch-csr"), else None."""
        return None

    def is_sparse(self, a) -> bool:
        """True when ``a`` (a type of ``sparse_modules``) is a sparse matrix of any of the family's formats."""
        return self.sparse_format(a) is not None

    def sparse_values(self, matrix):
        """The stored values of the sparse ``matrix``, an array of this family (a view, written in place by ``out=``)."""
        raise NotImplementedError(f"{self.name} arrays have no sparse matrices")

    def same_sparse_pattern(self, out, result) -> bool:
        """True when the sparse matrices ``out`` and ``result`` (one format, shape and dtype) store the same entries."""
        raise NotImplementedError(f"{self.name} arrays have no sparse matrices")

    def sparse_coordinates(self, matrix):
        """``(values, rows, cols)`` of the sparse ``matrix``'s entries, as numpy arrays."""
        raise NotImplementedError(f"{self.name} arrays have no sparse matrices")

    def index_array(self, indices, like):
        """The numpy integer array ``indices`` in this family on ``like``'s device, for indexing its arrays."""
        return self.from_numpy(indices, like)

    def flat_take(self, a, indices):
        """The entries of ``a``, flattened, at ``indices`` (an :meth:`index_array`)."""
        return a.reshape(-1)[indices]

    def mapped(self, fn):
        """``fn`` (one array of this family to an array) mapped over the first axis of a stack of such
        arrays, its results stacked: vectorized where the framework vectorizes (``jax.vmap``), so
        that it traces as one computation; this default calls ``fn`` once per array."""

        def each(stacked):
            return self.stack([fn(a) for a in stacked])

        return each

    def keeping_dtype(self, fn, like):
        """``fn`` (arrays of this family in and out) run where ``like``'s dtype survives its operations
        (JAX without x64 narrows float64 to float32: there, x64 on for the call, this thread only);
        ``fn`` itself for a family that never narrows (this default)."""
        return fn

    def compiled(self, fn, like):
        """``fn`` (arrays of this family in and out) compiled where the family compiles; ``fn`` itself otherwise."""
        return fn

    def sparse_builder(self, rows, cols, shape, like):
        """``build(data) -> sparse matrix`` of ``shape`` with entries at ``(rows, cols)`` (row-major sorted, unique).

        The index arrays are built once, here, and shared by every matrix built,
        so that ``out=`` can check a buffer's pattern by identity. ``data``:
        the entries' values in that order, an array of this family.
        """
        raise NotImplementedError(f"{self.name} arrays have no sparse matrices")

    def dense_builder(self, rows, cols, shape, dense_shape, like):
        """``build(data) -> dense array`` of ``dense_shape``: the ``shape`` matrix, zero but at ``(rows, cols)``."""
        m, n = shape
        flat = self.index_array(rows.astype(np.int64) * n + cols, like)
        xp = self.namespace()

        def build(data):
            result = xp.zeros(m * n, dtype=data.dtype, device=self.device(data))
            result[flat] = data
            return xp.reshape(result, dense_shape)

        return build
