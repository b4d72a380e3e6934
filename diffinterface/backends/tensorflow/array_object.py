"""The array API's array object on TensorFlow tensors, while diffinterface traces or runs f.

A one-source function may use an array's own syntax, which the array API
standard puts on the array object: ``x.T``, ``x.mT``, ``a @ b`` with a 1-d
operand, ``x.size``, ``+x``, ``x << k``, ``x.__array_namespace__()``,
``x.to_device(d)``. TensorFlow's tensors lack them. TensorFlow's numpy
behaviour (``tnp.experimental_enable_numpy_behavior()``) adds some, but to
every tensor of the process, with no way back, and with numpy's dtype rules
and indexing for the user's own code too. Here they are put on ``tf.Tensor``,
``tf.Variable`` and TensorFlow's weak tensors (what Python numbers and lists
become under its promotion) once, and answer the array API's way only in a
thread that holds them (:func:`hold`, taken by ``numpy_rules.promoting``
around diffinterface's own tracing and eager calls of f). A traced function keeps
the operations it recorded. Everywhere else (the user's code, f called by the
user inside a ``tf.GradientTape``, other threads) a tensor is TensorFlow's
own: an added attribute raises TensorFlow's AttributeError (``hasattr`` is
False), an added operator the TypeError Python raises, ``@`` is TensorFlow's.

The array object of the standard (2023.12) on TensorFlow 2.21's tensors:

======================================  ======================================================
``dtype``, ``shape``, ``ndim``,         TensorFlow's (``ndim`` added to variables)
``device``
``T``                                   added: the axes reversed (numpy's and JAX's rule, the
                                        standard's transpose on 2-d arrays)
``mT``                                  added: the last two axes swapped; an array of fewer
                                        axes raises a ValueError naming ``x.mT``
``size``                                added: the number of elements, None where a dimension
                                        is unknown (as the standard says)
``__array_namespace__``                 added: ``diffinterface.families.tensorflow_namespace``
``to_device``                           added: a copy placed by ``tf.device``; ``stream``
                                        refused by name
``__matmul__``, ``__rmatmul__``         changed: 1-d operands taken (the standard's rule)
``__pos__``                             added
``__lshift__``, ``__rshift__``          added, and their reflections (``xp.bitwise_left_shift``)
``__abs__ __add__ __and__ __eq__``      TensorFlow's, and their reflections
``__floordiv__ __ge__ __gt__ __invert__
__le__ __lt__ __mod__ __mul__ __ne__
__neg__ __or__ __pow__ __sub__
__truediv__ __xor__``
``__getitem__``                         TensorFlow's: integers, slices (negative steps too),
                                        ``...``, ``None``, boolean masks; an integer array
                                        (which the standard leaves out) is refused by
                                        TensorFlow: ``xp.take(x, i, axis=...)``; a list of
                                        integers, which TensorFlow reads as a tuple
                                        (``x[[0, 2]]`` is ``x[0, 2]``, a gather for numpy and
                                        torch), is refused naming both
``__bool__ __int__ __float__            TensorFlow's on values; f traced by ``tf.function``
__index__ __complex__ __dlpack__        (``jit=True``) has no values, as under ``jax.jit``: a
__dlpack_device__``                     branch on a value is refused by the backend, naming
                                        ``jit=False``
``__setitem__``, ``__iadd__``...        tensors are immutable (as JAX's arrays): item
                                        assignment is refused naming ``xp.where`` and
                                        ``xp.concat``; ``x += y`` rebinds x
======================================  ======================================================

The array API's ``a @ b`` (numpy's, JAX's, torch's) takes 1-d operands: a
vector on the left gains a leading axis, one on the right a trailing axis,
and the added axis is dropped from the result. TensorFlow's ``@``
(``tf.linalg.matmul``) refuses them. Products of two operands of two or more
axes go to TensorFlow's operator unchanged.

    >>> import numpy as np, tensorflow as tf
    >>> x, m = tf.constant([1.0, 2.0]), tf.constant(np.eye(2, 3, dtype=np.float32))
    >>> depth = hold()
    >>> (x @ m).shape, m.T.shape, m.mT.shape, m.size
    (TensorShape([3]), TensorShape([3, 2]), TensorShape([3, 2]), 6)
    >>> release(depth)
    >>> hasattr(m, "T")   # TensorFlow's own tensor again
    False
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.weak_tensor import WeakTensor

from ...families import tensorflow_namespace

#: the classes given the array API's syntax: TensorFlow's "all" promotion (``numpy_rules``) makes
#: Python numbers and lists weak tensors, which are no ``tf.Tensor``
_CLASSES = (tf.Tensor, tf.Variable, WeakTensor)
#: TensorFlow's own ``@``, which the changed one calls
_ORIGINAL = {
    (cls, name): cls.__dict__[name] for cls in _CLASSES for name in ("__matmul__", "__rmatmul__")
}

#: how many holders this thread has (0: TensorFlow's own tensors)
_held = threading.local()
_installing = threading.Lock()
_installed = False


def hold():
    """The array API's array object on tensors and variables in this thread, until :func:`release` is given
    the depth returned; re-entrant."""
    depth = getattr(_held, "depth", 0)
    if not _installed:
        _install()
    _held.depth = depth + 1
    return depth


def release(depth):
    """TensorFlow's own tensors again in this thread once every holder up to ``depth`` has released."""
    _held.depth = depth


