"""The TensorFlow family: ``tf.Tensor`` (eager and symbolic) and ``tf.Variable``; ``tf.sparse.SparseTensor`` as its sparse type.

Tensors are immutable; a ``tf.Variable`` is the family's writable buffer
(``out=`` assigns into it). Its namespace is
:mod:`diffinterface.families.tensorflow_namespace`, an array-API namespace
over ``tf.experimental.numpy``. Nothing here imports TensorFlow until a
method is called.

    >>> import numpy as np
    >>> from diffinterface.families import FAMILIES
    >>> tf_family = FAMILIES["tensorflow"]
    >>> t = tf_family.from_numpy(np.ones(2), None)
    >>> t.dtype.name, tf_family.to_numpy(tf_family.cast(t, "float32")).dtype
    ('float64', dtype('float32'))
"""

from __future__ import annotations

import numpy as np

from .base import Family, dtype_name
from .registry import as_numpy


def _dtype_name(a) -> str:
    return a.dtype.name


def _assign(out, result):
    """Write ``result`` into the ``tf.Variable`` ``out``; a tensor is immutable (the reason, as a string)."""
    if not hasattr(out, "assign"):
        return "tf.Tensor is immutable: pass a tf.Variable as the buffer, or call without out="
    out.assign(result)
    return None


class TensorFlowFamily(Family):
    """TensorFlow tensors and variables; namespace over ``tf.experimental.numpy``; sparse: ``tf.sparse.SparseTensor``."""

    name = "tensorflow"
    modules = ("tensorflow",)
    namespace_module = "diffinterface.families.tensorflow_namespace"
    precedence = 1
    write = staticmethod(_assign)
    sparse_modules = ("tensorflow.python.framework.sparse_tensor",)
    sparse_type = "TensorFlow sparse tensors (tf.sparse.SparseTensor)"
    traced_by = "tf.function"
    limits = (
        (
            "are valid indices, got",
            "indexing with an integer array (x[indices])",
            "gather with xp.take(x, indices, axis=...), which every backend differentiates",
        ),
        (
            "TensorFlow reads a list index as a tuple",
            "indexing with a list (x[[i, j]]), which it reads as x[i, j] where numpy gathers",
            "write x[i, j] for one entry, or gather with xp.take(x, xp.asarray(indices), axis=...)",
        ),
        (
            "Tensor' object does not support item assignment",
            "item assignment (x[i] = v): its tensors are immutable, as JAX's arrays",
            "build a new array (xp.where(mask, v, x), xp.concat([...]))",
        ),
    )

    def has_values(self, a):
        import tensorflow as tf

        return not tf.is_symbolic_tensor(a)

    def from_numpy(self, a, like):
        import tensorflow as tf

        if like is not None and getattr(like, "device", ""):
            with tf.device(like.device):
                return tf.convert_to_tensor(a)
        return tf.convert_to_tensor(a)

    def to_numpy(self, a):
        # a variable or an eager tensor; .numpy() is a copy the caller owns
        return a.numpy()

    def from_dlpack(self, a):
        import tensorflow as tf

        if self.owns(a.__class__):
            return a
        if hasattr(a, "__dlpack__") and not isinstance(a, np.ndarray):
            try:
                # torch and JAX tensors: shared memory, their device
                return tf.experimental.dlpack.from_dlpack(a.__dlpack__())
            except Exception:  # noqa: BLE001, S110 - a dtype or layout DLPack cannot share: through numpy below
                pass
        return tf.convert_to_tensor(as_numpy(a))

    def buffer(self, a):
        """A writable buffer (``tf.Variable``) holding the numpy array ``a``: what ``out=`` takes in this family."""
        import tensorflow as tf

        return tf.Variable(a, trainable=False)

    def cast(self, a, dtype):
        import tensorflow as tf

        return tf.cast(a, dtype)

    def ravel(self, leaves, dtype):
        import tensorflow as tf

        return tf.concat(
            [tf.reshape(a if dtype_name(a) == dtype else tf.cast(a, dtype), (-1,)) for a in leaves],
            0,
        )

    def stack(self, arrays, axis=0):
        import tensorflow as tf

        return tf.stack(list(arrays), axis=axis)

    def complex_from_parts(self, re, im):
        import tensorflow as tf

        return tf.complex(re, im)  # TensorFlow does not promote a real tensor times 1j

    def shares_memory(self, a, b):
        return a is b

    def device(self, a):
        return a.device

    # -- tf.sparse.SparseTensor -------------------------------------------------------------------

    def sparse_format(self, a):
        return "tf-sparse" if type(a).__name__ == "SparseTensor" else None

    def sparse_values(self, matrix):
        return matrix.values

    def same_sparse_pattern(self, out, result):
        return out.indices is result.indices or bool(
            np.array_equal(out.indices.numpy(), result.indices.numpy())
        )

    def sparse_coordinates(self, matrix):
        indices = matrix.indices.numpy()
        return matrix.values.numpy(), indices[:, 0], indices[:, 1]

    def index_array(self, indices, like):
        import tensorflow as tf

        return tf.convert_to_tensor(np.asarray(indices, dtype=np.int64))

    def flat_take(self, a, indices):
        import tensorflow as tf

        # tf tensors have no reshape method nor integer-array indexing
        return tf.gather(tf.reshape(a, (-1,)), indices)

    def sparse_builder(self, rows, cols, shape, like):
        import tensorflow as tf

        indices = self.index_array(np.stack([rows, cols], axis=1), like)
        dense_shape = tf.constant(shape, dtype=tf.int64)
        return lambda data: tf.sparse.SparseTensor(indices, data, dense_shape)

    def dense_builder(self, rows, cols, shape, dense_shape, like):
        import tensorflow as tf

        indices = self.index_array(np.stack([rows, cols], axis=1), like)
        return lambda data: tf.reshape(tf.scatter_nd(indices, data, shape), dense_shape)
