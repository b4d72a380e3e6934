"""torch's DifferentiateWith rules: a bridged function inside torch is ``torch.autograd.Function``s whose
work is the inner backend's; tensors cross by DLPack or shared numpy buffers (:class:`TorchBridge`,
registered with ``AutoTorch``).

Five Functions, each with ``backward``, ``jvp`` (forward AD, ``torch.func.jvp``)
and a ``vmap`` rule (``torch.func.vmap``, ``jacrev``, ``jacfwd``), so that
torch can differentiate the result of each again:

==============  ==========================  ===================================
Function        computes                    backward / jvp use
==============  ==========================  ===================================
``_Value``      ``f(x)``                    ``_Gradient`` (scalar f, reverse
                                            inner) or ``_Pullback``; ``_Pushforward``
``_Gradient``   the gradient ``_Value``     ``_Hvp``
                computed with the value
``_Pushforward````J t``                     ``_Pullback`` (t), ``_Hvp`` (x, scalar f)
``_Pullback``   ``c @ J``                   ``_Pushforward`` (c), ``_Hvp`` (x)
``_Hvp``        ``sum_k c_k H_k v``         ``_Hvp`` (v); third order raises
==============  ==========================  ===================================

When the gradient will be needed (grad mode on, ``x.requires_grad``), a
scalar ``f`` on a reverse-mode inner gets value and gradient from one inner
call on the forward pass, and ``backward`` scales that gradient: one inner
call per outer gradient. A ``vmap`` over tangents or cotangents alone is one
call of the inner's batched operator; a ``vmap`` over x, or one that torch
must differentiate again, runs the Function once per element.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import weakref
from typing import Optional

import numpy as np
import torch

from ...core.bridge import FrameworkBridge, converted_contexts, third_order, to_family
from ...errors import UnsupportedError
from ...families import dtype_name, shape_of
from .graph_watch import defines_its_derivative


class _Call:
    """One call of the bridged function: its rules and contexts in the inner family."""

    def __init__(self, bridge, rules, contexts, want_gradient):
        self.rules, self.family = rules, bridge.family
        self.contexts = converted_contexts(contexts, bridge.family)
        self.want_gradient = want_gradient
        self.gradient = None

    def fresh(self):
        new = object.__new__(_Call)
        new.__dict__.update(self.__dict__, gradient=None)
        return new

    def inner(self, a):
        return to_family(a.detach(), self.family)

    def back(self, a, like):
        return to_family(a, "torch").to(device=like.device)

    def many(self, op, x, batch, *extra):
        """``op`` over a batch (leading axis) of seeds in one inner call; stacked."""
        seeds = tuple(self.inner(s) for s in batch.unbind(0))
        inner = (self.inner(x), *[self.inner(e) for e in extra], seeds, self.contexts)
        if self.family != "torch":
            outs = op(*inner)
        elif _inside_transform() is not None:
            outs = _in_own_thread(op, *inner)
        else:
            with _forward_ad_enabled(True):
                outs = op(*inner)
        return torch.stack([self.back(o, x) for o in outs])


def _direct(call, kind, x, a=None, b=None, below_autograd=False):
    if call.family != "torch":
        return _rules_of(call, kind, x, a, b)
    if below_autograd or _inside_transform() is not None:
        return _in_own_thread(_rules_of, call, kind, x, a, b)
    # a Function's forward runs with forward-mode AD off, which an inner forward-mode backend needs
    with _forward_ad_enabled(True):
        return _rules_of(call, kind, x, a, b)


_inside_transform = torch._C._functorch.maybe_current_level
_forward_ad_enabled = torch.autograd.forward_ad._set_fwd_grad_enabled


def _in_own_thread(function, *args):
    """``function(*args)`` where torch's thread-local state is fresh.

    An inner backend of torch's own AD (an ImplicitFunction's conditions by
    AutoTorch) runs inside the outer's rules; where torch calls them below
    autograd (a legacy-batched element) or inside a ``torch.func`` level,
    that inner could not record in this thread.
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args).result()


