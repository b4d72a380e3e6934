"""AutoJAX: ``jax.jvp`` and ``jax.vjp``, every operator compiled with ``jax.jit`` at preparation.

    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoJAX()
    >>> f = lambda x: (x ** 2).sum()
    >>> prep = di.prepare_gradient(f, backend, np.array([1.0, 2.0]))
    >>> di.gradient(f, backend, np.array([1.0, 2.0]), prep=prep)
    array([2., 4.])

Both primitives are native, and every operator is JAX's own recipe, jitted:

=================  ========================================  ==========================
operator           ``mode=None``                             ``mode=`` forward/reverse
=================  ========================================  ==========================
pushforward        ``jvp``; a batch is ``vmap(jvp)``          same
pullback           ``vjp``; a batch is ``vmap`` of its VJP    same
derivative         ``jvp`` with tangent 1                     reverse: ``grad`` (scalar
                                                              output) or ``jacrev``
gradient           ``grad`` / ``value_and_grad``              forward: ``jacfwd``
jacobian           ``jacfwd`` when ``x.size <= y.size``,      ``jacfwd`` / ``jacrev``
                   else ``jacrev``
hessian            ``jacfwd(grad)`` (``jax.hessian``)         forward: ``jacfwd(jacfwd)``,
                                                              reverse: ``jacrev(grad)``
hvp                ``jvp`` of ``grad``, ``vmap`` over the     forward: ``jvp`` of the
                   tangents                                   ``jacfwd`` gradient;
                                                              reverse: ``vjp`` of ``grad``
second_derivative  ``jacfwd(jvp)``                            reverse: ``jacrev(jacrev)``
=================  ========================================  ==========================

``value_and_*`` variants come from the same pass (``has_aux``): no second
evaluation. A batch of tangents is one compiled call for the whole batch.

Preparation learns the output's shape and dtype with ``jax.eval_shape`` (a
trace, no numeric work) and compiles each function for the given shapes
(``jit(...).lower(...).compile()``), so prepared calls neither trace nor
compile. ``Constant`` (and ``Cache``) values made of arrays and numbers are
traced arguments of the compiled function: a new value of the same shape and
dtype reuses the compiled code. Other context values (strings, callables...)
are static arguments: a new value recompiles. The compiled functions are
cached per function and operator, so an unprepared call repeated on the same
function and shapes compiles once.

Arrays: jax arrays in, jax arrays out on the same device, with no host round
trip; numpy arrays (and Python floats) in, numpy arrays out. The numpy results
are zero-copy views of JAX's buffers, hence read-only (copy them with
``np.array`` to write into them). float64 inputs are differentiated in float64
without touching JAX's global configuration: the call runs under a
thread-local ``jax.enable_x64`` switch, restored afterwards (when x64 is
already enabled globally at preparation, the switch is skipped). float32 inputs
run under the configuration as it is.

JAX arrays are immutable: two-argument functions ``f(y, x)`` are not supported
(``check_inplace`` is False) and ``out=`` works only with numpy buffers.

Cost of a prepared call over the native jitted recipe (``python -m benchmarks``, JAX rows):
with jax inputs the prepared function *is* the jitted function (no wrapper)
unless the x64 switch is needed; numpy inputs add one Python frame around the
``np.asarray`` the native recipe also needs, and batches of numpy tangents are
passed as flat arguments with one stacked result (numpy arrays nested in
tuples dispatch about 1.5 us slower). The thread-local x64 switch (float64
while x64 is off globally) costs about 0.5-1 us per call.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..families import dtype_name, shape_of
from ..core.boundary import check_output
from ..errors import XSignatureChangedError
from ..core import Spec, require_scalar_output
from ..core import Adapter, Impl

#: JAX's x64 switch: ``swap_local``/``set_local`` flip it for this thread only.
_X64 = jax.enable_x64
_CACHE_SIZE = 256
_LEAF_TYPES = (np.ndarray, np.generic, int, float, complex, bool, jax.Array)


# -- results back to numpy -----------------------------------------------------------------------


def _to_numpy(result):
    """``result`` (an array or nested tuples of them) as numpy arrays, sharing JAX's buffers."""
    if isinstance(result, tuple):
        return tuple(_to_numpy(r) for r in result)
    return np.asarray(result)


def _pair_to_numpy(result):
    return np.asarray(result[0]), np.asarray(result[1])


