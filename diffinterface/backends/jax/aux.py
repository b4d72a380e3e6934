"""``has_aux=True`` on JAX: aux computed next to the derivative, in the same compiled function.

JAX traces f without values, so the aux that f computes inside ``grad`` or
``jvp`` are tracers of those transforms and cannot leave them. Each prepared
function of a problem with ``has_aux`` (``problem.aux``) evaluates f once more
at x, outside the transforms, and returns the aux's arrays beside its
results; XLA merges that evaluation with the transforms' own forward pass,
so a compiled call computes f's forward pass once (the Python function f is
traced twice at preparation). Leaves that are not arrays (strings, numbers,
numpy constants) cannot be outputs of a compiled function: they are kept from
the trace, as jit would see them. Results then go to the core
(:meth:`~diffinterface.core.aux.AuxCapture.put`), which returns them with
the derivative.
"""

from __future__ import annotations

import jax

from ...core import OPERATORS


def _operator_methods():
    return {name for op in OPERATORS.values() for name in op.methods}


class NativeAux:
    """The wrappers of one preparation's functions: computing aux beside the results, handing it over."""

    def __init__(self, capture, entry, n_ctx):
        self.capture, self.entry, self.n_ctx = capture, entry, n_ctx
        self.static = None  # (treedef, {position: leaf}) of the aux's non-array leaves, from the trace
        capture.native = True

    def computing(self, built, compiled):
        """``built`` returning ``(results, aux arrays)``: f evaluated once more at x, outside the transforms.

        Eagerly (not ``compiled``), an aux already known from the preparation of an unprepared call (f
        evaluated at x's values to learn its output) is not computed again.
        """
        capture, entry, n_ctx = self.capture, self.entry, self.n_ctx

        def with_aux(x, *args):
            if not compiled and capture.found:
                return built(x, *args), None
            ctx = args[len(args) - n_ctx:] if n_ctx else ()
            aux = capture.raw_aux(entry, x, ctx)
            leaves, treedef = jax.tree_util.tree_flatten(aux, is_leaf=lambda leaf: leaf is None)
            arrays = [i for i, leaf in enumerate(leaves) if isinstance(leaf, (jax.Array, jax.core.Tracer))]
            self.static = (treedef, {i: leaf for i, leaf in enumerate(leaves) if i not in set(arrays)}, arrays)
            return built(x, *args), [leaves[i] for i in arrays]

        return with_aux

    def handing_over(self, fn):
        """``fn`` (over :meth:`computing`'s function) returning its results, its aux handed to the core."""
        put = self.capture.put

        def call(*args):
            results, arrays = fn(*args)
            if arrays is None:  # known already (see computing)
                return results
            treedef, static, positions = self.static
            leaves = [static.get(i) for i in range(treedef.num_leaves)]
            for i, array in zip(positions, arrays):
                leaves[i] = array
            put(args[0], jax.tree_util.tree_unflatten(treedef, leaves))
            return results

        return call


def native_aux(problem, builders, n_ctx):
    """The :class:`NativeAux` of a problem with ``has_aux`` whose f is the user's (not a derivative of it)
    and whose functions are an operator's, or None."""
    capture = problem.aux
    if capture is None or problem.aux_entry is not problem.f:
        return None
    if not set(builders) <= _operator_methods():
        return None
    return NativeAux(capture, problem.aux_entry, n_ctx)
