"""The rules f runs under while diffinterface's TensorFlow backend traces or runs it: numpy's dtype
promotion (:func:`promoting`) and the array API's ``@`` (held with it, :func:`hold_matmul`).

Both are held only around diffinterface's own tracing and eager calls of f;
a traced function keeps the operations it recorded. Outside them (f called
by the user inside a ``tf.GradientTape``), TensorFlow's own rules apply. The
promotion mode is a process-wide switch of TensorFlow, restored on exit; the
``@`` of tensors and variables is put in place once and follows the array
API only in a thread that holds it, TensorFlow's own
operator everywhere else.

The array API's ``a @ b`` (numpy's, JAX's, torch's) takes 1-d operands: a
vector on the left gains a leading axis, one on the right a trailing axis,
and the added axis is dropped from the result (``x @ M`` with ``x`` of
shape ``(n,)`` and ``M`` of shape ``(n, m)`` has shape ``(m,)``).
TensorFlow's ``@`` (``tf.linalg.matmul``) refuses them, so a one-source
function ``x @ M`` would work on every backend but this one. Products of two
operands of two or more axes go to TensorFlow's operator unchanged, as every
product does where no holder is. ``xp.matmul`` takes 1-d operands everywhere.

    >>> import numpy as np, tensorflow as tf
    >>> x, m = tf.constant([1.0, 2.0]), tf.constant(np.eye(2, 3, dtype=np.float32))
    >>> with promoting():
    ...     (x @ m).shape
    TensorShape([3])
    >>> try:
    ...     x @ m   # TensorFlow's own rule again
    ... except tf.errors.InvalidArgumentError:
    ...     print("matrices only")
    matrices only
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.ops import PromoMode
from tensorflow.python.framework.ops import get_dtype_conversion_mode as promotion_mode
from tensorflow.python.framework.ops import set_dtype_conversion_mode as _set_promotion_mode

OFF = PromoMode.OFF


@contextlib.contextmanager
def promoting():
    """TensorFlow's "all" dtype promotion (float32 with float64 gives float64, as numpy, JAX and torch do),
    unless the user chose a mode, and the array API's ``@``, while diffinterface traces or runs f.

    TensorFlow's operators refuse mixed dtypes by default; the switch is
    ``ops.set_dtype_conversion_mode``.
    """
    switch = promotion_mode() == OFF
    if switch:
        _set_promotion_mode("all")
    depth = hold_matmul()
    try:
        yield
    finally:
        _held.depth = depth
        if switch:
            _set_promotion_mode("off")


@contextlib.contextmanager
def not_promoting():
    """TensorFlow's own dtype rules again inside :func:`promoting`, for code that relies on them: Keras layers
    hand their variables to TensorFlow's operators, whose "all" promotion asks ``variable == bool``, which a
    Keras variable answers with a tensor conversion that fails."""
    if promotion_mode() != PromoMode.ALL:
        yield
        return
    _set_promotion_mode("off")
    try:
        yield
    finally:
        _set_promotion_mode("all")


#: the classes whose ``@`` is changed, and TensorFlow's own operators
_CLASSES = (tf.Tensor, tf.Variable)
_ORIGINAL = {
    (cls, name): cls.__dict__[name] for cls in _CLASSES for name in ("__matmul__", "__rmatmul__")
}

#: how many :func:`promoting` this thread holds (0: TensorFlow's own ``@``)
_held = threading.local()
_installed = threading.Lock()


def _vector(a):
    """True for an operand of one axis (a tensor, a numpy array, a nested list)."""
    shape = getattr(a, "shape", None)
    try:
        return shape is not None and len(shape) == 1
    except (TypeError, ValueError):  # a tensor of unknown rank: TensorFlow's own operator
        return False


def _expanded(a, axis):
    """``a`` with a new axis: a tensor stays one, anything else (numpy, a list) becomes numpy, so that
    TensorFlow's operator converts it as it would have."""
    if isinstance(a, (tf.Tensor, tf.Variable)):
        return tf.expand_dims(a, axis)
    return np.expand_dims(np.asarray(a), axis)


def _product(left, right, reflected):
    """``left @ right`` by TensorFlow's operator, with the array API's rule for 1-d operands."""
    on_left, on_right = _vector(left), _vector(right)
    left = _expanded(left, 0) if on_left else left
    right = _expanded(right, -1) if on_right else right
    if reflected:  # right.__rmatmul__(left)
        out = _ORIGINAL[tf.Tensor, "__rmatmul__"](tf.convert_to_tensor(right), left)
    else:
        out = _ORIGINAL[tf.Tensor, "__matmul__"](tf.convert_to_tensor(left), right)
    if on_right:
        out = tf.squeeze(out, -1)
    return tf.squeeze(out, -1 if on_right else -2) if on_left else out


def _operator(cls, name):
    original = _ORIGINAL[cls, name]
    reflected = name == "__rmatmul__"

    def matmul(self, other):
        if not getattr(_held, "depth", 0) or not (_vector(self) or _vector(other)):
            return original(self, other)
        return _product(other, self, True) if reflected else _product(self, other, False)

    matmul.__name__ = name
    return matmul


def _install():
    """Put the operators in place once: setting a class attribute of TensorFlow's costs tens of
    microseconds, a thread-local count nothing; outside a holder they call TensorFlow's own."""
    with _installed:
        for cls, name in _ORIGINAL:
            if cls.__dict__[name] is _ORIGINAL[cls, name]:
                setattr(cls, name, _operator(cls, name))


def hold_matmul():
    """The array API's ``@`` on tensors and variables in this thread (see the module docstring), until
    ``_held.depth`` is set back to the depth returned; re-entrant."""
    depth = getattr(_held, "depth", 0)
    if depth == 0 and tf.Tensor.__dict__["__matmul__"] is _ORIGINAL[tf.Tensor, "__matmul__"]:
        _install()
    _held.depth = depth + 1
    return depth