def _numpy_batch_call(fn, batch, with_first):
    """The numpy-family call of a batched operator compiled with flat arguments.

    ``fn(x, *tangents, *ctx)`` returns the products stacked along a first axis
    (the single product for a batch of one), after ``first`` (value or gradient)
    when ``with_first``: one conversion to numpy, then numpy views per tangent.
    Flat numpy arguments and one output array dispatch faster than tuples.
    """
    asarray = np.asarray
    if batch == 1:
        if with_first:

            def call(x, tangents, *ctx):
                first, product = fn(x, *tangents, *ctx)
                return asarray(first), (asarray(product),)

        else:

            def call(x, tangents, *ctx):
                return (asarray(fn(x, *tangents, *ctx)),)

    elif with_first:

        def call(x, tangents, *ctx):
            first, products = fn(x, *tangents, *ctx)
            return asarray(first), _unstacked(asarray(products))

    else:

        def call(x, tangents, *ctx):
            return _unstacked(asarray(fn(x, *tangents, *ctx)))

    return call


def _unstacked(products):
    """The products stacked along the first axis, as a tuple of arrays (0-d arrays, not NumPy scalars)."""
    if products.ndim > 1:
        return tuple(products)
    return tuple(products[i, ...] for i in range(products.shape[0]))


def _wrap(fn, convert, wide, arity=None):
    """The prepared callable: ``fn`` itself, or ``fn`` with results to numpy and/or under x64.

    ``arity`` 1 (x alone, the common call) gets a one-argument wrapper: no
    argument tuple to pack and unpack per call.
    """
    if wide:
        swap, restore = _X64.swap_local, _X64.set_local
        if convert is None:

            def call(*args):
                previous = swap(True)
                try:
                    return fn(*args)
                finally:
                    restore(previous)

        else:

            def call(*args):
                previous = swap(True)
                try:
                    return convert(fn(*args))
                finally:
                    restore(previous)

        return call
    if convert is None:
        return fn
    if arity == 1:

        def call_at(x):
            return convert(fn(x))

        return call_at

    def call(*args):
        return convert(fn(*args))

    return call


def _x_guarded(build, guard):
    """``build`` whose function raises XSignatureChangedError when traced at an x other than ``guard``'s.

    ``guard`` is the prepared x's ``(shape, dtype name)`` (None: no check). The
    check runs while JAX traces: once at preparation, then only for an x of
    another shape or dtype (which JAX would otherwise compile anew, silently),
    so a prepared call of the right x pays nothing for it.
    """
    if guard is None:
        return build
    shape, dtype = guard

    def guarded_build():
        fn = build()

        def guarded(x, *args):
            if tuple(jnp.shape(x)) != shape or str(jnp.result_type(x)) != dtype:
                raise XSignatureChangedError(
                    f"x: prepared for {dtype} {shape}; this call's x is {jnp.result_type(x)} {tuple(jnp.shape(x))} "
                    "(or JAX's configuration changed since the preparation, e.g. jax_enable_x64)"
                )
            return fn(x, *args)

        return guarded

    return guarded_build


def _x64_scope(wide):
    """x64 on for this thread when ``wide`` (preparation only: the public context manager)."""
    return jax.enable_x64(True) if wide else contextlib.nullcontext()


# -- transformations of f (x, *ctx) -> y, all traceable -----------------------------------------


def _like(t, a):
    """``t`` cast to ``a``'s dtype (inside a trace: free when it already is)."""
    return lax.convert_element_type(t, jnp.result_type(a))


def _value_and(transform, f):
    """``value_and_D(x, *ctx) -> (f(x), D f(x))`` for ``transform`` = jacfwd/jacrev/grad, one pass."""

    def both(x, *ctx):
        y = f(x, *ctx)
        return y, y

    derivative = transform(both, has_aux=True)

    def value_and(x, *ctx):
        d, value = derivative(x, *ctx)
        return value, d

    return value_and


def _jacobian_transform(mode):
    return jax.jacfwd if mode == "forward" else jax.jacrev


def _gradient_pair(f, mode):
    """(gradient, value_and_gradient) of a scalar f in ``mode``."""
    if mode == "forward":
        return jax.jacfwd(f), _value_and(jax.jacfwd, f)
    return jax.grad(f), jax.value_and_grad(f)


