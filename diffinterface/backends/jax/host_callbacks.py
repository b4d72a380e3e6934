"""The host side of JAX's DifferentiateWith primitives (``differentiate_with.py``): numpy in, numpy out.

A :class:`BridgedCall` holds one traced call's rules and contexts and computes
the value (and gradient) callbacks; a :class:`LinearCallback` is one of its
linear maps (pushforward, pullback or hvp) with its transpose. Both serve the
batching convention of ``pure_callback(vmap_method="expand_dims")``: every
operand carries ``nlevels`` leading axes, one per enclosing ``vmap``.
"""

from __future__ import annotations

import jax
import numpy as np

from ...core.bridge import converted_contexts, to_family
from ...families import shape_of, size_of


def expected_dtype(dtype):
    """The dtype JAX gives an output of ``dtype`` under the current x64 setting."""
    return jax.dtypes.canonicalize_dtype(np.dtype(dtype))


def _over_leading(fn, args, core_ndims):
    """``fn`` on every element of the leading (vmapped) axes of ``args``; results restacked."""
    if all(a.ndim == k for a, k in zip(args, core_ndims)):  # no vmap around the call
        return fn(*args)
    leads = [a.shape[: a.ndim - k] for a, k in zip(args, core_ndims)]
    lead = np.broadcast_shapes(*leads)
    n = size_of(lead)
    flat = [
        np.broadcast_to(a, lead + a.shape[len(own) :]).reshape((n,) + a.shape[len(own) :])
        for a, own in zip(args, leads)
    ]
    results = [fn(*(a[i] for a in flat)) for i in range(n)]
    if isinstance(results[0], tuple):
        return tuple(np.stack(r).reshape(lead + r[0].shape) for r in zip(*results))
    return np.stack(results).reshape(lead + results[0].shape)


class BridgedCall:
    """One traced call: the rules, the contexts and which of them are traced operands."""

    def __init__(self, bridge, rules, contexts, dynamic):
        self.bridge, self.rules, self.contexts, self.dynamic = bridge, rules, contexts, dynamic
        self.family = bridge.family
        y_shape, y_dtype = rules.spec
        self.y_struct = jax.ShapeDtypeStruct(y_shape, expected_dtype(y_dtype))
        self.y_dtype = self.y_struct.dtype
        self.core = [len(rules.x_shape)] + [len(shape_of(contexts[i].value)) for i in dynamic]

    def inner(self, x, dyn):
        """x and the contexts (traced ones given as numpy ``dyn``) in the inner family."""
        contexts = list(self.contexts)
        for i, value in zip(self.dynamic, dyn):
            contexts[i] = type(contexts[i])(value)
        return to_family(x, self.family), converted_contexts(contexts, self.family)

    def out(self, a, dtype):
        return np.asarray(to_family(a, "numpy"), dtype=dtype)

    def value(self, x, *dyn):
        def one(x, *dyn):
            xi, ci = self.inner(x, dyn)
            return (self.out(self.rules.value(xi, ci), self.y_dtype),)

        return _over_leading(one, (np.asarray(x), *map(np.asarray, dyn)), self.core)

    def value_and_gradient(self, x, *dyn):
        x_dtype = np.asarray(x).dtype

        def one(x, *dyn):
            xi, ci = self.inner(x, dyn)
            y, g = self.rules.value_and_gradient(xi, ci)
            return self.out(y, self.y_dtype), self.out(g, x_dtype)

        return _over_leading(one, (np.asarray(x), *map(np.asarray, dyn)), self.core)


class LinearCallback:
    """A map linear in its last operand (pushforward, pullback or hvp), with its transpose."""

    def __init__(self, kind, call, out_shape, out_dtype):
        self.kind, self.call = kind, call
        self.out_shape, self.out_dtype = tuple(out_shape), out_dtype
        self.n_dyn = len(call.dynamic)
        # residual operands: x, the traced contexts, and for hvp the cotangent c
        self.res_core = call.core + ([len(call.rules.spec[0])] if kind == "hvp" else [])

    def transposed(self):
        call = self.call
        x_shape, y_shape = call.rules.x_shape, call.rules.spec[0]
        if self.kind == "pushforward":
            return linear_callback(call, "pullback", x_shape, np.dtype(self.call_x_dtype()))
        if self.kind == "pullback":
            return linear_callback(call, "pushforward", y_shape, call.y_dtype)
        return self  # sum_k c_k H_k is symmetric

    def call_x_dtype(self):
        return expected_dtype(self.call.rules.x_dtype)

    def host(self, *args, nlevels):
        if not nlevels:  # no vmap around the call: one inner call, nothing to broadcast
            return self.apply([np.asarray(a) for a in args[:-1]], (np.asarray(args[-1]),))[0]
        res, v = [np.asarray(a) for a in args[:-1]], np.asarray(args[-1])
        lead = np.broadcast_shapes(*(a.shape[:nlevels] for a in (*res, v)))
        n = size_of(lead)
        v_core = v.shape[nlevels:]
        vs = np.broadcast_to(v, lead + v_core).reshape((n,) + v_core)
        if all(size_of(a.shape[:nlevels]) == 1 for a in res):
            outs = self.apply([a.reshape(a.shape[nlevels:]) for a in res], tuple(vs))
        else:  # x (or c) differs along the batch: one inner call per element
            flat = [
                np.broadcast_to(a, lead + a.shape[nlevels:]).reshape((n,) + a.shape[nlevels:])
                for a in res
            ]
            outs = [self.apply([a[i] for a in flat], (vs[i],))[0] for i in range(n)]
        return np.stack(outs).reshape(lead + self.out_shape) if nlevels else outs[0]

    def apply(self, res, vs):
        call = self.call
        x, ctx = call.inner(res[0], res[1 : 1 + self.n_dyn])
        family, y_dtype = call.family, call.rules.spec[1]
        # JAX without x64 hands float32 seeds for a float64 side of f: widened (exactly) to the
        # dtype the inner was prepared with
        seed_dtype = y_dtype if self.kind == "pullback" else call.rules.x_dtype
        vs = tuple(to_family(np.asarray(v, dtype=seed_dtype), family) for v in vs)
        if self.kind == "pushforward":
            outs = call.rules.pushforward(x, vs, ctx)
        elif self.kind == "pullback":
            outs = call.rules.pullback(x, vs, ctx)
        else:
            outs = call.rules.hvp(x, to_family(np.asarray(res[-1], dtype=y_dtype), family), vs, ctx)
        return [call.out(o, self.out_dtype) for o in outs]


def linear_callback(call, kind, out_shape, out_dtype):
    cache = call.__dict__.setdefault("_linears", {})
    if kind not in cache:
        cache[kind] = LinearCallback(kind, call, out_shape, out_dtype)
    return cache[kind]
