"""Same-point recipes for torch (``prepare_pushforward_same_point`` and friends, ``Adapter.prepare_same_point``).

At preparation f runs once at x with autograd recording (for hvp, the
gradient too, with its own graph); each call is one backward pass through
that graph, kept with ``retain_graph=True``: a plain one for a single seed,
one batched over the seeds (``torch.func.vmap`` over the backward pass,
``autodiff.py``) for several, in batches of the selector's ``batch_size`` or of the
memory rule as every torch sweep (``batching.py``). A pushforward is the backward pass of the pullback
(``J t`` is the gradient of ``(u @ J) . t`` with respect to ``u``), through
the same recorded graph.
"""

from __future__ import annotations

import torch

from ...core import OPERATORS, Impl
from ...core.batching import record
from .autodiff import _traced, _vjp, _vjps
from .batching import sweep_batch
from .boundary import _Boundary, _contexts, _materialized


def _backward(outputs, inputs, seeds, chunk):
    """``seeds[i] @ d outputs / d inputs`` for each seed, through the kept graph (zeros where none), in batched
    passes of ``chunk`` seeds (None: all at once)."""
    return _materialized(_vjps(outputs, inputs, seeds, None, chunk=chunk))


def prepare_same_point(operator, problem):
    """The same-point :class:`~diffinterface.core.Impl` of ``operator`` for ``problem`` (an array x), or None."""
    if problem.tree is not None or operator not in ("pushforward", "pullback", "hvp"):
        return None
    b = _Boundary(problem)
    xr = b.recording(problem.x)
    ctx = _contexts(problem.ctx) if problem.ctx else ()
    with torch.enable_grad():
        y = _traced(b.fn, xr, ctx)
        first, through, wrt = y, y, xr
        if operator == "hvp":
            first = through = torch.autograd.grad(y, xr, create_graph=True, materialize_grads=True)[
                0
            ]
        elif operator == "pushforward":
            u = torch.zeros_like(y, requires_grad=True)
            through = torch.autograd.grad(y, xr, u, create_graph=True, materialize_grads=True)[0]
            wrt = u
    as_tensor, back = b.as_tensor, b.back
    first_value = b.back_value(first.detach())
    chunk, chosen = sweep_batch(problem.adapter, b, problem, len(problem.tangents))

    if len(problem.tangents) == 1:  # vmap's batched tensors cost more than they save for one seed

        def products(seeds):
            return (
                back(_materialized(_vjp(through, wrt, as_tensor(seeds[0]), None, keep_graph=True))),
            )

    else:

        def products(seeds):
            stacked = torch.stack([as_tensor(s) for s in seeds])
            return tuple(back(r) for r in _backward(through, wrt, stacked, chunk))

    plain, valued = OPERATORS[operator].methods
    copy = first_value.copy if hasattr(first_value, "copy") else first_value.clone
    return record(
        Impl(
            **{
                plain: lambda x, seeds, *ctx: products(seeds),
                valued: lambda x, seeds, *ctx: (copy(), products(seeds)),
            }
        ),
        chosen,
    )
