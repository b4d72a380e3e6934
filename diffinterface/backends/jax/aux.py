"""``has_aux=True`` on JAX: JAX's own ``has_aux``, so f is traced (or, eagerly, evaluated) once per function.

The core hands the adapter ``problem.f`` returning y only (an
:class:`~diffinterface.core.aux.AuxCapture`, or a function reaching one:
``problem.aux_entry``). Each operator's recipe is then built over
:meth:`NativeAux.pair`, the same function returning ``(y, aux)``, with
``has_aux=True`` on JAX's transforms (``grad``, ``value_and_grad``,
``jacfwd``, ``jacrev``, ``jvp``, ``vjp``): aux leaves them as computed at x,
never differentiated, and every built function returns ``(results, aux)``.
Leaves of aux that are not JAX arrays (strings, numbers, numpy constants)
cannot be outputs of a compiled function: they are kept from the trace, as
jit would see them, and put back by :meth:`NativeAux.handing_over`, which
hands the whole aux to the core (:meth:`~diffinterface.core.aux.AuxCapture.put`).
"""

from __future__ import annotations

import jax

from ...core import OPERATORS
from ...core.aux_leaves import AuxLeaves
from ...core.boundary import check_output


def _operator_methods():
    return {name for op in OPERATORS.values() for name in op.methods}


def _is_array(leaf):
    return isinstance(leaf, (jax.Array, jax.core.Tracer))


def _flatten(aux):
    return jax.tree_util.tree_flatten(aux, is_leaf=lambda leaf: leaf is None)


class NativeAux:
    """One preparation's f returning ``(y, aux arrays)``, and the hand-over of its functions' aux."""

    def __init__(self, capture, entry):
        self.capture, self.entry = capture, entry
        #: the aux's :class:`~diffinterface.core.aux_leaves.AuxLeaves`, from the trace
        self.layout = None
        capture.native = self

    def pair(self):
        """``problem.f`` as ``f(x, *ctx) -> (y, aux's arrays)``, for JAX's ``has_aux=True``."""
        capture, entry = self.capture, self.entry

        def f_with_aux(x, *ctx):
            y, aux = capture.with_aux(entry, x, ctx)
            check_output(capture.f, y, has_aux=True)
            self.layout, arrays = AuxLeaves.split(
                aux, _flatten, jax.tree_util.tree_unflatten, _is_array
            )
            return y, arrays

        return f_with_aux

    def handing_over(self, fn):
        """``fn`` (a built function returning ``(results, aux arrays)``) returning its results, its aux handed
        to the core."""
        put = self.capture.put

        def call(*args):
            results, arrays = fn(*args)
            put(args[0], self.layout.join(arrays))
            return results

        return call


def _native(problem):
    capture = problem.aux
    if capture is None or problem.aux_entry is not problem.f:
        return None
    native = capture.native
    return (
        native
        if isinstance(native, NativeAux) and native.entry is problem.f
        else NativeAux(capture, problem.f)
    )


def traced_function(problem):
    """``(f, has_aux)`` for an operator's recipe: ``problem.f``, or with ``has_aux`` (f the user's, reaching
    the capture) the function returning ``(y, aux)`` that JAX's ``has_aux=True`` takes."""
    native = _native(problem)
    return (problem.f, False) if native is None else (native.pair(), True)


def native_aux(problem, builders):
    """The :class:`NativeAux` whose functions ``builders`` (an operator's, built over :func:`traced_function`)
    return ``(results, aux)``, or None."""
    if not set(builders) <= _operator_methods():
        return None
    return _native(problem)