def _derivative_pair(f, mode, scalar_output):
    """(derivative, value_and_derivative) at a scalar x."""
    if mode == "forward":

        def value_and_derivative(x, *ctx):
            return jax.jvp(lambda x: f(x, *ctx), (x,), (jnp.ones_like(x),))

        def derivative(x, *ctx):
            return value_and_derivative(x, *ctx)[1]

        return derivative, value_and_derivative
    if scalar_output:
        return jax.grad(f), jax.value_and_grad(f)
    return jax.jacrev(f), _value_and(jax.jacrev, f)


def _forward_products(g, x, tangents):
    """``(g(x), J @ t for each t)``: one ``jvp``, or ``vmap(jvp)`` stacked for a batch."""
    if len(tangents) == 1:
        return jax.jvp(g, (x,), (_like(tangents[0], x),))
    stacked = jnp.stack([_like(t, x) for t in tangents])
    return jax.vmap(lambda t: jax.jvp(g, (x,), (t,)), out_axes=(None, 0))(stacked)


def _reverse_products(g, x, cotangents):
    """``(g(x), c @ J for each c)``: one ``vjp``, its pullback vmapped over a batch."""
    y, vjp = jax.vjp(g, x)
    if len(cotangents) == 1:
        return y, vjp(_like(cotangents[0], y))[0]
    return y, jax.vmap(vjp)(jnp.stack([_like(c, y) for c in cotangents]))[0]


def _batched(f, products, batch, with_first, flat):
    """A batched operator: ``products`` (forward or reverse) of ``f(x, *ctx)`` over the tangents.

    With ``flat`` (numpy family): ``fn(x, *tangents, *ctx)`` returns the stacked
    products (the single product for a batch of one). Otherwise (jax family):
    ``fn(x, tangents, *ctx)`` returns them as a tuple. ``with_first`` puts
    ``f(x)`` (the value, or the gradient for hvp) before them.
    """
    fn: Callable[..., Any]
    if flat:

        def fn(x, *args):
            ctx = args[batch:]
            first, stacked = products(lambda x: f(x, *ctx), x, args[:batch])
            return (first, stacked) if with_first else stacked

    else:

        def fn(x, tangents, *ctx):
            first, stacked = products(lambda x: f(x, *ctx), x, tangents)
            split = (stacked,) if batch == 1 else tuple(stacked[i] for i in range(batch))
            return (first, split) if with_first else split

    return fn


def _second_order(value_and_first, outer_mode):
    """``(x, *ctx) -> (f(x), first, second)``: the ``outer_mode`` Jacobian of ``value_and_first``."""
    outer = _jacobian_transform(outer_mode)

    def value_first_and_second(x, *ctx):
        def first_with_aux(x):
            value, first = value_and_first(x, *ctx)
            return first, (value, first)

        second, (value, first) = outer(first_with_aux, has_aux=True)(x)
        return value, first, second

    return value_first_and_second


# -- the adapter -----------------------------------------------------------------------------------


def _scalar_like(value):
    """A Python number, a NumPy scalar or a 0-d numpy array: one kind of Constant (see below)."""
    cls = value.__class__
    if cls is float or cls is int:
        return True
    return isinstance(value, np.generic) or (cls is np.ndarray and value.ndim == 0)


def _canonical_scalar(value):
    """One traced form per dtype, so that a float, then an ``np.float64``, then a 0-d array compile once.

    float64 and int64 values become Python numbers (weakly typed for JAX, as a
    Python float in ``f`` would be); other dtypes 0-d arrays of that dtype.
    """
    cls = value.__class__
    if cls is float or cls is int:
        return value
    dtype = value.dtype
    if dtype == np.float64:
        return float(value)
    if dtype == np.int64:
        return int(value)
    return np.asarray(value)


def _canonical_scalars(fn, offset, positions, mixed=()):
    """``fn`` with the scalar-like contexts at ``positions`` (after ``offset`` arguments) made canonical,
    and the contexts at ``mixed`` wrapped as :class:`_Mixed`."""
    if not positions and not mixed:
        return fn
    positions = tuple(offset + i for i in positions)
    mixed = tuple(offset + i for i in mixed)

    def call(*args):
        args = list(args)
        for i in positions:
            args[i] = _canonical_scalar(args[i])
        for i in mixed:
            args[i] = _Mixed(args[i])
        return fn(*args)

    return call


def _traceable(value):
    """True when ``value`` is a pytree of arrays and numbers (a traced argument of jit)."""
    return all(isinstance(leaf, _LEAF_TYPES) for leaf in jax.tree_util.tree_leaves(value))