@contextlib.contextmanager
def held():
    """:func:`hold` for a ``with`` block: the array object without ``numpy_rules``' promotion."""
    depth = hold()
    try:
        yield
    finally:
        release(depth)


def _holding():
    return getattr(_held, "depth", 0) > 0


# -- attributes ------------------------------------------------------------------------------------


def _matrix_transpose(x):
    rank = x.shape.rank
    if rank is not None and rank < 2:
        raise ValueError(
            "x.mT: the array API's matrix transpose swaps the last two axes of an array of at least "
            f"2; got an array of shape {tuple(x.shape)} (a 1-d array needs no transpose)"
        )
    return tf.linalg.matrix_transpose(x)


def _namespace(x):
    def __array_namespace__(*, api_version=None):
        if api_version not in (None, "2021.12", "2022.12", "2023.12"):
            raise ValueError(
                "x.__array_namespace__(api_version=...): expected None or a version up to "
                f"{tensorflow_namespace.__array_api_version__!r}; got {api_version!r}"
            )
        return tensorflow_namespace

    return __array_namespace__


def _to_device(x):
    def to_device(device, /, *, stream=None):
        if stream is not None:
            raise ValueError(
                f"x.to_device(device, stream=...): TensorFlow has no streams; expected None, got {stream!r}"
            )
        with tf.device(device):
            return tf.identity(x)

    return to_device


#: the array API's attributes TensorFlow lacks, by name: each computed from the array
_ATTRIBUTES = {
    "T": tf.transpose,
    "mT": _matrix_transpose,
    "size": lambda x: x.shape.num_elements(),
    "ndim": lambda x: x.shape.rank,
    "__array_namespace__": _namespace,
    "to_device": _to_device,
}


def _held_attribute(name, compute):
    """A property that answers ``compute(x)`` in a holding thread and is absent elsewhere: its
    AttributeError sends Python to TensorFlow's ``__getattr__``, whose message it was before."""

    def get(x):
        if _holding():
            return compute(x)
        raise AttributeError(f"{type(x).__name__!r} object has no attribute {name!r}")

    return property(get, doc=f"The array API's ``x.{name}`` while diffinterface runs f.")


# -- operators -------------------------------------------------------------------------------------


def __pos__(x):
    if _holding():
        return tf.identity(x)
    raise TypeError(f"bad operand type for unary +: {type(x).__name__!r}")


def _binary(name, function, reflected):
    """An operator that TensorFlow lacks: the namespace's function in a holding thread; elsewhere
    NotImplemented, so Python answers as it did without one (the other operand's, or a TypeError)."""

    def operator(x, other):
        if not _holding():
            return NotImplemented
        return function(other, x) if reflected else function(x, other)

    operator.__name__ = name
    return operator


