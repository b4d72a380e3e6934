"""The JAX adapter: each operator is JAX's own recipe (``transforms.py``), compiled at preparation and
called through the thinnest wrapper that converts its results (``calls.py``); see the package docstring."""

from __future__ import annotations

import weakref
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from ...families import dtype_name, is_array, shape_of
from ...core import Adapter, Capabilities, Impl, Spec, require_scalar_output
from .calls import (
    _X64,
    _Mixed,
    _canonical_scalar,
    _canonical_scalars,
    _hashable,
    _mixed_positions,
    _numpy_batch_call,
    _output_checked,
    _owned,
    _pair_to_numpy,
    _pair_tree_to_numpy,
    _scalar_like,
    _traceable,
    _tree_to_numpy,
    _wrap,
    _x64_scope,
)
from ...core.batching import record
from .batching import sweep_batch
from .aux import native_aux, traced_function
from .refusals import (
    JAX_ARRAY_NAMED,
    TRACED_ARRAY_ERRORS,
    cache_checked,
    check_no_value_taken_out,
    not_an_array,
    traced,
    traced_at_values,
)
from .second_order import JAXSecondOrder
from .transforms import (
    _batched,
    _derivative_pair,
    _forward_products,
    _gradient_pair,
    _jacobian_transform,
    _reverse_products,
    _value_and,
)


class _Fusable(NamedTuple):
    """What :meth:`JAXAdapter.fused_method` needs of a prepared Impl: the functions it compiled by name (those
    called as ``fn(x, *ctx)``, without aux), and how :meth:`JAXAdapter._impl` called and wrapped them."""

    functions: dict
    converters: Optional[dict]
    family: str
    static: tuple
    wide: bool
    args: tuple
    scalars: tuple
    mixed: tuple
    #: the functions are ``jax.grad`` and ``jax.value_and_grad`` of the problem's f (an array x)
    reverse_gradient: bool = False


#: the Impls this adapter compiled, for :meth:`JAXAdapter.fused_method`
_FUSABLE: "weakref.WeakKeyDictionary[Impl, _Fusable]" = weakref.WeakKeyDictionary()