#: jax.errors raised when f converts the tracer it is differentiated at
_TRACED_ARRAY_ERRORS = frozenset((
    "TracerArrayConversionError", "ConcretizationTypeError", "TracerBoolConversionError",
    "TracerIntegerConversionError",
))


def _output_checked(f):
    """``f`` raising a TypeError naming it when it returns no array (jax.jvp accepts lists and None);
    under jit this runs only while tracing."""

    def checked(*args):
        return check_output(f, f(*args))

    return checked


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


class _Mixed:
    """A context value mixing arrays and other leaves (``{"mode": "sum", "scale": 2.0}``), for jit.

    Its arrays and numbers are traced; its other leaves (strings...) and its
    structure are the static part of the tree, so a new scale reuses the compiled
    code and a new mode recompiles. ``f`` receives the value itself, rebuilt.
    """

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _flatten_mixed(mixed):
    leaves, treedef = jax.tree_util.tree_flatten(mixed.value)
    traced = tuple(i for i, leaf in enumerate(leaves) if isinstance(leaf, _LEAF_TYPES))
    static = tuple((i, leaf) for i, leaf in enumerate(leaves) if not isinstance(leaf, _LEAF_TYPES))
    return [leaves[i] for i in traced], (treedef, traced, static)


def _unflatten_mixed(aux, children):
    treedef, traced, static = aux
    leaves = [None] * treedef.num_leaves
    for i, child in zip(traced, children):
        leaves[i] = child
    for i, leaf in static:
        leaves[i] = leaf
    return jax.tree_util.tree_unflatten(treedef, leaves)


jax.tree_util.register_pytree_node(_Mixed, _flatten_mixed, _unflatten_mixed)


def _mixed_positions(ctx):
    """Contexts that are neither traceable nor hashable: passed as :class:`_Mixed` trees."""
    return tuple(i for i, value in enumerate(ctx) if not _traceable(value) and not _hashable(value))