#: the words of the refusal of a list index (the TensorFlow family declares them as a limit)
LIST_INDEX = "TensorFlow reads a list index as a tuple"


def _integers(key):
    """True for a list of integers only: a list with slices or ``...`` numpy refuses too."""
    return bool(key) and all(isinstance(k, (int, np.integer)) for k in key)


def _getitem(cls):
    original = cls.__dict__["__getitem__"]

    def __getitem__(x, key):
        # x[[0, 2]] is x[0, 2] to TensorFlow, a gather of rows 0 and 2 to numpy and torch: a wrong
        # number without an error, so refused where diffinterface runs f
        if key.__class__ is list and _holding() and _integers(key):
            raise TypeError(f"x[{key!r}]: {LIST_INDEX} (x[{', '.join(map(repr, key))}])")
        return original(x, key)

    return __getitem__


_OPERATORS = {
    "__pos__": __pos__,
    **{
        f"__{r}{name}__": _binary(f"__{r}{name}__", function, bool(r))
        for name, function in (
            ("lshift", tensorflow_namespace.bitwise_left_shift),
            ("rshift", tensorflow_namespace.bitwise_right_shift),
        )
        for r in ("", "r")
    },
}


def _vector(a):
    """True for an operand of one axis (a tensor, a numpy array, a nested list)."""
    shape = getattr(a, "shape", None)
    try:
        return shape is not None and len(shape) == 1
    except (TypeError, ValueError):  # a tensor of unknown rank: TensorFlow's own operator
        return False


def _expanded(a, axis):
    """``a`` with a new axis: a tensor stays one (a weak one weak), anything else (numpy, a list)
    becomes numpy, so that TensorFlow's operator converts it as it would have."""
    if isinstance(a, _CLASSES):
        return tf.expand_dims(a, axis)
    return np.expand_dims(np.asarray(a), axis)


def _own(a, name):
    """TensorFlow's own operator ``name`` for the tensor ``a``, and ``a`` as that operator takes it."""
    if isinstance(a, WeakTensor):
        return _ORIGINAL[WeakTensor, name], a
    return _ORIGINAL[tf.Tensor, name], tf.convert_to_tensor(a)


def _product(left, right, reflected):
    """``left @ right`` by TensorFlow's operator, with the array API's rule for 1-d operands."""
    on_left, on_right = _vector(left), _vector(right)
    left = _expanded(left, 0) if on_left else left
    right = _expanded(right, -1) if on_right else right
    if reflected:  # right.__rmatmul__(left)
        operator, right = _own(right, "__rmatmul__")
        out = operator(right, left)
    else:
        operator, left = _own(left, "__matmul__")
        out = operator(left, right)
    if on_right:
        out = tf.squeeze(out, -1)
    return tf.squeeze(out, -1 if on_right else -2) if on_left else out


def _matmul(cls, name):
    original = _ORIGINAL[cls, name]
    reflected = name == "__rmatmul__"

    def matmul(self, other):
        if not _holding() or not (_vector(self) or _vector(other)):
            return original(self, other)
        return _product(other, self, True) if reflected else _product(self, other, False)

    matmul.__name__ = name
    return matmul


def _install():
    """Put the syntax in place once: setting a class attribute of TensorFlow's costs tens of microseconds,
    a thread-local count nothing. Only what a class lacks is added (TensorFlow's numpy behaviour, if the
    user turned it on first, keeps its own ``T``)."""
    global _installed
    with _installing:
        if _installed:
            return
        for cls in _CLASSES:
            for name, compute in _ATTRIBUTES.items():
                if not hasattr(cls, name):
                    setattr(cls, name, _held_attribute(name, compute))
            for name, operator in _OPERATORS.items():
                if not hasattr(cls, name):
                    setattr(cls, name, operator)
            for name in ("__matmul__", "__rmatmul__"):
                setattr(cls, name, _matmul(cls, name))
            setattr(cls, "__getitem__", _getitem(cls))
        _installed = True
