"""``has_aux=True`` in a traced TensorFlow preparation: the traced function returns aux's tensors too.

The core hands the adapter ``problem.f`` returning y only (an
:class:`~diffinterface.core.aux.AuxCapture`, or the flat function of a pytree
x reaching one: ``problem.aux_entry``). While the preparation traces its
``tf.function``, :meth:`TracedAux.evaluating` calls f through the capture's
``with_aux`` and keeps the aux of f's first evaluation in the traced
function's own graph (an evaluation inside a ``while_loop`` body, a batched
sweep's, cannot leave it); :meth:`TracedAux.returning` makes aux's tensor
leaves extra outputs of the traced function. Each prepared call then hands
the aux computed by that call to the core (``AuxCapture.put``): f is
evaluated no more often than without aux.

Leaves that are not tensors (strings, Python numbers, numpy arrays made from
constants) cannot be outputs of a traced function: they are what f returned
while tracing, as ``tf.function`` itself would keep them, and are put back
around each call's tensors (JAX's adapter does the same). A value f computes
from x's values with numpy (``.numpy()``) does not exist in a trace: such an
f fails to trace, with or without aux (``AutoTensorFlow(jit=False)`` runs f
eagerly and takes aux from the evaluation at x).
"""

from __future__ import annotations

import optree
import tensorflow as tf


from ...core.aux_leaves import AuxLeaves


def _flatten(tree):
    return optree.tree_flatten(tree, none_is_leaf=True)


def _is_tensor(leaf):
    return isinstance(leaf, tf.Tensor)


class TracedAux:
    """One preparation's aux: recorded while tracing, returned by each call of the traced function."""

    def __init__(self, capture, entry):
        self.capture, self.entry = capture, entry
        #: the graph being traced (set by :meth:`returning`'s function while it traces) and the aux
        #: recorded there
        self._graph = self._raw = None
        #: the aux's :class:`~diffinterface.core.aux_leaves.AuxLeaves`, from the trace
        self._plan = None
        #: the tensors of the last call's aux (:meth:`unpacking`)
        self._last = None

    def evaluating(self):
        """``f(x, *ctx) -> y`` through the capture, keeping the aux of the first evaluation in the traced graph."""
        with_aux, entry = self.capture.with_aux, self.entry

        def f(x, *ctx):
            y, aux = with_aux(entry, x, ctx)
            if (
                self._raw is None
                and self._graph is not None
                and tf.compat.v1.get_default_graph() is self._graph
            ):
                self._raw = (aux,)
            return y

        return f

    def returning(self, core):
        """``core(*args) -> results`` as ``traced(*args) -> (results, aux's tensors)``, for tracing."""

        def traced(*args):
            self._graph, self._raw = tf.compat.v1.get_default_graph(), None
            try:
                results = core(*args)
            finally:
                self._graph = None
            if (
                self._raw is None
            ):  # no evaluation in this graph: the core evaluates f once more per call
                self._plan = None
                return results, []
            self._plan, tensors = AuxLeaves.split(
                self._raw[0], _flatten, optree.tree_unflatten, _is_tensor
            )
            self._raw = None
            return results, tensors

        return traced

    def unpacking(self, compiled):
        """The traced function ``compiled`` returning its results only; the aux's tensors are kept for
        :meth:`handing_over`."""

        def call(*args):
            results, self._last = compiled(*args)
            return results

        return call

    def _aux(self):
        return self._plan.join(self._last)

    def handing_over(self, impl):
        """``impl`` whose methods hand each call's aux to the core (``AuxCapture.put``, at the call's x)."""
        if self._plan is None:
            return impl
        put, aux = self.capture.put, self._aux

        def handing(method):
            def call(x, *rest):
                results = method(x, *rest)
                put(x, aux())
                return results

            return call

        for name, method in list(vars(impl).items()):
            if callable(method):
                setattr(impl, name, handing(method))
        return impl


def traced_aux(problem):
    """The :class:`TracedAux` of a traced preparation with ``has_aux``, or None (no aux, or an f derived from the
    user's, whose aux the core takes by itself)."""
    capture = problem.aux
    if capture is None or problem.aux_entry is not problem.f:
        return None
    return TracedAux(capture, problem.f)
