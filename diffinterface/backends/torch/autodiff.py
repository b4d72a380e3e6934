"""torch's autodiff primitives as this adapter uses them: traced calls, batched backward passes, dual numbers, vmap(jvp)."""

from __future__ import annotations

import torch
from torch.autograd import forward_ad as fwAD

from .boundary import _as_output

_Tensor = torch.Tensor
_grad = torch.autograd.grad
_grad_enabled = torch.is_grad_enabled
_enable_grad = torch.enable_grad
_vmap = torch.func.vmap
_jvp = torch.func.jvp
_functional_jacobian = torch.autograd.functional.jacobian
_ones_like = torch.ones_like
_has_torch_function = torch._C._has_torch_function

# What torch.autograd.grad runs once it has handled its arguments. That handling (tuples,
# __torch_function__ dispatch, _make_grads' checks) is a large part of a small gradient's call
# (benchmarks/README.md); _vjp calls the engine itself when it needs none of it. None on a
# torch without it: every backward pass then goes through torch.autograd.grad.
_engine_run_backward = getattr(torch.autograd.graph, "_engine_run_backward", None)


def _traced(fn, xr, ctx):
    """``fn(xr, *ctx)`` with autograd recording, even inside the user's ``torch.no_grad()``."""
    if _grad_enabled():
        y = fn(xr, *ctx)
    else:
        with _enable_grad():
            y = fn(xr, *ctx)
    return y if isinstance(y, _Tensor) else _as_output(y, xr)


# ``broken``: None where an output torch cannot trace back to x is a true zero (the derivative
# of a linear function, differentiated again); otherwise a function of the tensor f was called
# with, returning the error to raise (the boundary's ``broken``). Either way it is only looked
# at once torch found no path, and never for an empty output, whose derivative is empty.


def _vjp(y, xr, seed, broken, create_graph=False, keep_graph=False):
    """``seed @ J`` by one backward pass (seed None: a scalar ``y``); the graph is kept for more passes when
    ``create_graph`` or ``keep_graph``.

    Plain tensors with a scalar ``y`` (or a seed shaped like ``y``) go straight to torch's engine,
    with the arguments torch.autograd.grad would give it; anything else (tensor subclasses or an
    active ``__torch_function__`` mode, which torch.autograd.grad dispatches to, and a mis-shaped
    seed, whose error it words) goes through torch.autograd.grad.
    """
    if y.requires_grad:
        keep = create_graph or keep_graph
        if (
            _engine_run_backward is not None
            and not _has_torch_function((y, xr))
            and (not y.dim() if seed is None else seed.shape == y.shape)
        ):
            seeds = (_ones_like(y),) if seed is None else (seed,)
            g = _engine_run_backward(
                (y,), seeds, keep, create_graph, (xr,), True, accumulate_grad=False
            )[0]
        else:
            g = _grad(y, xr, seed, retain_graph=keep, create_graph=create_graph, allow_unused=True)[
                0
            ]
        if g is not None:
            return g
    if broken is not None and y.numel():
        raise broken(xr)
    return torch.zeros_like(xr)


def _vjps(y, xr, seeds, broken, create_graph=False, chunk=None):
    """``s @ J`` for each row ``s`` of the stacked ``seeds``: one vectorized backward pass (one per
    ``chunk`` of seeds when ``chunk`` is given), the graph kept for the caller's further passes."""
    if y.requires_grad:
        g = _batched_backward(y, xr, seeds, create_graph, chunk)
        if g is not None:
            return g
    if broken is not None and seeds.shape[0] and y.numel():
        raise broken(xr)
    return torch.zeros((seeds.shape[0], *xr.shape), dtype=xr.dtype, device=xr.device)


