"""How many seeds one vectorized pass of a torch sweep takes: the selector's ``batch_size``, or the largest
batch whose working memory, estimated from one evaluation of f at preparation, fits the budget.

The choice itself is :func:`diffinterface.core.batching.choose_batch_size`'s;
this module only estimates one seed's bytes: f is evaluated once, without
recording, while a ``TorchFunctionMode`` adds up the bytes of every new tensor
its torch functions return, views of their arguments left out (more than f's
peak, which frees some of them as it goes).
One seed of a ``vmap(jvp)`` or of a batched backward pass creates about one
tangent or cotangent per such tensor, and as many temporaries for the
product rules: twice that sum. Only where the choice needs it (see
``choose_batch_size``): small sweeps spend no evaluation on it.
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

from ...core.batching import choose_batch_size
from .boundary import _contexts

#: one seed's working memory, in units of the bytes f's own evaluation creates (tangent and
#: temporaries)
_SEED_TO_EVALUATION = 2


def _storage(t):
    """Where ``t``'s memory lives (None where torch cannot say: a sparse or wrapped tensor)."""
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


class _CountingBytes(TorchFunctionMode):
    """Adds up the bytes of every new tensor the torch functions run under it return (a Python-level mode:
    its first use costs nothing more, where a dispatch mode's costs seconds).

    A result sharing memory with one of the function's own tensor arguments is
    that argument or a view of it (``A.T``, ``reshape``, a ``.to`` that changes
    nothing), which allocates nothing and carries no tangent of its own: counted, a
    view of a large closed-over matrix made every seed look as large as the matrix.
    """

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        inputs = None
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                if inputs is None:
                    inputs = {
                        _storage(a)
                        for a in tree_leaves((args, kwargs))
                        if isinstance(a, torch.Tensor)
                    }
                where = _storage(t)
                if where is None or where not in inputs:
                    self.bytes += t.numel() * t.element_size()
        return out


def _one_seed_bytes(boundary, problem):
    def estimate():
        try:
            x, ctx = boundary.as_tensor(problem.x), _contexts(problem.ctx)
            with torch.no_grad(), _CountingBytes() as counting:
                boundary.fn(x, *ctx)
        except Exception:  # noqa: BLE001 - no estimate: the sweep runs whole, and f's own errors come from it
            return None
        return _SEED_TO_EVALUATION * counting.bytes

    return estimate


def sweep_batch(adapter, boundary, problem, n):
    """``(chunk, chosen)``: ``chosen`` seeds per vectorized pass of a sweep over ``n`` seeds; ``chunk``
    is ``chosen``, or None when one pass takes all (torch's own, unchanged)."""
    chosen = choose_batch_size(
        adapter.backend, n, _one_seed_bytes(boundary, problem), problem.one_off
    )
    return (chosen if chosen < n else None), chosen
