"""JAX's DifferentiateWith rules: a bridged function inside JAX is a custom JVP whose pieces are host
callbacks to the inner backend; arrays cross into JAX by DLPack or ``jnp.asarray`` (:class:`JAXBridge`,
registered with ``AutoJAX`` in ``diffinterface/backends/__init__.py``).

JAX needs one construction that serves forward mode, reverse mode (it
transposes the linear part of a JVP), ``jit`` and ``vmap`` at once:

- the value (and, for a scalar ``f`` with a reverse-mode inner, value and
  gradient together, under ``jit`` too) is the primitive ``_host_p``: one host
  callback, batched as ``pure_callback(vmap_method="expand_dims")`` is,
  inside ``jax.custom_jvp``;
- the tangent is linear in the input tangent. For a scalar ``f`` on the
  gradient route it is ``vdot(gradient, t)``, plain JAX, so ``grad`` costs one
  callback that returns value and gradient. Otherwise it is the primitive
  ``_linear_p`` below: a host callback that JAX can also transpose (the
  pushforward's transpose is the pullback and back), batch (a vmapped tangent
  batch becomes one call of the inner's batched operator) and differentiate
  once more with respect to x (the inner's ``hvp``): ``jax.custom_derivatives.linear_call``
  does the first but has no batching rule.

Both primitives emit their callback directly in a program on one device
(:func:`_host_lowering`), without ``jax.pure_callback``'s conversions.

The inner operators are prepared at a point the user passed, never at an
invented one: the concrete value behind the tracer (``jax.grad``, ``jvp``,
``vjp`` and unprepared AutoJAX calls are eager, their tracers carry it). A
jit trace has no values: there the output's shape comes from
``jax.eval_shape`` of ``f`` (when JAX can trace it) and the operators are
prepared at the first point a callback receives; when JAX cannot trace ``f``
either, :class:`~.bridge_points.ValuesNeededError` says so, and AutoJAX's preparation, which
has the user's x, evaluates its f once eagerly at x and traces again.

The host side, numpy in and numpy out, is ``host_callbacks.py``. Batching
convention (the one of ``pure_callback(vmap_method="expand_dims")``): every
operand of ``_linear_p`` carries ``nlevels`` leading axes, one per enclosing
``vmap``, of size 1 where that operand is not batched.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from ...families import dtype_name, family_of, size_of
from ...core.bridge import FrameworkBridge, third_order
from .bridge_points import _rules
from .host_callbacks import BridgedCall, expected_dtype, linear_callback

# -- the primitive ----------------------------------------------------------------------------

_linear_p = Primitive("differentiate_with_linear")


def _out_aval(args, rule, nlevels):
    # np.shape: run eagerly (AutoJAX(jit=False)), an operand may be a Python scalar JAX wraps,
    # without .shape
    lead = np.broadcast_shapes(*(tuple(np.shape(a)[:nlevels]) for a in args))
    return jax.core.ShapedArray(lead + rule.out_shape, rule.out_dtype)


def _impl(*args, rule, nlevels):
    aval = _out_aval(args, rule, nlevels)
    return _eager_callback(
        lambda *a: rule.host(*a, nlevels=nlevels),
        jax.ShapeDtypeStruct(aval.shape, aval.dtype),
        *args,
    )


def _eager_callback(host, structs, *args):
    """``jax.pure_callback(host, structs, *args)`` run eagerly, the host's own exception raised as it is.

    JAX reports an exception raised in a callback as a ``JaxRuntimeError``
    whose message holds the original traceback as text; eagerly (``jax.grad``,
    ``jax.jvp`` without jit) the original exception (a ``LinearSolveError``, a
    ``ValueError`` naming an argument) is re-raised instead. Under ``jax.jit``
    the callback runs inside the compiled program, where only JAX's error
    reaches the caller.
    """
    raised: list = []

    def recording(*a):
        try:
            return host(*a)
        except Exception as error:
            raised.append(error)
            raise

    try:
        return jax.pure_callback(recording, structs, *args)
    except jax.errors.JaxRuntimeError:
        if raised:
            raise raised[0] from None
        raise


def _host_lowering(host_of, impl, multiple_results):
    """The lowering of a primitive computed by ``host_of(**params)`` (numpy operands in, a tuple of numpy
    results out) in one host callback.

    On one device the callback is emitted directly: XLA hands it numpy views of the operands.
    ``jax.pure_callback``'s own lowering (``impl``'s) first puts the operands on a device as JAX arrays
    under a default-device context and converts every result, which costs more than a small inner
    computation. Sharded programs keep ``pure_callback``'s lowering, which annotates the callback's sharding.
    """
    fallback = mlir.lower_fun(impl, multiple_results=multiple_results)

    def lower(ctx, *args, **params):
        if getattr(ctx.module_context.axis_context, "num_devices", None) != 1:
            return fallback(ctx, *args, **params)
        results, _, _ = mlir.emit_python_callback(
            ctx,
            host_of(**params),
            None,
            list(args),
            ctx.avals_in,
            ctx.avals_out,
            has_side_effect=False,
            returns_token=False,
        )
        return results

    return lower


def _linear_host(rule, nlevels):
    return lambda *args: (rule.host(*args, nlevels=nlevels),)


_linear_p.def_impl(_impl)
_linear_p.def_abstract_eval(lambda *avals, rule, nlevels: _out_aval(avals, rule, nlevels))
mlir.register_lowering(_linear_p, _host_lowering(_linear_host, _impl, multiple_results=False))


def _leading(args, dims):
    """The operands with their vmapped axis first; an operand vmap does not batch gets a leading axis of size 1."""
    return [
        jnp.expand_dims(a, 0) if d is None else jnp.moveaxis(a, d, 0) for a, d in zip(args, dims)
    ]


def _batch(args, dims, *, rule, nlevels):
    return _linear_p.bind(*_leading(args, dims), rule=rule, nlevels=nlevels + 1), 0


batching.primitive_batchers[_linear_p] = _batch


def _is_zero(t):
    return type(t) is ad.Zero


def _jvp(primals, tangents, *, rule, nlevels):
    out = _linear_p.bind(*primals, rule=rule, nlevels=nlevels)
    terms = []
    if not _is_zero(tangents[-1]):
        terms.append(_linear_p.bind(*primals[:-1], tangents[-1], rule=rule, nlevels=nlevels))
    x_dot = tangents[0]
    if not _is_zero(x_dot):
        terms.append(_along_x(rule, primals, x_dot, nlevels))
    if rule.kind == "hvp" and not _is_zero(tangents[-2]):
        raise third_order("differentiating a second derivative with respect to the cotangent")
    # tangents of traced contexts are dropped: contexts are constants by definition
    if not terms:
        return out, ad.Zero.from_primal_value(out)
    return out, sum(terms[1:], terms[0])


def _along_x(rule, primals, x_dot, nlevels):
    """The derivative of the linear map's result with respect to x, along ``x_dot``."""
    call = rule.call
    x, dyn, v = primals[0], primals[1 : 1 + rule.n_dyn], primals[-1]
    hvp = linear_callback(call, "hvp", call.rules.x_shape, rule.call_x_dtype())
    if rule.kind == "pullback":  # d/dx (c @ J) = sum_k c_k H_k
        return _linear_p.bind(x, *dyn, v, x_dot, rule=hvp, nlevels=nlevels)
    if rule.kind == "pushforward":
        # d/dx (J t) along x_dot: output k is (H_k x_dot) . t, one hvp per output (y.size of them)
        y_shape = call.rules.spec[0]
        m = size_of(y_shape)
        eye = np.eye(m, dtype=call.y_dtype).reshape((m,) + (1,) * nlevels + y_shape)
        core = tuple(range(nlevels, nlevels + len(call.rules.x_shape)))
        rows = [
            jnp.sum(
                _linear_p.bind(x, *dyn, jnp.asarray(eye[k]), x_dot, rule=hvp, nlevels=nlevels) * v,
                axis=core,
            )
            for k in range(m)
        ]
        lead = rows[0].shape
        return jnp.stack(rows, axis=-1).reshape(lead + y_shape).astype(call.y_dtype)
    raise third_order("differentiating a second derivative with respect to x")


