"""How many seeds one vectorized pass of a TensorFlow sweep takes, and the maps that run a sweep in such batches.

The choice is :func:`diffinterface.core.batching.choose_batch_size`'s; this
module estimates one seed's bytes and builds the maps. The estimate reads f's
graph, traced without values (what ``tf.function`` records, nothing run or
allocated): the bytes of every tensor its operations produce, from their static
shapes. One seed of a vectorized ``ForwardAccumulator`` or of a ``tape.jacobian``
row holds about one tangent or cotangent per such tensor, and as many
temporaries for the product rules: twice that sum, as the torch adapter counts.

A sweep in batches is TensorFlow's own ``pfor`` with ``parallel_iterations``
(what ``tape.jacobian(parallel_iterations=)`` does): a ``while_loop`` over full
batches, each vectorized, and one vectorized pass for the remainder, all in the
one traced function, so the last partial batch costs no trace per call. A
batch of one seed is ``pfor``'s ``for_loop`` (a ``while_loop`` of single seeds),
and so is a sweep whose vectorized graph would run TensorFlow's faulty oneDNN
batched matmul (:mod:`.onednn`).
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops.parallel_for.control_flow_ops import for_loop, pfor

from ...core.batching import choose_batch_size, record
from .boundary import eager_map
from .numpy_rules import promoting
from .onednn import vectorized

#: one seed's working memory, in units of the bytes of the tensors f's graph produces (tangent and
#: temporaries)
_SEED_TO_EVALUATION = 2
#: operations whose outputs a batch holds once, not once per seed (x itself, f's constants)
_NOT_PER_SEED = frozenset({"Placeholder", "Const"})


def _one_seed_bytes(boundary):
    def estimate():
        problem, f = boundary.problem, boundary.bound()
        spec = tf.TensorSpec(problem.x_shape, boundary.dtype)
        try:
            with promoting():
                graph = (
                    tf.function(lambda x: f(x, *problem.ctx), autograph=False)
                    .get_concrete_function(spec)
                    .graph
                )
        except Exception:  # noqa: BLE001 - no estimate: the sweep runs whole, and f's own errors come from it
            return None
        total = 0
        for operation in graph.get_operations():
            if operation.type in _NOT_PER_SEED:
                continue
            for tensor in operation.outputs:
                elements = tensor.shape.num_elements()
                if elements is not None and tensor.dtype.is_numeric:
                    total += elements * tensor.dtype.size
        return _SEED_TO_EVALUATION * total

    return estimate


def _dtypes(structure):
    return tf.nest.map_structure(lambda t: t.dtype, structure)


def _looped(one, n, parallel):
    """``one`` over ``range(n)`` by a ``while_loop``, ``parallel`` iterations at a time, never vectorized."""
    # the dtypes the loop stacks, from a trace of one seed (its operations are never run: pruned)
    return for_loop(one, _dtypes(one(0)), n, parallel_iterations=parallel)


def batched_map(parallel):
    """``vmap(fn, seeds)``: ``tf.vectorized_map``'s result, ``parallel`` seeds per vectorized pass (``None``: all
    at once); a loop of single seeds where vectorizing would run a faulty oneDNN matmul (:mod:`.onednn`)."""

    def mapped(fn, seeds):
        # never converted by autograph: an eager pfor traces its batches' loop in a tf.function that
        # has it on, and autograph's rewrite of f is not f (f is traced as written, see
        # Boundary.compiled)
        @tf.autograph.experimental.do_not_convert
        def one(i):
            return fn(tf.gather(seeds, i))

        n = seeds.shape[0]
        if parallel is not None and parallel <= 1:
            return _looped(one, n, 1)
        return vectorized(
            lambda: pfor(one, n, parallel_iterations=parallel), lambda: _looped(one, n, parallel)
        )

    return mapped


#: ``tf.vectorized_map(fn, seeds)``'s result, all seeds in one vectorized pass (see
#: :func:`batched_map`)
vectorized_map = batched_map(None)


class Sweep:
    """A sweep over ``n`` seeds: ``parallel`` (None: all at once, TensorFlow's own transform unchanged), the
    ``vmap`` that maps a function over seeds, and the batch size to :meth:`record` on the Impl."""

    def __init__(self, adapter, boundary, n, forward):
        whole = vectorized_map if boundary.jit else eager_map
        if n <= 1:  # one seed: no sweep, no batch size to report
            self.chosen, self.parallel, self.vmap = None, None, whole
            return
        if not boundary.jit and forward:  # eager forward sweeps take one seed at a time (eager_map)
            self.chosen, self.parallel, self.vmap = 1, None, eager_map
            return
        one_off = boundary.problem.one_off
        self.chosen = choose_batch_size(adapter.backend, n, _one_seed_bytes(boundary), one_off)
        self.parallel = self.chosen if self.chosen < n else None
        self.vmap = whole if self.parallel is None else batched_map(self.parallel)

    def record(self, impl):
        return record(impl, self.chosen)