class JAXAdapter(JAXSecondOrder, Adapter):
    capabilities = Capabilities(
        mode="both",
        # jit(jacrev) runs a square Jacobian as fast or faster than jit(jacfwd) on CPU; eagerly,
        # jacfwd is the faster (AutoJAX(jit=False), set in __init__)
        square_jacobian_mode="reverse",
        families=("numpy", "jax"),
        framework="jax",
        traced_array_name="JAX tracer",
        numpy_results_are_arrays=True,  # every numpy result comes from np.array
        # sweeps run in batches of the selector's batch_size inside one compiled function
        # (batching.py)
        bounds_sweeps=True,
        # jax.grad takes pytrees as they are: no ravel per call
        pytrees=frozenset({"gradient"}),
        # SecondOrder(AutoJAX(...), AutoJAX(...)): gradients at a stack of points in one call
        batches_gradients=True,
    )

    def prepare_same_point(self, operator, problem):
        from .same_point import prepare_same_point

        return prepare_same_point(self, operator, problem)

    def primal_value(self, value):
        if isinstance(
            value, jax.core.Tracer
        ):  # no values to compare or return: not an evaluation at x's values
            raise TypeError("a JAX tracer has no concrete value")
        return value

    def is_traced_array_error(self, error):
        if type(error).__module__.startswith(
            "jax"
        ):  # numpy, float(), bool() or .item() on a tracer
            return type(error).__name__ in TRACED_ARRAY_ERRORS
        # another framework's function called on x (torch.sin(x))
        return (
            isinstance(error, (TypeError, AttributeError))
            and JAX_ARRAY_NAMED.search(str(error)) is not None
        )

    def takes_tree(self, operator, tree):
        # Node types registered with optree only are unknown to JAX: those trees go flat.
        if operator not in self.capabilities.pytrees or self.backend.mode == "forward":
            return (
                False  # jacfwd's gradients take the output's dtype: the flat path casts them back
            )
        positions = list(range(len(tree.shapes)))
        return jax.tree_util.tree_leaves(tree.unflatten(positions)) == positions

    def __init__(self, backend):
        super().__init__(backend)
        self.jit = backend.jit
        # a preparation compiles f from a trace without values (jit): a branch on x's values is
        # refused there, naming AutoJAX(jit=False) (the kit's probe ``branch_on_values`` reads this)
        self.capabilities = type(self).capabilities.replace(
            traces_without_values=backend.jit,
            square_jacobian_mode="reverse" if backend.jit else "forward",
        )

    # -- preparation helpers --------------------------------------------------------------------

    @staticmethod
    def _wide(problem):
        """True when the call must run with x64 on: a float64 x while x64 is off globally."""
        return problem.x_dtype == "float64" and not _X64.get_global()

    @staticmethod
    def _static(problem, offset):
        """Positions (in the compiled function's arguments) of contexts passed as static values."""
        return tuple(
            offset + i
            for i, value in enumerate(problem.ctx)
            if not _traceable(value) and _hashable(value)
        )

    def _compiles(self, problem):
        """True when ``problem``'s functions are compiled: with jit, for an explicit preparation.

        An unprepared call runs eagerly, as ``jax.grad`` does: compiling it would
        cost more than the call, and code compiled for an earlier call would not
        see f's globals, closed-over arrays or attributes as they are now.
        """
        return self.jit and not problem.one_off

    def _impl(self, problem, variant, builders, converters=None, batched=False):
        """An Impl of ``builders`` (name -> build()), jitted and compiled now for the problem's arguments.

        Each preparation traces and compiles its own functions: none is shared
        with another preparation, whose f may have read other globals.
        ``converters`` maps each name to the numpy conversion of its result.
        ``batched`` operators (with tangents) have ``build(flat)``: in the numpy
        family they are compiled with flat arguments, ``fn(x, *tangents, *ctx)``,
        and stacked results (see :func:`_numpy_batch_call`). ``variant`` names
        the recipe (for reading; nothing is cached under it).
        """
        wide, compiles = self._wide(problem), self._compiles(problem)
        x, tangents = problem.x, problem.tangents
        scalars = (
            tuple(i for i, value in enumerate(problem.ctx) if _scalar_like(value))
            if compiles
            else ()
        )
        mixed = _mixed_positions(problem.ctx) if compiles else ()
        ctx = tuple(
            _canonical_scalar(v) if i in scalars else _Mixed(v) if i in mixed else v
            for i, v in enumerate(problem.ctx)
        )
        flat = batched and problem.family == "numpy"
        if not batched:
            args = (x, *ctx)
        elif flat:
            args = (x, *tangents, *ctx)
        else:
            args = (x, tangents, *ctx)
        static = self._static(problem, len(args) - len(ctx))
        methods, compiled = {}, {}
        aux = native_aux(
            problem, builders
        )  # has_aux: the builders' functions return (results, aux)
        with _x64_scope(wide):
            for position, (name, build) in enumerate(builders.items()):
                built = build(flat) if batched else build()
                if compiles:
                    fn = jax.jit(built, static_argnums=static)

                    # The operator's own method (the first) is compiled now. The others
                    # (value_and_...) are traced and lowered now, so f's errors surface at
                    # preparation, and JAX compiles them at their first call from that lowering: a
                    # preparation compiles only what a caller uses.
                    def lowered(fn=fn, compile_now=position == 0):
                        lowering = fn.lower(*args)
                        return lowering.compile() if compile_now else lowering

                    with traced(problem, self.backend):
                        traced_at_values(problem, lowered)
                    if aux is None and not batched:
                        # the function as traced, not its jit: inside another jit, a mixed context
                        # arrives rebuilt (a dict holding strings), which a jitted call would refuse
                        compiled[name] = built
                else:
                    fn = cache_checked(built, problem, self.backend)
                if aux is not None:
                    fn = aux.handing_over(fn)
                if flat:
                    with_first = name.startswith(("value_and_", "gradient_and_"))
                    fn, convert = _numpy_batch_call(fn, len(tangents), with_first), None
                else:
                    convert = converters[name] if problem.family == "numpy" else None
                wrapped = _wrap(fn, convert, wide, len(args))
                methods[name] = _canonical_scalars(wrapped, 2 if batched else 1, scalars, mixed)
        impl = Impl(**methods)
        if compiled:
            _FUSABLE[impl] = _Fusable(
                compiled, converters, problem.family, static, wide, args, scalars, mixed
            )
        return impl

    def fused_method(self, impl, name, before, after, x):
        # the method's compiled function traced again between the conversions: one dispatch per call
        fusable = _FUSABLE.get(impl)
        if fusable is None or name not in fusable.functions:
            return None
        inner = fusable.functions[name]
        return self._compiled_like(fusable, name, lambda x, *ctx: after(inner(before(x), *ctx)), x)

    def prepare_complex_gradient(self, impl, problem):
        # jax.grad takes the complex x itself, in one shorter program than the real view's; its
        # gradient is the conjugate of diffinterface's convention
        fusable = _FUSABLE.get(impl)
        if fusable is None or not fusable.reverse_gradient:
            return None
        f, x = problem.f, problem.x

        def gradient(x, *ctx):
            return jnp.conj(jax.grad(f)(x, *ctx))

        def value_and_gradient(x, *ctx):
            value, gradient = jax.value_and_grad(f)(x, *ctx)
            return value, jnp.conj(gradient)

        natives = {"gradient": gradient, "value_and_gradient": value_and_gradient}
        return Impl(
            **{
                name: self._compiled_like(fusable, name, natives[name], x)
                for name in natives
                if name in fusable.functions
            }
        )

    def _compiled_like(self, fusable, name, function, x):
        """``function`` of an x like ``x`` jitted, compiled and wrapped as :meth:`_impl` did the method ``name``."""
        fn = jax.jit(function, static_argnums=fusable.static)
        if name == next(
            iter(fusable.functions)
        ):  # the operator's own method; the others at first call
            with _x64_scope(fusable.wide):
                fn.lower(x, *fusable.args[1:]).compile()
        convert = fusable.converters[name] if fusable.family == "numpy" else None
        wrapped = _wrap(fn, convert, fusable.wide, len(fusable.args))
        return _canonical_scalars(wrapped, 1, fusable.scalars, fusable.mixed)

    def output_spec(self, problem):
        static = self._static(problem, 1)
        mixed = _mixed_positions(problem.ctx)
        ctx = tuple(_Mixed(v) if i in mixed else v for i, v in enumerate(problem.ctx))
        if not self._compiles(problem):
            # eager: f may branch on x's values (``if x[0] > 0``), which an abstract trace cannot
            with _x64_scope(self._wide(problem)):
                check_no_value_taken_out(problem, self.backend, static, ctx)
                with traced(problem, self.backend, compiling=False):
                    out = problem.f(jax.tree_util.tree_map(jnp.asarray, problem.x), *problem.ctx)
            return Spec(shape_of(out), dtype_name(out)) if is_array(out) else not_an_array(out)
        with _x64_scope(self._wide(problem)), traced(problem, self.backend):
            out = traced_at_values(
                problem,
                lambda: jax.jit(problem.f, static_argnums=static).eval_shape(problem.x, *ctx),
            )
        if not hasattr(out, "shape") or not hasattr(out, "dtype"):
            not_an_array(out)
        return Spec(out.shape, str(out.dtype))

    def prepare_evaluation(self, problem):
        f = _output_checked(problem.f)
        return self._impl(problem, ("evaluation",), {"value": lambda: f}, {"value": _owned}).value

    # -- primitives -------------------------------------------------------------------------------

    def prepare_pushforward(self, problem):
        return self._prepare_products(problem, "pushforward", "forward", _forward_products)

    def prepare_pullback(self, problem):
        return self._prepare_products(problem, "pullback", "reverse", _reverse_products)

    def _prepare_products(self, problem, name, mode, products):
        """A batch of ``products`` (``_forward_products`` or ``_reverse_products``) swept in ``mode``."""
        (f, aux), k = traced_function(problem), len(problem.tangents)
        if name == "pushforward" and not aux:
            f = _output_checked(f)  # with aux, the pair checks y itself
        bound, chosen = sweep_batch(self, problem, k, mode)
        builders = {
            name: lambda flat: _batched(f, products, k, False, flat, bound, aux),
            f"value_and_{name}": lambda flat: _batched(f, products, k, True, flat, bound, aux),
        }
        return record(self._impl(problem, (name, k), builders, batched=True), chosen)

    # -- first-order overrides ------------------------------------------------------------------

    def prepare_derivative(self, problem):
        mode = problem.mode("derivative")
        scalar_output = mode == "reverse" and problem.spec.shape == ()
        f, aux = traced_function(problem)
        pair = lambda: _derivative_pair(f, mode, scalar_output, aux)  # noqa: E731
        return self._impl(
            problem,
            ("derivative", mode, scalar_output),
            {"derivative": lambda: pair()[0], "value_and_derivative": lambda: pair()[1]},
            {"derivative": _owned, "value_and_derivative": _pair_to_numpy},
        )

    def prepare_gradient(self, problem):
        require_scalar_output(problem, "gradient")
        mode = problem.mode("gradient")
        bound = chosen = None
        if (
            mode == "forward" and problem.tree is None
        ):  # one tangent per entry of x: a bounded sweep
            bound, chosen = sweep_batch(self, problem, problem.x_size, mode)
        f, aux = traced_function(problem)
        pair = lambda: _gradient_pair(f, mode, aux, bound)  # noqa: E731
        impl = self._impl(
            problem,
            ("gradient", mode, bound),
            {"gradient": lambda: pair()[0], "value_and_gradient": lambda: pair()[1]},
            {"gradient": _owned, "value_and_gradient": _pair_to_numpy}
            if problem.tree is None
            else {"gradient": _tree_to_numpy, "value_and_gradient": _pair_tree_to_numpy},
        )
        fusable = _FUSABLE.get(impl)
        if fusable is not None and mode == "reverse" and problem.tree is None:
            _FUSABLE[impl] = fusable._replace(reverse_gradient=True)
        return impl if chosen is None else record(impl, chosen)

    def prepare_jacobian(self, problem):
        mode = problem.mode("jacobian")
        bound, chosen = sweep_batch(
            self, problem, problem.x_size if mode == "forward" else problem.spec.size, mode
        )
        transform, (f, aux) = _jacobian_transform(mode, bound), traced_function(problem)
        return record(
            self._impl(
                problem,
                ("jacobian", mode),
                {
                    "jacobian": lambda: transform(f, has_aux=aux),
                    "value_and_jacobian": lambda: _value_and(transform, f, aux),
                },
                {"jacobian": _owned, "value_and_jacobian": _pair_to_numpy},
            ),
            chosen,
        )

    # -- hooks for AutoSparse(AutoJAX(...)): products and gather in one compiled function ---------

    def sparse_jacobian(self, problem, compression, seed_matrix, dense_shape, assembler):
        """``(jacobian, value_and_jacobian)`` compiled whole (``sparse.py``), or None when it cannot be."""
        from .sparse import can_fuse, fused_jacobian

        if not can_fuse(self, problem):
            return None
        mode = "forward" if compression.kind == "columns" else "reverse"
        bound = sweep_batch(self, problem, len(seed_matrix), mode)[0]  # the colors, in batches
        return fused_jacobian(problem, compression, seed_matrix, dense_shape, assembler, bound)

    def sparse_hessian(self, problem, compression, seed_matrix, dense_shape, assembler):
        """``(hessian, value_gradient_and_hessian)`` compiled whole (``sparse.py``), or None."""
        from .sparse import can_fuse, fused_hessian

        if not can_fuse(self, problem):
            return None
        value_and_gradient = self.differentiable_value_and_gradient(problem)
        bound = sweep_batch(
            self,
            problem,
            len(seed_matrix),
            "forward",
            lambda x, *ctx: value_and_gradient(x, *ctx)[1],
        )[0]
        return fused_hessian(
            problem, value_and_gradient, compression, seed_matrix, dense_shape, assembler, bound
        )