def _tree_to_numpy(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


def _pair_tree_to_numpy(pair):
    return np.asarray(pair[0]), _tree_to_numpy(pair[1])


class JAXAdapter(Adapter):
    mode = "both"
    inplace = False
    families = ("numpy", "jax")
    framework = "jax"
    traced_array_name = "JAX tracer"
    numpy_results_are_arrays = True  # every numpy result comes from np.asarray

    def is_traced_array_error(self, error):
        # numpy, float(), bool() or .item() on a tracer
        return type(error).__module__.startswith("jax") and type(error).__name__ in _TRACED_ARRAY_ERRORS

    # jax.grad takes pytrees as they are: no ravel per call.
    pytrees = frozenset({"gradient"})

    def takes_tree(self, operator, tree):
        # Node types registered with optree only are unknown to JAX: those trees go flat.
        if operator not in self.pytrees or self.backend.mode == "forward":
            return False  # jacfwd's gradients take the output's dtype: the flat path casts them back
        positions = list(range(len(tree.shapes)))
        return jax.tree_util.tree_leaves(tree.unflatten(positions)) == positions

    def __init__(self, backend):
        super().__init__(backend)
        self.jit = backend.jit
        # (variant, f, ...) -> jitted function; jax.jit caches the compilations per shape.
        self._compiled = OrderedDict()

    # -- preparation helpers --------------------------------------------------------------------

    @staticmethod
    def _wide(problem):
        """True when the call must run with x64 on: a float64 x while x64 is off globally."""
        return problem.x_dtype == "float64" and not _X64.get_global()

    @staticmethod
    def _static(problem, offset):
        """Positions (in the compiled function's arguments) of contexts passed as static values."""
        return tuple(offset + i for i, value in enumerate(problem.ctx) if not _traceable(value) and _hashable(value))

    def _jitted(self, key, build, static):
        """``jax.jit(build())``, cached under ``key``; ``build()`` itself without jit."""
        if not self.jit:
            return build()
        key = (*key, static)
        try:
            jitted = self._compiled.get(key)
        except TypeError:  # an unhashable f: no cache
            return jax.jit(build(), static_argnums=static)
        if jitted is None:
            jitted = jax.jit(build(), static_argnums=static)
            self._compiled[key] = jitted
            if len(self._compiled) > _CACHE_SIZE:
                self._compiled.popitem(last=False)
        else:
            self._compiled.move_to_end(key)
        return jitted

    def _impl(self, problem, variant, builders, converters=None, batched=False):
        """An Impl of jitted ``builders`` (name -> build()), compiled now for the problem's arguments.

        ``converters`` maps each name to the numpy conversion of its result.
        ``batched`` operators (with tangents) have ``build(flat)``: in the numpy
        family they are compiled with flat arguments, ``fn(x, *tangents, *ctx)``,
        and stacked results (see :func:`_numpy_batch_call`).
        """
        wide = self._wide(problem)
        x, tangents = problem.x, problem.tangents
        scalars = tuple(i for i, value in enumerate(problem.ctx) if _scalar_like(value))
        mixed = _mixed_positions(problem.ctx)
        ctx = tuple(_canonical_scalar(v) if i in scalars else _Mixed(v) if i in mixed else v
                    for i, v in enumerate(problem.ctx))
        flat = batched and problem.family == "numpy"
        if not batched:
            args = (x, *ctx)
        elif flat:
            args = (x, *tangents, *ctx)
        else:
            args = (x, tangents, *ctx)
        static = self._static(problem, len(args) - len(ctx))
        # an array x's shape and dtype are checked when JAX traces the function, not per call (Impl.checks_x);
        # a compiled function is then specific to them, and shared by preparations that agree on them.
        # Not with x64 off (and no x64 switch): JAX would trace a float64 x as float32, unseen.
        traced_dtype_is_x_dtype = wide or _X64.get_global()
        guard = (None if problem.tree is not None or not problem.strict or not traced_dtype_is_x_dtype
                 else (shape_of(x), dtype_name(x)))
        methods = {}
        with _x64_scope(wide):
            for name, build in builders.items():
                fn = self._jitted(
                    (variant, name, flat, problem.f, guard),
                    _x_guarded((lambda build=build: build(flat)) if batched else build, guard), static,
                )
                if self.jit:
                    fn.lower(*args).compile()
                if flat:
                    with_first = name.startswith(("value_and_", "gradient_and_"))
                    fn, convert = _numpy_batch_call(fn, len(tangents), with_first), None
                else:
                    convert = converters[name] if problem.family == "numpy" else None
                wrapped = _wrap(fn, convert, wide, len(args))
                methods[name] = _canonical_scalars(wrapped, 2 if batched else 1, scalars, mixed)
        return Impl(checks_x=guard is not None, **methods)

    def output_spec(self, problem):
        static = self._static(problem, 1)
        mixed = _mixed_positions(problem.ctx)
        ctx = tuple(_Mixed(v) if i in mixed else v for i, v in enumerate(problem.ctx))
        with _x64_scope(self._wide(problem)):
            out = jax.jit(problem.f, static_argnums=static).eval_shape(problem.x, *ctx)
        if not hasattr(out, "shape") or not hasattr(out, "dtype"):
            raise TypeError(f"f: expected f to return an array or a number; it returned {type(out).__name__}")
        return Spec(out.shape, str(out.dtype))

    def prepare_evaluation(self, problem):
        f = _output_checked(problem.f)
        return self._impl(problem, ("evaluation",), {"value": lambda: f}, {"value": np.asarray}).value

    # -- primitives -------------------------------------------------------------------------------

    def prepare_pushforward(self, problem):
        f, k = problem.f, len(problem.tangents)
        return self._impl(
            problem,
            ("pushforward", k),
            {
                "pushforward": lambda flat: _batched(_output_checked(f), _forward_products, k, False, flat),
                "value_and_pushforward": lambda flat: _batched(_output_checked(f), _forward_products, k, True, flat),
            },
            batched=True,
        )

    def prepare_pullback(self, problem):
        f, k = problem.f, len(problem.tangents)
        return self._impl(
            problem,
            ("pullback", k),
            {
                "pullback": lambda flat: _batched(f, _reverse_products, k, False, flat),
                "value_and_pullback": lambda flat: _batched(f, _reverse_products, k, True, flat),
            },
            batched=True,
        )

    # -- first-order overrides ------------------------------------------------------------------

    def prepare_derivative(self, problem):
        mode = problem.mode("derivative")
        scalar_output = mode == "reverse" and problem.spec.shape == ()
        pair = lambda: _derivative_pair(problem.f, mode, scalar_output)  # noqa: E731
        return self._impl(
            problem,
            ("derivative", mode, scalar_output),
            {"derivative": lambda: pair()[0], "value_and_derivative": lambda: pair()[1]},
            {"derivative": np.asarray, "value_and_derivative": _pair_to_numpy},
        )

    def prepare_gradient(self, problem):
        require_scalar_output(problem, "gradient")
        mode = problem.mode("gradient")
        pair = lambda: _gradient_pair(problem.f, mode)  # noqa: E731
        return self._impl(
            problem,
            ("gradient", mode),
            {"gradient": lambda: pair()[0], "value_and_gradient": lambda: pair()[1]},
            {"gradient": np.asarray, "value_and_gradient": _pair_to_numpy} if problem.tree is None
            else {"gradient": _tree_to_numpy, "value_and_gradient": _pair_tree_to_numpy},
        )

    def prepare_jacobian(self, problem):
        mode = problem.mode("jacobian")
        transform, f = _jacobian_transform(mode), problem.f
        return self._impl(
            problem,
            ("jacobian", mode),
            {"jacobian": lambda: transform(f), "value_and_jacobian": lambda: _value_and(transform, f)},
            {"jacobian": np.asarray, "value_and_jacobian": _pair_to_numpy},
        )

    # -- second-order overrides ---------------------------------------------------------------------

    def _outer_mode(self):
        return "reverse" if self.backend.mode == "reverse" else "forward"

    def _inner_mode(self):
        return "forward" if self.backend.mode == "forward" else "reverse"

    def prepare_second_derivative(self, problem):
        mode = self.backend.mode or "forward"  # inner and outer alike
        scalar_output = mode == "reverse" and problem.spec.shape == ()

        def full():
            return _second_order(_derivative_pair(problem.f, mode, scalar_output)[1], mode)

        def second_only():
            value_first_and_second = full()
            return lambda x, *ctx: value_first_and_second(x, *ctx)[2]

        return self._impl(
            problem,
            ("second_derivative", mode, scalar_output),
            {"second_derivative": second_only, "value_derivative_and_second_derivative": full},
            {"second_derivative": np.asarray, "value_derivative_and_second_derivative": _to_numpy},
        )

    def prepare_hessian(self, problem):
        require_scalar_output(problem, "hessian")
        inner, outer, f = self._inner_mode(), self._outer_mode(), problem.f

        def hessian():
            return _jacobian_transform(outer)(_gradient_pair(f, inner)[0])

        return self._impl(
            problem,
            ("hessian", inner, outer),
            {
                "hessian": hessian,
                "value_gradient_and_hessian": lambda: _second_order(_gradient_pair(f, inner)[1], outer),
            },
            {"hessian": np.asarray, "value_gradient_and_hessian": _to_numpy},
        )

    def prepare_hvp(self, problem):
        require_scalar_output(problem, "hvp")
        inner, outer, f, k = self._inner_mode(), self._outer_mode(), problem.f, len(problem.tangents)
        # H @ t: forward over the gradient, or its VJP (H is symmetric: t @ H = H @ t).
        products = _reverse_products if outer == "reverse" else _forward_products
        gradient = lambda: _gradient_pair(f, inner)[0]  # noqa: E731
        return self._impl(
            problem,
            ("hvp", inner, outer, k),
            {
                "hvp": lambda flat: _batched(gradient(), products, k, False, flat),
                "gradient_and_hvp": lambda flat: _batched(gradient(), products, k, True, flat),
            },
            batched=True,
        )

    # -- hooks for SecondOrder(AutoJAX(...), AutoJAX(...)) -------------------------------------------

    def differentiable_value_and_gradient(self, problem):
        return _gradient_pair(problem.f, problem.mode("gradient"))[1]

    def prepare_batched_gradient(self, problem, batch):
        # The gradients at all the outer's points in one compiled call: vmap over the stacked points.
        gradient, xp = _gradient_pair(problem.f, problem.mode("gradient"))[0], problem.xp

        def build():
            def gradients(points, *ctx):
                return jax.vmap(lambda point: gradient(point, *ctx))(points)

            return gradients

        stacked = problem.replace(x=xp.stack([problem.x] * batch))
        return self._impl(
            stacked, ("batched_gradient", problem.mode("gradient"), batch), {"gradients": build},
            {"gradients": np.asarray},
        ).gradients

    def differentiable_value_and_derivative(self, problem):
        mode = problem.mode("derivative")
        return _derivative_pair(problem.f, mode, mode == "reverse" and problem.spec.shape == ())[1]
