"""The rules f runs under while diffinterface's TensorFlow backend traces or runs it: numpy's dtype
promotion and the array API's array object (``x.T``, ``x.mT``, ``@`` with 1-d operands...:
:mod:`.array_object`), both held by :func:`promoting`.

Both are held only around diffinterface's own tracing and eager calls of f;
a traced function keeps the operations it recorded. Outside them (f called
by the user inside a ``tf.GradientTape``), TensorFlow's own rules apply. The
promotion mode is a process-wide switch of TensorFlow, restored on exit; the
array object's syntax is put in place once and answers the array API's way
only in a thread that holds it.

    >>> import numpy as np, tensorflow as tf
    >>> x, m = tf.constant([1.0, 2.0]), tf.constant(np.eye(2, 3, dtype=np.float32))
    >>> with promoting():
    ...     (x @ m.T.mT).shape
    TensorShape([3])
    >>> try:
    ...     x @ m   # TensorFlow's own rule again
    ... except tf.errors.InvalidArgumentError:
    ...     print("matrices only")
    matrices only
"""

from __future__ import annotations

import contextlib

from tensorflow.python.framework.ops import PromoMode
from tensorflow.python.framework.ops import get_dtype_conversion_mode as promotion_mode
from tensorflow.python.framework.ops import set_dtype_conversion_mode as _set_promotion_mode

from . import array_object

OFF = PromoMode.OFF


@contextlib.contextmanager
def promoting():
    """TensorFlow's "all" dtype promotion (float32 with float64 gives float64, as numpy, JAX and torch do),
    unless the user chose a mode, and the array API's array object (:mod:`.array_object`), while
    diffinterface traces or runs f.

    TensorFlow's operators refuse mixed dtypes by default; the switch is
    ``ops.set_dtype_conversion_mode``.
    """
    switch = promotion_mode() == OFF
    if switch:
        _set_promotion_mode("all")
    depth = array_object.hold()
    try:
        yield
    finally:
        array_object.release(depth)
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
