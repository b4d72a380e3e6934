"""AutoTensorFlow: ``tf.GradientTape`` and ``tf.autodiff.ForwardAccumulator``, traced once into a ``tf.function``.

    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoTensorFlow()
    >>> f = lambda x: di.array_namespace(x).sum(x ** 2)
    >>> prep = di.prepare_gradient(f, backend, np.array([1.0, 2.0]))
    >>> di.gradient(f, backend, np.array([1.0, 2.0]), prep=prep)
    array([2., 4.])

Every operator is TensorFlow's own recipe (``recipes.py``), what a
TensorFlow user writes inside one ``tf.function``:

=================  ===============================================  ==========================
operator           ``mode=None``                                    ``mode=`` forward/reverse
=================  ===============================================  ==========================
pushforward        ``ForwardAccumulator``; a batch of tangents is   same
                   ``tf.vectorized_map`` of it (f traced once)
pullback           ``GradientTape.gradient``; a batch is            same
                   ``tape.jacobian`` of the seeded sums (pfor)
derivative         ``ForwardAccumulator`` with tangent 1            reverse: ``tape.jacobian``
gradient           ``GradientTape.gradient``                        forward: vectorized
                                                                    accumulator over x's basis
jacobian           forward (vectorized accumulator) when            forward / ``tape.jacobian``
                   ``x.size < y.size``, else ``tape.jacobian``
hvp                forward over reverse: an accumulator around      same
                   a tape, ``tf.vectorized_map`` over tangents
hessian            forward over reverse over x's basis              same
second_derivative  two nested accumulators                          same
=================  ===============================================  ==========================

``value_and_*`` variants come from the same pass. With ``jit=True`` (the
default) each prepared operator is one ``tf.function`` traced at
preparation for x's shape and dtype: prepared calls at other values of x
(and of the seeds and array contexts) reuse that trace; an x of another shape
or dtype raises ``PreparationMismatchError`` (strict preparations) before
TensorFlow would trace again. Contexts that are Python numbers or other
objects are part of the trace: a new value traces again, as ``tf.function``
does. An unprepared call runs eagerly (tracing would cost more than the call).
``jit=False`` prepares eagerly too: f then may branch on x's values in Python.

Arrays: ``tf.Tensor`` and ``tf.Variable`` in, ``tf.Tensor`` out; numpy arrays
(and Python floats) in, numpy arrays out. A pytree x (a Keras model's
parameters as a dict of ``tf.Variable``) reaches a reverse gradient as its
leaves, one tape watching them all, variables read inside the traced
function; other operators, and forward mode, see it raveled into one flat
tensor. float64 stays float64 and float32
stays float32 (TensorFlow keeps dtypes; nothing global is changed). Write f
with ``xp = di.array_namespace(x)`` (``tf.experimental.numpy`` completed with
the array API's names, :mod:`diffinterface.families.tensorflow_namespace`)
or with TensorFlow's own operations. TensorFlow's tensors are immutable:
two-argument functions ``f(y, x)`` and writing into a ``di.Cache`` are not
supported; ``out=`` takes numpy buffers and ``tf.Variable`` buffers.
"""

from .keras import keras_function

__all__ = ["TensorFlowAdapter", "keras_function"]


def __getattr__(name):
    # the adapter imports TensorFlow: only when it is asked for (di.keras_function is exported from
    # here, and `import diffinterface` imports no framework)
    if name == "TensorFlowAdapter":
        from .adapter import TensorFlowAdapter

        return TensorFlowAdapter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