ad.primitive_jvps[_linear_p] = _jvp


def _transpose(ct, *args, rule, nlevels):
    v = args[-1]
    assert ad.is_undefined_primal(v) and not any(ad.is_undefined_primal(a) for a in args[:-1])
    if _is_zero(ct):
        return [None] * (len(args) - 1) + [ad.Zero(v.aval)]
    out = _linear_p.bind(*args[:-1], ct, rule=rule.transposed(), nlevels=nlevels)
    # where v was not batched but the result is, the transpose sums over that axis
    axes = tuple(i for i in range(nlevels) if v.aval.shape[i] == 1 and out.shape[i] != 1)
    if axes:
        out = jnp.sum(out, axis=axes, keepdims=True)
    return [None] * (len(args) - 1) + [out.astype(v.aval.dtype)]


ad.primitive_transposes[_linear_p] = _transpose


# -- the value (and gradient) callback --------------------------------------------------------
# ``host(*operands)`` returns a tuple of numpy arrays shaped ``outs`` (core shapes and dtypes)
# behind the
# operands' ``nlevels`` leading axes: the convention of
# ``pure_callback(vmap_method="expand_dims")``, which
# ``host_callbacks.BridgedCall`` serves on the host side.

_host_p = Primitive("differentiate_with_host")
_host_p.multiple_results = True