def _batched_backward(y, xr, seeds, create_graph=False, chunk=None):
    """``s @ d y / d xr`` for each row ``s`` of ``seeds``, stacked: one backward pass through ``y``'s graph
    under ``torch.func.vmap`` per ``chunk`` of seeds (None: all); None where the graph does not reach ``xr``.

    ``torch.func.vmap``, not ``autograd.grad(is_grads_batched=True)``: the latter batches with torch's
    older vmap, which lacks the batching rules of most backward formulas and runs them seed by seed
    (``tanh_backward``), or batches a matrix-vector product's backward as one product per seed with
    the matrix repeated (``bmm``): a Jacobian's cost then grows with its size far faster than
    ``torch.func.jacrev``'s (benchmarks/README.md). The graph is kept (``retain_graph``) because each
    chunk runs it again, and the caller may (a Hessian's gradient graph).
    """
    plain = _engine_run_backward is not None and not _has_torch_function((y, xr))
    unreached = []

    def one(seed):
        if plain:
            (g,) = _engine_run_backward(
                (y,), (seed,), True, create_graph, (xr,), True, accumulate_grad=False
            )
        else:
            (g,) = _grad(
                y, xr, seed, retain_graph=True, create_graph=create_graph, allow_unused=True
            )
        if g is None:  # vmap returns tensors only: the caller learns of it after the pass
            unreached.append(True)
            return torch.zeros_like(xr)
        return g

    g = _vmap(one, chunk_size=chunk)(seeds)
    return None if unreached else g


def _dual_jvp(fn, x, t, ctx, broken):
    """``(f(x), J @ t)`` with forward-mode dual numbers (one tangent); by two reverse passes inside
    another forward-mode level (torch's dual levels do not nest: an inner backend run by an outer's
    forward-mode rule, as an ImplicitFunction's AutoTorch conditions are)."""
    try:
        return _single_dual_jvp(fn, x, t, ctx, broken)
    except RuntimeError as error:  # raised on entering the level, before f runs
        if "Nested forward mode AD" not in str(error):
            raise
        return _double_vjp(fn, x, t, ctx, broken)


def _double_vjp(fn, x, t, ctx, broken):
    """``(f(x), J @ t)`` as the derivative of a pullback ``u -> J^T u`` along ``t``."""
    with _enable_grad():
        xr = x.detach().requires_grad_(True)
        y = fn(xr, *ctx)
        if not isinstance(y, _Tensor):
            y = _as_output(y, x)
        u = torch.zeros_like(y, requires_grad=True)
        (g,) = torch.autograd.grad(y, xr, u, create_graph=True, allow_unused=True)
        if g is None:
            if broken is not None and y.numel():
                raise broken(x)
            return y.detach(), torch.zeros_like(y)
        (tangent,) = torch.autograd.grad(g, u, t, allow_unused=True)
    return y.detach(), torch.zeros_like(y) if tangent is None else tangent


def _single_dual_jvp(fn, x, t, ctx, broken):
    with fwAD.dual_level():
        # a dual number is a view of its primal, and x may share the user's memory (from_numpy): an f
        # that writes into its argument (x += 1) writes into a clone
        y = fn(fwAD.make_dual(x.clone(), t), *ctx)
        if not isinstance(y, _Tensor):
            y = _as_output(y, x)
        primal, tangent = fwAD.unpack_dual(y)
    if tangent is None:
        if (
            broken is not None and primal.numel()
        ):  # an empty output has an empty derivative, graph or not
            raise broken(x)
        tangent = torch.zeros_like(primal)
    return primal, tangent


def _dual_jvps(fn, x, seeds, ctx, broken):
    """``(f(x), stacked J @ t)`` with dual numbers, one tangent after the other.

    For functions that write into a buffer (:func:`~.boundary.writes_into_buffers`),
    which ``vmap(jvp)`` refuses: dual numbers record in-place writes, at the price of
    one evaluation of ``f`` per tangent.
    """
    tangents = []
    for t in seeds:
        value, tangent = _dual_jvp(fn, x, t, ctx, broken)
        tangents.append(tangent)
    return value, torch.stack(tangents)


def _dual_output(fn, ctx, broken, has_aux=False):
    """``z -> fn(z, *ctx)`` for torch.func's forward transforms: a tensor, and (unless ``broken``
    is None) one that carries a tangent, so that a broken graph raises instead of giving zeros.
    ``has_aux``: ``fn`` returns ``(y, aux)``, and so does the bound function."""
    if broken is None:
        return (lambda z: fn(z, *ctx)) if ctx else fn

    def bound(z):
        y = fn(z, *ctx)
        if has_aux:
            y, aux = y
        if not isinstance(y, _Tensor):
            y = _as_output(y, z)
        if fwAD.unpack_dual(y).tangent is None and y.numel():
            raise broken(z)
        return (y, aux) if has_aux else y

    return bound


