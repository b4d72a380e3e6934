"""``has_aux=True`` through torch.func's forward transforms: aux leaves ``jvp`` as its own auxiliary output.

Most torch recipes evaluate f on tensors whose values can be read (a tensor
recording gradients, a dual number), and the core's
:class:`~diffinterface.core.aux.AuxCapture` keeps the aux of the evaluation at
x by itself. ``vmap(jvp)`` (forward-mode Jacobians, pushforwards of several
tangents) runs f on torch.func's wrapped tensors, whose values cannot be
read there and which are dead once the transforms return. For these recipes
f is differentiated as ``problem.aux_entry`` returning ``(y, aux's tensors)``
with ``torch.func.jvp(..., has_aux=True)``, which unwraps the aux tensors at
its level; ``vmap`` returns them unbatched (they do not depend on the
tangent). torch.func refuses aux leaves that are not tensors (strings,
numbers): those are kept from the evaluation itself, the very objects, and
put back by :meth:`NativeAux.hand_over`, which gives the whole aux to the
core (:meth:`~diffinterface.core.aux.AuxCapture.put`).
"""

from __future__ import annotations

import optree
import torch

from ...core.aux_leaves import AuxLeaves
from .boundary import _primal_tensor


def _flatten(aux):
    return optree.tree_flatten(aux, none_is_leaf=True)


def _is_tensor(leaf):
    return isinstance(leaf, torch.Tensor)


class NativeAux:
    """One preparation's f returning ``(y, aux's tensors)``, and the hand-over of the aux of each call.

    >>> import numpy as np, torch, diffinterface as di
    >>> def f(x):
    ...     return (x ** 2).sum(), {"norm": x.norm(), "label": "at x"}
    >>> grad, aux = di.gradient(f, di.AutoTorch(mode="forward"), torch.tensor([3.0, 4.0]), has_aux=True)
    >>> grad.tolist(), float(aux["norm"]), aux["label"]
    ([6.0, 8.0], 5.0, 'at x')
    """

    def __init__(self, capture, entry):
        self.capture, self.entry = capture, entry
        #: the :class:`~diffinterface.core.aux_leaves.AuxLeaves` of the last evaluation's aux
        self.layout = None

    def pair(self, x, *ctx):
        """``entry(x, *ctx)`` as ``(y, aux's tensors)``, the pair torch.func's ``has_aux=True`` takes."""
        y, aux = self.capture.with_aux(self.entry, x, ctx)
        self.layout, tensors = AuxLeaves.split(aux, _flatten, optree.tree_unflatten, _is_tensor)
        return y, tensors

    def with_value(self, *ctx):
        """``z -> (y, (y, aux's tensors))``: the value and the aux ride along as a transform's aux output
        (``jacfwd``/``grad_and_value`` with ``has_aux=True``) from one evaluation."""

        def both(z):
            y, tensors = self.pair(z, *ctx)
            return y, (y, tensors)

        return both

    def hand_over(self, call_x, tensors):
        """Give the core the aux whose tensors a transform returned, for the call at ``call_x`` (the user's x, or
        an outer backend's recording of it: the core compares its values)."""
        self.capture.put(call_x, self.layout.join([_primal_tensor(t) for t in tensors]))


def native_aux(problem):
    """The :class:`NativeAux` of ``problem`` when its f is the user's (reaching the core's capture), else None."""
    capture = problem.aux
    if capture is None or problem.aux_entry is not problem.f or problem.y is not None:
        return None
    return NativeAux(capture, problem.f)
