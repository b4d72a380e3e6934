"""The MLX adapter: MLX's recipes (``recipes.py``), compiled at preparation (``boundary.py``)."""

from __future__ import annotations

import mlx.core as mx

from ...core import Adapter, Capabilities, Impl, Spec, require_scalar_output
from ...core.operator_table import OPERATORS
from ...core.batching import batch_bounds, record
from . import recipes
from .boundary import TRACED_ARRAY_MESSAGE, Boundary, checked_output, to_mlx


#: why AutoMLX(compile=True) compiles unprepared calls too (Capabilities.traces_unprepared_calls)
UNPREPARED_CALLS_COMPILED = (
    "MLX's eager transforms silently drop the derivative through a value read from x (mx.grad "
    "of x * x.item() is x.item()); inside mx.compile such a read is refused by name"
)


class MLXAdapter(Adapter):
    """Adapter for ``AutoMLX``; see the package docstring for the recipes."""

    capabilities = Capabilities.of_framework(
        "mlx",
        "MLX array",
        numpy_results_are_arrays=True,  # every numpy result is a copy made by np.array
        # MLX traces f on arrays no numpy buffer can hold: f cannot write them into a di.Cache
        writes_cache=False,
        # a compiled function hands out only what it returns: with has_aux, f runs once more, at x,
        # for the aux
        aux_evaluated_again=frozenset(OPERATORS),
        complex_x_refusal=(
            "MLX has no complex128, and its float32 complex64 would not keep a complex128 x's "
            "precision"
        ),
        float64_accuracy=(
            1e-7,
            "MLX's CPU computes float64 sin, cos, exp and their kin with float32's polynomial "
            "approximations (relative errors near 3e-8); arithmetic, sqrt and log are float64's",
        ),
    )

    def __init__(self, backend):
        super().__init__(backend)
        self.capabilities = type(self).capabilities.replace(
            traces_without_values=backend.compile,
            traces_unprepared_calls=UNPREPARED_CALLS_COMPILED if backend.compile else None,
        )

    def primal_value(self, value):
        if isinstance(value, mx.array):
            try:
                mx.eval(value)
            except ValueError as error:  # a placeholder of mx.compile or mx.vmap
                raise TypeError(
                    "an MLX array traced by mx.compile has no concrete value"
                ) from error
        return value

    def is_traced_array_error(self, error):
        return isinstance(error, ValueError) and TRACED_ARRAY_MESSAGE in str(error)

    # -- output and evaluation --------------------------------------------------------------------

    def output_spec(self, problem):
        # MLX is lazy: f's graph gives the shape and dtype, nothing is computed
        b = Boundary(self, problem)
        y = b.f(b.x_in(problem.x), *b.ctx_in(problem.ctx))
        return Spec(tuple(y.shape), str(y.dtype).rpartition(".")[2])

    def prepare_evaluation(self, problem):
        b = Boundary(self, problem)
        f = b.compiled(b.f, *b.example())
        return lambda x, *ctx: b.out(f(b.x_in(x), *b.ctx_in(ctx)))

    # -- seeded operators: pushforward, pullback, hvp ---------------------------------------------

    def _seeded(self, problem, operator, recipe, n_seeds):
        """The Impl of a seeded operator: ``recipe(f, one)`` -> ``run(x, seeds, *ctx) -> (first, stacked)``."""
        b = Boundary(self, problem)
        k = len(problem.tangents)
        stack = b.seeds_in(problem.tangents)
        size = b.batch(
            k, lambda: recipe(b.f, True)(b.x_in(problem.x), stack[:1], *b.ctx_in(problem.ctx))
        )
        compiled, size = b.sweep(
            recipe, size, lambda n: b.example(stack[0] if n == 1 else stack[:n])
        )
        x_in, ctx_in, out = b.x_in, b.ctx_in, b.out

        if size == 1:  # seed after seed, each product alone

            def valued(x, seeds, *ctx):
                x, ctx = x_in(x), ctx_in(ctx)
                parts = [compiled(x, to_mlx(seed), *ctx) for seed in seeds]
                return out(parts[0][0]), tuple(out(p[1]) for p in parts)

        else:
            seeds_in, bounds = b.seeds_in, batch_bounds(k, size)

            def valued(x, seeds, *ctx):
                x, ctx, seeds = x_in(x), ctx_in(ctx), seeds_in(seeds)
                parts = [compiled(x, seeds[start:stop], *ctx) for start, stop in bounds]
                stacked = parts[0][1] if len(parts) == 1 else mx.concatenate([p[1] for p in parts])
                return out(parts[0][0]), tuple(out(stacked[i]) for i in range(k))

        combined = "gradient_and_hvp" if operator == "hvp" else "value_and_" + operator
        return record(Impl(**{operator: lambda *a: valued(*a)[1], combined: valued}), size)

    def prepare_pushforward(self, problem):
        return self._seeded(problem, "pushforward", recipes.pushforwards, 1)

    def prepare_pullback(self, problem):
        return self._seeded(problem, "pullback", recipes.pullbacks, 1)

    def prepare_hvp(self, problem):
        require_scalar_output(problem, "hvp")
        return self._seeded(problem, "hvp", recipes.hvps, 2)

    # -- sweeps over a basis: jacobian, hessian, gradient and derivative by columns or rows ---------

    def _basis_sweep(self, problem, names, recipe, shape, finish):
        """The Impl of ``names`` (alone, combined) from ``recipe(f, one)`` swept over the basis of ``shape``:
        ``finish(results, stacked)`` -> the combined form's results (the last is the operator's)."""
        b = Boundary(self, problem)
        n = 1
        for d in shape:
            n *= d
        basis = mx.reshape(
            mx.eye(max(n, 1), dtype=self._basis_dtype(problem, shape)), (max(n, 1), *shape)
        )
        x0, ctx0 = b.x_in(problem.x), b.ctx_in(problem.ctx)
        size = b.batch(n, lambda: recipe(b.f, True)(x0, basis[:1], *ctx0))
        compiled, size = b.sweep(
            recipe, size, lambda m: (x0, basis[0] if m == 1 else basis[:m], *ctx0)
        )
        x_in, ctx_in, out = b.x_in, b.ctx_in, b.out
        seeds = (
            [basis[i] for i in range(n)]
            if size == 1
            else [basis[i:j] for i, j in batch_bounds(n, size)]
        )

        def combined(x, *ctx):
            x, ctx = x_in(x), ctx_in(ctx)
            parts = [compiled(x, seed, *ctx) for seed in seeds]
            if size == 1:
                stacked = mx.stack([p[-1] for p in parts])
            else:
                stacked = (
                    parts[0][-1] if len(parts) == 1 else mx.concatenate([p[-1] for p in parts])
                )
            return tuple(out(r) for r in finish(parts[0][:-1], stacked))

        return record(Impl(**{names[0]: lambda *a: combined(*a)[-1], names[1]: combined}), size)

    @staticmethod
    def _basis_dtype(problem, shape):
        dtype = problem.x_dtype if shape == problem.x_shape else problem.spec.dtype
        return getattr(mx, dtype)

    def prepare_jacobian(self, problem):
        return self._jacobian(problem, problem.mode("jacobian"))

    def _jacobian(self, problem, mode):
        x_shape, y_shape = problem.x_shape, problem.spec.shape
        if mode == "forward":
            # read from the problem now: a prepared call stays in the backend
            m, n = problem.spec.size, problem.x_size

            def finish(first, columns):  # columns: (x.size, *y_shape)
                rows = mx.transpose(mx.reshape(columns, (n, m)))
                return (first[0], mx.reshape(rows, y_shape + x_shape))

            return self._basis_sweep(
                problem, ("jacobian", "value_and_jacobian"), recipes.pushforwards, x_shape, finish
            )

        def finish_rows(first, rows):  # rows: (y.size, *x_shape)
            return (first[0], mx.reshape(rows, y_shape + x_shape))

        return self._basis_sweep(
            problem, ("jacobian", "value_and_jacobian"), recipes.pullbacks, y_shape, finish_rows
        )

    def prepare_derivative(self, problem):
        # x is a scalar: the Jacobian is shaped like f(x); one tangent unless reverse is asked for
        # (and f(x) has entries to seed)
        forward = problem.mode("derivative") == "forward" or problem.spec.size == 0
        impl = self._jacobian(problem, "forward" if forward else "reverse")
        return Impl(derivative=impl.jacobian, value_and_derivative=impl.value_and_jacobian)

    def prepare_hessian(self, problem):
        require_scalar_output(problem, "hessian")
        x_shape = problem.x_shape

        def finish(first, rows):
            return (first[0], first[1], mx.reshape(rows, x_shape + x_shape))

        return self._basis_sweep(
            problem,
            ("hessian", "value_gradient_and_hessian"),
            recipes.hessian_rows,
            x_shape,
            finish,
        )

    def prepare_gradient(self, problem):
        require_scalar_output(problem, "gradient")
        if problem.mode("gradient") == "forward":
            x_shape = problem.x_shape

            def finish(first, entries):
                return (first[0], mx.reshape(entries, x_shape))

            return self._basis_sweep(
                problem, ("gradient", "value_and_gradient"), recipes.pushforwards, x_shape, finish
            )
        b = Boundary(self, problem)
        valued = b.compiled(recipes.gradient(b.f), *b.example())
        alone = b.compiled(recipes.gradient_alone(b.f), *b.example())  # mx.grad's own graph
        if b.passes_through and not problem.ctx:
            return Impl(gradient=alone, value_and_gradient=valued)
        x_in, ctx_in, out = b.x_in, b.ctx_in, b.out

        def value_and_gradient(x, *ctx):
            value, gradient = valued(x_in(x), *ctx_in(ctx))
            return out(value), out(gradient)

        def gradient(x, *ctx):
            return out(alone(x_in(x), *ctx_in(ctx)))

        return Impl(gradient=gradient, value_and_gradient=value_and_gradient)

    def prepare_second_derivative(self, problem):
        b = Boundary(self, problem)
        compiled = b.compiled(recipes.second_derivative(b.f), *b.example())
        x_in, ctx_in, out = b.x_in, b.ctx_in, b.out

        def combined(x, *ctx):
            return tuple(out(r) for r in compiled(x_in(x), *ctx_in(ctx)))

        return Impl.from_valued("second_derivative", combined)

    # -- first derivatives MLX can differentiate again (SecondOrder pairs) ------------------------

    def differentiable_value_and_gradient(self, problem):
        f = checked_output(problem.f, self.backend)
        return lambda x, *ctx: mx.value_and_grad(lambda z: f(z, *ctx))(x)

    def differentiable_value_and_derivative(self, problem):
        f = checked_output(problem.f, self.backend)

        def value_and_derivative(x, *ctx):
            (y,), (d,) = mx.jvp(lambda z: f(z, *ctx), [x], [mx.ones_like(x)])
            return y, d

        return value_and_derivative