def _vmapped_jvp(fn, n_ctx, broken, chunk=None, aux=None):
    """``run(call_x, x, tangents, *ctx) -> (f(x), stacked J @ t)`` over a stacked batch of tangents.

    The batch stays the leading axis: vmap cannot place an unbatched result
    (f ignoring x) at another axis. ``chunk`` (None: all) bounds how many
    tangents one vectorized pass takes, as ``vmap(chunk_size=)`` would (which
    cannot return the unbatched value: each chunk is one vmap here). ``aux``
    (a :class:`~.aux.NativeAux`, with has_aux) differentiates its pair instead
    of ``fn``: the aux of the first pass is handed over for ``call_x``, the
    call's x as the user gave it (unused otherwise).
    """
    has_aux = aux is not None
    if has_aux:
        fn = aux.pair

    def one(x, t, *ctx):
        return _jvp(_dual_output(fn, ctx, broken, has_aux), (x,), (t,), has_aux=has_aux)

    mapped = _vmap(
        one, in_dims=(None, 0) + (None,) * n_ctx, out_dims=(None, 0, None) if has_aux else (None, 0)
    )
    if chunk is not None:
        whole = mapped

        def mapped(x, tangents, *ctx):
            value, first, *rest_of_first = whole(x, tangents[:chunk], *ctx)
            rest = [
                whole(x, tangents[start : start + chunk], *ctx)[1]
                for start in range(chunk, len(tangents), chunk)
            ]
            return (value, torch.cat([first, *rest]), *rest_of_first)

    def promoted(parts, tangents):
        if (
            parts.dtype != tangents.dtype
            and parts.is_floating_point()
            and tangents.is_floating_point()
        ):
            # vmap promotes a 0-d x times a Python float to float64 (torch's wrapped numbers lose
            # their weak type once batched): the tangents' dtype is what the unbatched jvp gives
            return parts.to(tangents.dtype)
        return parts

    if has_aux:
        hand_over = aux.hand_over

        def run(call_x, x, tangents, *ctx):
            value, parts, tensors = mapped(x, tangents, *ctx)
            hand_over(call_x, tensors)
            return value, promoted(parts, tangents)

    else:

        def run(call_x, x, tangents, *ctx):
            value, parts = mapped(x, tangents, *ctx)
            return value, promoted(parts, tangents)

    return run


#: Largest input for which ``torch.autograd.functional.jacobian``'s forward strategy beats
#: ``vmap(jvp)``: it batches with torch's older vmap, whose per-seed fallbacks grow with the input
#: (benchmarks/README.md).
_FUNCTIONAL_FORWARD_MAX_INPUT = 16

#: Largest output for which ``mode=None`` computes a derivative by batched backward passes, which
#: beat dual numbers up to about there (benchmarks/README.md).
_REVERSE_DERIVATIVE_MAX_OUTPUT = 100


def _forward_jacobian(fn, x, ctx, broken):
    """The Jacobian by forward mode over the input basis, vectorized (no value)."""
    return _functional_jacobian(
        _dual_output(fn, ctx, broken), x, vectorize=True, strategy="forward-mode"
    )


def _forward_jacobian_with_value(fn, x, ctx, broken):
    """``(f(x), Jacobian)`` for functions that write into a buffer, from one evaluation: the Jacobian
    by ``autograd.functional.jacobian``'s forward strategy (dual numbers, which record in-place
    writes, batched over the input basis); the value is the primal of the dual output."""
    dual = _dual_output(fn, ctx, broken)
    primals = []

    def recording(z):
        y = dual(z)
        if not isinstance(y, _Tensor):
            y = _as_output(y, z)
        primals.append(fwAD.unpack_dual(y).primal)
        return y

    jac = _functional_jacobian(recording, x, vectorize=True, strategy="forward-mode")
    return primals[0].detach(), jac


def _with_value(fn):
    """``z -> (fn(z), fn(z))`` from one evaluation: the value rides along as a transform's aux output."""

    def both(z):
        y = fn(z)
        return y, y

    return both