def _rules_of(call, kind, x, a, b):
    rules = call.rules
    if kind == "value":
        return call.back(rules.value(call.inner(x), call.contexts), x)
    if kind == "value_and_gradient":
        y, g = rules.value_and_gradient(call.inner(x), call.contexts)
        return call.back(y, x), call.back(g, x)
    if kind == "hvp":
        (out,) = rules.hvp(call.inner(x), call.inner(a), (call.inner(b),), call.contexts)
    else:
        (out,) = getattr(rules, kind)(call.inner(x), (call.inner(a),), call.contexts)
    return call.back(out, x)


#: key -> a call under torch's older batching, for as long as its graph (which holds the call) lives
_calls: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_keys = itertools.count()


def _compute(call, kind, *tensors):
    """The inner computation ``kind`` on torch tensors.

    torch's older batching (``is_grads_batched=True`` backward passes,
    ``autograd.functional.jacobian(vectorize=True)``) does not run a
    Function's vmap rule; it hands the Function batched tensors that cannot
    leave torch. For those the computation goes through the torch operator
    ``diffinterface::bridged``, which that batching runs once per element.
    """
    if not any(_legacy_batched(t) for t in tensors):
        return _direct(call, kind, *tensors)
    key = call.__dict__.get("key")
    if key is None:
        key = call.key = next(_keys)
        _calls[key] = call
    if kind == "value_and_gradient":
        return _bridged(key, "value", *tensors), _bridged(key, "gradient", *tensors)
    return _bridged(key, kind, *tensors)