def _host_avals(avals, outs, nlevels):
    lead = np.broadcast_shapes(*(tuple(np.shape(a)[:nlevels]) for a in avals))
    return [jax.core.ShapedArray(lead + shape, dtype) for shape, dtype in outs]


def _host_impl(*args, host, outs, nlevels):
    structs = tuple(
        jax.ShapeDtypeStruct(a.shape, a.dtype) for a in _host_avals(args, outs, nlevels)
    )
    return _eager_callback(host, structs, *args)


def _host_batch(args, dims, *, host, outs, nlevels):
    return _host_p.bind(*_leading(args, dims), host=host, outs=outs, nlevels=nlevels + 1), (
        0,
    ) * len(outs)


_host_p.def_impl(_host_impl)
_host_p.def_abstract_eval(lambda *avals, host, outs, nlevels: _host_avals(avals, outs, nlevels))
mlir.register_lowering(
    _host_p, _host_lowering(lambda host, outs, nlevels: host, _host_impl, multiple_results=True)
)
batching.primitive_batchers[_host_p] = _host_batch


# -- the traced function ----------------------------------------------------------------------


def _build(call):
    """``fn(x, *dyn)``: the bridged function as JAX sees it."""
    rules = call.rules
    x_struct_dtype = expected_dtype(rules.x_dtype)

    y_out = (tuple(call.y_struct.shape), call.y_struct.dtype)

    def value(x, *dyn):
        return _host_p.bind(x, *dyn, host=call.value, outs=(y_out,), nlevels=0)[0]

    fn = jax.custom_jvp(value)

    if rules.gradient_route:
        outs = (y_out, (tuple(rules.x_shape), x_struct_dtype))
        value_and_gradient = jax.custom_jvp(
            lambda x, *dyn: tuple(
                _host_p.bind(x, *dyn, host=call.value_and_gradient, outs=outs, nlevels=0)
            )
        )

        @value_and_gradient.defjvp
        def _(primals, tangents):
            x, *dyn = primals
            y, g = value_and_gradient(x, *dyn)
            hvp = linear_callback(call, "hvp", rules.x_shape, x_struct_dtype)
            one = jnp.ones((), call.y_dtype)
            return (y, g), (
                jnp.sum(g * tangents[0]).astype(call.y_dtype),
                _linear_p.bind(x, *dyn, one, tangents[0], rule=hvp, nlevels=0),
            )

        @fn.defjvp
        def _(primals, tangents):
            y, g = value_and_gradient(*primals)
            return y, jnp.sum(g * tangents[0]).astype(call.y_dtype)
    else:
        pushforward = linear_callback(call, "pushforward", rules.spec[0], call.y_dtype)

        @fn.defjvp
        def _(primals, tangents):
            return fn(*primals), _linear_p.bind(*primals, tangents[0], rule=pushforward, nlevels=0)

    return fn


def call(bridge, x, contexts):
    """``bridge(x, *contexts)`` for a JAX array or tracer ``x``."""
    dynamic = tuple(i for i, c in enumerate(contexts) if family_of(c.value) == "jax")
    rules = _rules(bridge, x, contexts)
    # the output dtype JAX is told depends on x64, which may differ between calls (jax.enable_x64)
    key = (id(rules), dynamic, expected_dtype(np.float64))
    cached = bridge.__dict__.setdefault("_jax_functions", {})
    entry = cached.get(key) if not contexts else None
    if entry is None:
        entry = _build(BridgedCall(bridge, rules, contexts, dynamic))
        if not contexts:  # contexts' static values live in the closure: rebuild per call then
            cached[key] = entry
    return entry(x, *(contexts[i].value for i in dynamic))


class JAXBridge(FrameworkBridge):
    """JAX as either side of a bridge: its arrays and tracers call :func:`call`; an AutoJAX inner computes on
    JAX arrays, float64 ones under a thread-local ``jax.enable_x64`` (JAX has float64 only under x64)."""

    inner_family = "jax"

    def call(self, bridge, x, contexts):
        return call(bridge, x, contexts)

    def receive(self, a, source):
        # float64 survives only under x64; the switch is thread-local and undone on exit.
        with jax.enable_x64(dtype_name(a) in ("float64", "complex128")):
            if source == "torch":
                # JAX takes compact strides only: an expanded cotangent (from y.sum()), a slice or a
                # view is copied first
                return jax.dlpack.from_dlpack(a if a.is_contiguous() else a.contiguous())
            return jnp.asarray(a)

    def wide(self, dtype):
        return jax.enable_x64(True) if dtype in ("float64", "complex128") else super().wide(dtype)

    def krylov(self, method, function, y_shape, rtol, atol, maxiter):
        from .krylov import METHODS, KrylovSolve

        if method not in METHODS:
            return None
        return KrylovSolve(method, function, y_shape, rtol, atol, maxiter)


BRIDGE = JAXBridge()
