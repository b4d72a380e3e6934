"""Vectorized sweeps that never run TensorFlow's faulty oneDNN batched matmul.

TensorFlow 2.21's oneDNN kernel for ``BatchMatMul`` (on by default on x86
CPUs) reads out of bounds when its left operand has rank 4 with a second
dimension of 1, ``(B, 1, M, K)`` with ``B > 1``, and the right operand's batch
dimensions are all 1 or absent: entries of 1e35, or a heap corruption that
aborts the process (TensorFlow issues 117700 and 123109; float64 runs on
Eigen and is right). ``pfor``, which vectorizes ``tape.jacobian`` and
``tf.vectorized_map``, makes exactly that shape from a matmul of batch 1 in f:
``(1, M, K) @ (K, N)`` becomes ``(n, 1, M, K) @ (1, K, N)`` in a sweep over n
seeds.

:func:`vectorized` runs a sweep's ``pfor`` route while the sweep is traced,
reads the operations it added (nested functions included), and where such a
matmul is among them, runs the sweep as a loop of single seeds instead, whose
matmuls keep f's own shapes. The choice is made when the sweep is traced (at
preparation for a traced function), so a prepared call runs the graph chosen
and pays nothing. A loop that still holds such a matmul (f's own) is refused
by name. Nothing is decided where oneDNN is off (``TF_ENABLE_ONEDNN_OPTS=0``).

The same check takes a second ``pfor`` defect, in ``pfor`` itself: its rule
for ``Roll`` adds 1 to the axis for the batch dimension, so a negative axis
(``roll(x, 1, axis=-1)``) rolls the seeds instead, and Jacobian rows come back
permuted without an error. A vectorized sweep whose traced graph rolls along a
negative axis runs as a loop too, on every machine.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.framework.tensor_util import constant_value
from tensorflow.python.util import _pywrap_util_port

from ...errors import UnsupportedError

#: whether TensorFlow runs its oneDNN kernels (read once: TensorFlow reads TF_ENABLE_ONEDNN_OPTS at
#: its import)
ONEDNN_ON = bool(_pywrap_util_port.IsMklEnabled())
#: the dtypes oneDNN's matmul takes (float64 and complex run on Eigen)
_ONEDNN_DTYPES = frozenset({tf.float32, tf.bfloat16, tf.float16})


class FaultyBatchMatMulError(UnsupportedError):
    """f holds a batched matmul that TensorFlow's oneDNN kernel computes wrongly (see the module docstring)."""


def _dims(shape):
    """The dimensions of a static shape (None where unknown), or None for an unknown rank."""
    return None if shape.rank is None else list(shape)


def is_faulty(operation):
    """Whether ``operation`` is a ``BatchMatMul`` of the shapes the oneDNN kernel gets wrong.

    Unknown dimensions count as the faulty ones, and the adjoint flags are not
    read (the left operand's layout decides, and a wrong guess costs only a
    slower sweep). ``operation`` is a graph operation; nothing is run.
    """
    if not operation.type.startswith("BatchMatMul") or len(operation.inputs) < 2:
        return False
    left, right = operation.inputs[0], operation.inputs[1]
    if left.dtype.base_dtype not in _ONEDNN_DTYPES:
        return False
    lhs, rhs = _dims(left.shape), _dims(right.shape)
    if lhs is None or rhs is None:
        return lhs is None or len(lhs) == 4
    return (
        len(lhs) == 4
        and lhs[0] != 1
        and lhs[1] in (1, None)
        and all(d in (1, None) for d in rhs[:-2])
    )


def rolls_along_a_negative_axis(operation):
    """Whether ``operation`` is a ``Roll`` along a constant negative axis, which ``pfor`` would get wrong."""
    if operation.type != "Roll" or len(operation.inputs) < 3:
        return False
    axis = constant_value(operation.inputs[2])
    return axis is not None and bool((axis < 0).any())


def _nested(graph, operation):
    """The graphs of the functions ``operation`` calls (while bodies, cond branches, function calls)."""
    for value in operation.node_def.attr.values():
        names = [value.func.name] if value.HasField("func") else [f.name for f in value.list.func]
        for name in names:
            function = (
                graph._get_function(name) if name else None
            )  # TensorFlow has no public look-up
            if getattr(function, "graph", None) is not None:
                yield function.graph


def faulty_operations(graph, operations=None, faulty=is_faulty):
    """The operations ``faulty`` says yes to (by default the faulty matmuls, see :func:`is_faulty`) among
    ``operations`` of ``graph`` (all of them by default) and in the functions they call."""
    found, seen = [], set()
    pending = [(graph, graph.get_operations() if operations is None else operations)]
    while pending:
        where, ops = pending.pop()
        for operation in ops:
            if faulty(operation):
                found.append(operation)
            for inner in _nested(where, operation):
                if id(inner) not in seen:
                    seen.add(id(inner))
                    pending.append((inner, inner.get_operations()))
    return found


def _refusal(operation):
    shapes = " @ ".join(str(tuple(t.shape)) for t in operation.inputs[:2])
    return FaultyBatchMatMulError(
        f"f: TensorFlow's oneDNN kernel computes the batched matmul {shapes} ({operation.inputs[0].dtype.name}) "
        "wrongly: a left operand of rank 4 whose second dimension is 1, times a right operand broadcast over the "
        "batch, gives garbage or aborts the process (TensorFlow issue 117700; native TensorFlow too). "
        "diffinterface runs its sweeps without the vectorization that makes such matmuls, but this one is f's "
        "own. Set TF_ENABLE_ONEDNN_OPTS=0 in the environment before TensorFlow is imported, reshape the left "
        "operand to rank 3 (or give it a second dimension other than 1), or compute in float64."
    )


def _vectorized_wrongly(operation):
    """A faulty matmul where oneDNN is on, or a roll along a negative axis (``pfor``'s own defect)."""
    return (ONEDNN_ON and is_faulty(operation)) or rolls_along_a_negative_axis(operation)


def _graph():
    return tf.compat.v1.get_default_graph()


def vectorized(pfor_route, loop_route):
    """``pfor_route()``, or ``loop_route()`` where the graph ``pfor_route`` builds holds a faulty matmul or a
    roll along a negative axis.

    Both are functions of no arguments returning the sweep's tensors;
    ``loop_route`` must not vectorize (a ``while_loop`` of single seeds). Called
    while a function is traced, the routes add operations to its graph, and the
    unused route's are pruned when the function runs; called eagerly, the
    ``pfor`` route is traced as a ``tf.function`` first (what ``pfor`` does
    eagerly anyway) and run only if it holds no faulty matmul.
    """
    if tf.executing_eagerly():
        traced = tf.function(pfor_route, autograph=False).get_concrete_function()
        return (
            loop_route()
            if faulty_operations(traced.graph, faulty=_vectorized_wrongly)
            else traced()
        )
    graph = _graph()
    before = len(graph.get_operations())
    result = pfor_route()
    if not faulty_operations(graph, graph.get_operations()[before:], faulty=_vectorized_wrongly):
        return result
    if not ONEDNN_ON:
        return loop_route()
    before = len(graph.get_operations())
    result = loop_route()
    still = faulty_operations(graph, graph.get_operations()[before:])
    if still:
        raise _refusal(still[0])
    return result