@torch.library.custom_op("diffinterface::bridged", mutates_args=())
def _bridged(
    key: int,
    kind: str,
    x: torch.Tensor,
    a: Optional[torch.Tensor] = None,
    b: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    call = _calls[key]
    if kind == "gradient":
        return _direct(call, "value_and_gradient", x, below_autograd=True)[1]
    return _direct(call, kind, x, a, b, below_autograd=True).clone()


_legacy_batched = torch._C._functorch.is_legacy_batchedtensor


def _in_jvp(function, *args):
    """``function`` applied inside a jvp rule.

    Under ``torch.func`` the tangents are functorch tensors and the Function is
    applied (so vmap and further transforms see it); plain forward AD
    (``torch.autograd.forward_ad``) cannot nest a Function's jvp, so the
    tangent is computed directly there.
    """
    if any(isinstance(a, torch.Tensor) and _functorch_wrapped(a) for a in args):
        return function.apply(*args)
    return function.forward(
        *args
    )  # (batched tangents of torch's older batching go through _compute)


_functorch_wrapped = torch._C._functorch.is_functorch_wrapped_tensor


def _plain(*tensors):
    """True when no transform below this vmap level watches the tensors: they may leave torch."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return False
    return not any(_functorch_wrapped(t) for t in tensors)


def _moved(a, dim, n):
    return a.expand(n, *a.shape) if dim is None else a.movedim(dim, 0)


def _per_element(apply, info, in_dims, tensors, call):
    n = info.batch_size
    moved = [_moved(t, d, n) for t, d in zip(tensors, in_dims)]
    return torch.stack([apply(*(m[i] for m in moved), call.fresh()) for i in range(n)]), 0


class _Bridged(torch.autograd.Function):
    """The Functions' shared part: inputs are tensors, then the call; the tensors are saved for backward
    and forward AD; a vmap torch cannot hand to the inner at once runs the Function per element."""

    @staticmethod
    def setup_context(ctx, inputs, output):
        *tensors, call = inputs
        ctx.save_for_backward(*tensors)
        ctx.save_for_forward(*tensors)
        ctx.call = call

    @classmethod
    def per_element(cls, info, in_dims, *inputs):
        *tensors, call = inputs
        return _per_element(cls.apply, info, in_dims[: len(tensors)], tensors, call)


class _Value(_Bridged):
    @staticmethod
    def forward(x, call):
        if call.want_gradient:
            y, call.gradient = _compute(call, "value_and_gradient", x)
            return y
        return _compute(call, "value", x)

    @staticmethod
    def backward(ctx, cotangent):
        (x,) = ctx.saved_tensors
        if ctx.call.rules.gradient_route:
            return cotangent * _Gradient.apply(x, ctx.call), None
        return _Pullback.apply(x, cotangent, ctx.call), None

    @staticmethod
    def jvp(ctx, x_dot, _):
        (x,) = ctx.saved_tensors
        return _in_jvp(_Pushforward, x, x_dot, ctx.call)

    @staticmethod
    def vmap(info, in_dims, x, call):
        return _Value.per_element(info, in_dims, x, call)


class _Gradient(_Bridged):
    @staticmethod
    def forward(x, call):
        if call.gradient is None:  # not computed on the forward pass (gradient not expected then)
            _, call.gradient = _compute(call, "value_and_gradient", x)
        return call.gradient

    @staticmethod
    def backward(ctx, cotangent):
        (x,) = ctx.saved_tensors
        return _Hvp.apply(x, _one(ctx.call, x), cotangent, ctx.call), None

    @staticmethod
    def jvp(ctx, x_dot, _):
        (x,) = ctx.saved_tensors
        return _in_jvp(_Hvp, x, _one(ctx.call, x), x_dot, ctx.call)

    @staticmethod
    def vmap(info, in_dims, x, call):
        return _Gradient.per_element(info, in_dims, x, call)


def _one(call, x):
    return torch.ones((), dtype=getattr(torch, call.rules.spec[1]), device=x.device)


class _Linear(_Bridged):
    """A map linear in its seed, ``J t`` (:class:`_Pushforward`) or ``c @ J`` (:class:`_Pullback`): its
    derivative along the seed is itself (jvp) or the other one (backward); along x, the inner's hvp."""

    kind = ""

    @classmethod
    def forward(cls, x, seed, call):
        return _compute(call, cls.kind, x, seed)

    @classmethod
    def backward(cls, ctx, cotangent):
        x, seed = ctx.saved_tensors
        x_bar = (
            cls.backward_along_x(ctx.call, x, seed, cotangent) if ctx.needs_input_grad[0] else None
        )
        return x_bar, cls.transposed().apply(x, cotangent, ctx.call), None

    @classmethod
    def jvp(cls, ctx, x_dot, seed_dot, _):
        x, seed = ctx.saved_tensors
        out = _in_jvp(cls, x, seed_dot, ctx.call) if seed_dot is not None else None
        if x_dot is not None:
            term = cls.jvp_along_x(ctx.call, x, seed, x_dot)
            out = term if out is None else out + term
        return out

    @classmethod
    def vmap(cls, info, in_dims, x, seed, call):
        if in_dims[0] is None and _plain(x, seed):  # a batch of seeds alone: one batched inner call
            return call.many(getattr(call.rules, cls.kind), x, seed.movedim(in_dims[1], 0)), 0
        return cls.per_element(info, in_dims, x, seed, call)


class _Pushforward(_Linear):
    kind = "pushforward"
    transposed = staticmethod(lambda: _Pullback)

    @staticmethod
    def backward_along_x(call, x, t, cotangent):
        if not call.rules.scalar:
            raise _forward_over_forward()
        return _Hvp.apply(x, cotangent, t, call)

    @staticmethod
    def jvp_along_x(call, x, t, x_dot):
        if not call.rules.scalar:
            raise _forward_over_forward()
        return torch.sum(_in_jvp(_Hvp, x, _one(call, x), x_dot, call) * t)


def _forward_over_forward():
    return UnsupportedError(
        "DifferentiateWith: differentiating a pushforward of a non-scalar f with respect to x needs "
        "second derivatives of every output; use reverse mode inside (torch.func.jacfwd(torch.func.jacrev(...)))"
    )


class _Pullback(_Linear):
    kind = "pullback"
    transposed = staticmethod(lambda: _Pushforward)
    # c @ J along x is sum_k c_k H_k, symmetric: the inner's hvp both ways
    backward_along_x = staticmethod(lambda call, x, c, cotangent: _Hvp.apply(x, c, cotangent, call))
    jvp_along_x = staticmethod(lambda call, x, c, x_dot: _in_jvp(_Hvp, x, c, x_dot, call))


class _Hvp(_Bridged):
    @staticmethod
    def forward(x, c, v, call):
        return _compute(call, "hvp", x, c, v)

    @staticmethod
    def backward(ctx, cotangent):
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            raise third_order(
                "differentiating a second derivative with respect to x or the cotangent"
            )
        x, c, _ = ctx.saved_tensors
        return None, None, _Hvp.apply(x, c, cotangent, ctx.call), None

    @staticmethod
    def jvp(ctx, x_dot, c_dot, v_dot, _):
        if x_dot is not None or c_dot is not None:
            raise third_order(
                "differentiating a second derivative with respect to x or the cotangent"
            )
        x, c, _ = ctx.saved_tensors
        return _in_jvp(_Hvp, x, c, v_dot, ctx.call) if v_dot is not None else None

    @staticmethod
    def vmap(info, in_dims, x, c, v, call):
        if in_dims[0] is None and in_dims[1] is None and _plain(x, c, v):
            return call.many(
                lambda x, c, vs, ctx: call.rules.hvp(x, c, vs, ctx), x, v.movedim(in_dims[2], 0), c
            ), 0
        return _Hvp.per_element(info, in_dims, x, c, v, call)


@defines_its_derivative
def call(bridge, x, contexts):
    """``bridge(x, *contexts)`` for a torch tensor ``x`` (of another framework than the inner's)."""
    if (
        bridge.family == "torch"
        and _inside_transform() is not None
        and not bridge.has_rules(x, contexts)
    ):
        # rules built at a tensor of a torch.func level: their first evaluation (an ImplicitFunction's
        # solver, which may call numpy) runs where no level is active
        _in_own_thread(bridge.rules, x, contexts)
    rules = bridge.rules(x, contexts)
    if x.device.type == "meta":  # shape inference (the torch adapter's): no numbers to compute with
        shape, dtype = rules.spec
        return torch.empty(shape, dtype=getattr(torch, dtype), device="meta")
    want_gradient = rules.gradient_route and torch.is_grad_enabled() and x.requires_grad
    return _Value.apply(x, _Call(bridge, rules, contexts, want_gradient))


def _plain_tensor(t):
    """``t`` without autograd history or torch.func wrappers (a context seen inside a transform)."""
    functorch = torch._C._functorch
    while functorch.is_functorch_wrapped_tensor(t):
        if functorch.is_batchedtensor(t):  # its values are a whole batch, not this tensor's
            raise ValueError(
                "DifferentiateWith: a context batched by torch.func.vmap cannot reach the inner backend (its "
                "values are the whole batch, not one element's): vmap over x only (in_dims=None for the "
                "contexts), or loop over the batch"
            )
        t = functorch.get_unwrapped(t)
    with torch._C._DisableFuncTorch():  # under an active transform, even detach() would wrap again
        return t.detach().cpu()


class TorchBridge(FrameworkBridge):
    """torch as either side of a bridge: its tensors call :func:`call`; an AutoTorch inner computes on
    tensors, and learns f's output on the meta device where f runs there."""

    inner_family = "torch"

    def call(self, bridge, x, contexts):
        return call(bridge, x, contexts)

    def plain(self, a):
        return _plain_tensor(a)

    def to_numpy(self, a):
        with torch._C._DisableFuncTorch():
            return a.numpy()

    def receive(self, a, source):
        """A read-only numpy buffer (what JAX hands to a callback) is copied before torch sees it: torch
        cannot mark a tensor read-only, and an ``f`` that wrote into its input would otherwise write into
        JAX's immutable array."""
        if source == "jax":
            return torch.from_dlpack(a)
        a = np.asarray(a)
        return torch.from_numpy(a if a.flags.writeable else a.copy())

    def output_spec(self, evaluate, x, contexts):
        try:
            meta = [
                type(c)(c.value.to("meta")) if isinstance(c.value, torch.Tensor) else c
                for c in contexts
            ]
            y = evaluate(x.to("meta"), meta)
            if isinstance(y, torch.Tensor) and y.device.type == "meta":
                return shape_of(y), dtype_name(y)
        except Exception:  # noqa: BLE001 - f needs real numbers: the caller evaluates it
            pass
        return None


BRIDGE = TorchBridge()
