"""AutoFiniteDiff's adapter: first-order differences (see the package docstring); second order in
``second_order.py``."""

from __future__ import annotations

import numpy as np

from ...contexts import Cache
from ...errors import MissingBackendError
from ...families import FAMILIES, owned
from ...core.batching import record
from ...core import Adapter, Capabilities, Impl, Spec, require_scalar_output
from .batched import batched_pushforward
from .evaluation import FiniteDiffEvaluation
from .refusals import COMPLEX_STEP_REAL_X_ONLY, refuse_caches, require_x_precision
from .second_order import FiniteDiffSecondOrder
from .steps import FiniteDiffSteps

#: the way around a traced x of a family the differences are not traced in
_AROUND = (
    "differentiate with its framework's own backend (AutoJAX(), AutoTorch(), AutoTensorFlow()); or "
    "wrap f as g = di.DifferentiateWith(f, backend) and differentiate g with that backend (the "
    "transform then calls the finite differences on concrete values); or call it outside the "
    "transform"
)
#: what f receives on JAX arrays, for the error of a numpy-only f there
_TRACED_POINTS = (
    "JAX tracer (on JAX arrays, inside jax.jit or not, AutoFiniteDiff evaluates f at its points under "
    "jax.vmap; a numpy-only f takes a numpy x, outside the transform)"
)
#: why a traced x of another family than JAX's is refused (JAX's is differenced in jax.numpy)
_NEEDS_VALUES = (
    "takes its steps on the host, on x's values (on JAX arrays it computes in jax.numpy)",
    "Inside the transform, " + _AROUND,
)


def _host_only(backend):
    """``needs_values`` of a selector whose points are picked on the host whatever x's family."""
    why = (
        "method='adaptive' picks its points from f's values"
        if backend.method == "adaptive"
        else "workers= evaluate f on concrete points"
    )
    return (
        f"takes its steps on the host, on x's values ({why})",
        "Inside jax.jit, use AutoFiniteDiff(method='central'), 'forward' or 'complex' without "
        "workers, which compute on JAX's traced values; or " + _AROUND,
    )


class FiniteDiffAdapter(FiniteDiffEvaluation, FiniteDiffSteps, FiniteDiffSecondOrder, Adapter):
    capabilities = Capabilities(
        mode="forward",
        families=("numpy",),
        inplace=True,
        # sweeps evaluate f for one seed after the other
        bounds_sweeps=True,
        approximate=True,
    )

    def __init__(self, backend):
        super().__init__(backend)
        self.method = backend.method
        complex_step = self.method == "complex"
        if self.method == "adaptive":
            try:
                import scipy.differentiate  # noqa: F401
            except ImportError as error:
                raise MissingBackendError(
                    "AutoFiniteDiff(method='adaptive') uses scipy.differentiate (scipy >= 1.15), which is "
                    "not installed: pip install 'diffinterface[scipy]'",
                    name="scipy",
                ) from error
        self.workers = getattr(backend, "workers", None)
        # the host picks adaptive points, and workers get host points: on the host only
        traceable = self.method != "adaptive" and self.workers is None
        self.capabilities = type(self).capabilities.replace(
            traceable_families=("jax",) if traceable else (),
            traced_array_name=_TRACED_POINTS,
            needs_values=_NEEDS_VALUES if traceable else _host_only(backend),
            writes_cache=not complex_step,
            complex_x_refusal=COMPLEX_STEP_REAL_X_ONLY if complex_step else None,
            complex_step=complex_step,
            # with workers, the points go to them
            batches_points=self.method in ("central", "forward") and self.tape is None,
        )

    def prepare(self, operator, problem):
        """The operator's own preparation: in x's namespace for the families it traces in
        (:mod:`.traceable`), else on the host, its evaluations of f routed through the selector's
        workers where it has them (:mod:`.through_workers`)."""
        if problem.family in self.capabilities.traceable_families:
            from .traceable import prepare_traceable  # for JAX arrays only

            return prepare_traceable(self, operator, problem)
        if self.workers is None or operator not in self.preparations:
            return super().prepare(operator, problem)
        from .through_workers import prepare_through_workers  # threads and locks: for workers only

        return prepare_through_workers(
            self,
            lambda taped, problem: super(FiniteDiffAdapter, taped).prepare(operator, problem),
            problem,
        )

    def is_traced_array_error(self, error):
        """On the arrays of a family it computes in, f runs on that framework's traced points: the
        framework refusing to read their values (numpy called on them)."""
        return any(
            FAMILIES[name].is_traced_value_error(error)
            for name in self.capabilities.traceable_families
        )

    def differentiable_value_and_gradient(self, problem):
        """On the arrays of a family it computes in, the differences in its namespace, which that
        framework differentiates again (``SecondOrder(AutoJAX(), AutoFiniteDiff())``)."""
        return self._differentiable("gradient", problem)

    def differentiable_value_and_derivative(self, problem):
        return self._differentiable("derivative", problem)

    def _differentiable(self, operator, problem):
        # a Cache f writes into cannot hold traced points: the caller bridges the host differences
        if problem.family not in self.capabilities.traceable_families or any(
            isinstance(c, Cache) for c in problem.contexts
        ):
            return None
        from .traceable import prepare_traceable

        return getattr(prepare_traceable(self, operator, problem), "value_and_" + operator)

    def output_spec(self, problem):
        if not self.capabilities.writes_cache:
            refuse_caches(problem, self.backend)
        if problem.y is not None:
            return Spec.of(problem.y)
        f = problem.f
        if problem.family in self.capabilities.traceable_families:  # as its differences run f
            f = FAMILIES[problem.family].keeping_dtype(f, problem.x)
        spec = Spec.of(f(owned(problem.x), *problem.ctx))
        if problem.tree is None:
            require_x_precision(problem, spec, self.backend)
        return spec

    # -- building blocks -------------------------------------------------------------------

    def _directional(self, problem):
        """``directional(x, t, ctx, fx) -> (value or None, J(x) @ t)``; fx is f(x) or None."""
        method = self.method
        evaluate = self._evaluate(problem)
        step = self._step_rule(np.asarray(problem.x).dtype, problem)
        call_f = self._evaluator(problem)
        if method == "complex":
            complex_type = np.result_type(problem.x_dtype, np.complex64)
            evaluate_complex = self._evaluate(problem, dtype=complex_type)
            out_dtype = problem.spec.dtype

            def directional(x, t, ctx, fx):
                h = step(x, t)
                fz = evaluate_complex(np.asarray(x, dtype=complex_type) + (1j * h) * t, ctx)
                return np.real(fz).astype(out_dtype), (np.imag(fz) / h).astype(out_dtype)

        elif method == "forward":

            def directional(x, t, ctx, fx):
                h = step(x, t)
                return fx, (call_f(x + h * t, *ctx) - fx) / h

        elif method == "central":

            def directional(x, t, ctx, fx):
                h = step(x, t)
                move = h * t
                return fx, (call_f(x + move, *ctx) - call_f(x - move, *ctx)) / (2 * h)

        else:  # adaptive
            from scipy.differentiate import jacobian as scipy_jacobian

            shape = problem.spec.shape

            def directional(x, t, ctx, fx):
                def along(s):  # s: (1, *batch) -> (m, *batch)
                    batch = s.shape[1:]
                    flat = s.reshape(1, -1)
                    values = [
                        np.reshape(evaluate(x + flat[0, k] * t, ctx), (-1,))
                        for k in range(flat.shape[1])
                    ]
                    return np.stack(values, axis=-1).reshape((-1, *batch))

                result = scipy_jacobian(along, np.zeros(1, dtype=np.asarray(x).dtype))
                return fx, np.reshape(result.df[:, 0], shape).astype(problem.spec.dtype)

        needs_value = method == "forward"
        return directional, evaluate, needs_value

    # -- primitive ----------------------------------------------------------------------------

    def prepare_pushforward(self, problem):
        batched = batched_pushforward(self, problem)
        if batched is not None:
            return batched
        directional, evaluate, needs_value = self._directional(problem)
        complex_value = self.method == "complex"

        def pushforward(x, tangents, *ctx):
            fx = evaluate(owned(x), ctx) if needs_value else None
            return tuple(directional(x, t, ctx, fx)[1] for t in tangents)

        def value_and_pushforward(x, tangents, *ctx):
            fx = None if complex_value else evaluate(owned(x), ctx)
            results = []
            for t in tangents:
                value, d = directional(x, t, ctx, fx)
                results.append(d)
            return (value if complex_value else fx), tuple(results)

        # one evaluation of f per tangent (two, central): a batch is one seed
        return record(Impl(pushforward=pushforward, value_and_pushforward=value_and_pushforward), 1)

    # -- overrides with exact evaluation counts -------------------------------------------------

    def _jacobian(self, problem, shape):
        """``jacobian(x, ctx, want_value) -> (value or None, J reshaped to shape)``.

        Derivative, gradient and Jacobian are all the columns ``J @ e_i`` stacked
        on the last axis. Each call takes its steps ``h_i = max(rel_step * |x_i|,
        abs_step)`` from its own x (a preparation made at a large x would
        otherwise difference a small one with steps of the wrong scale), moves
        entry i of a fresh copy of x (f may keep or return its input; no n x n
        array of moves), evaluates f, and divides once.
        """
        if self.method == "adaptive":
            return self._jacobian_along_tangents(problem, shape)
        scalar = self._scalar_difference(problem, shape)
        if scalar is not None:
            plain, valued = scalar

            def jacobian_at_scalar(x, ctx, want_value):
                return valued(x, *ctx) if want_value else (None, plain(x, *ctx))

            return jacobian_at_scalar
        method, x_shape = self.method, problem.x_shape
        evaluate = self._evaluator(problem)
        dtype = np.asarray(problem.x).dtype
        steps_at = self._coordinate_steps(problem, dtype)

        def flat_points(flat, moved):
            """x with entry i replaced by ``moved[i]``, for each i (the same arithmetic as ``x + h_i e_i``)."""
            copy = flat.copy
            for i, value in enumerate(moved.tolist()):
                point = copy()
                point[i] = value
                yield point

        def shaped_points(flat, moved):
            for point in flat_points(flat, moved):
                yield point.reshape(x_shape)

        points = flat_points if len(x_shape) == 1 else shaped_points

        if method in ("forward", "central"):
            out_dtype = problem.spec.dtype
            # Scaling the stacked columns in place spares a second n x m array (and its page
            # faults), where the product keeps the columns' dtype.
            in_place = np.result_type(out_dtype, dtype) == out_dtype

            # The columns of a scalar f are NumPy scalars: one array of them is several times
            # cheaper to build than np.stack's (which expands each to 1-d first), and holds the same
            # values.
            stack = (
                np.array
                if problem.spec.shape == ()
                else (lambda columns: np.stack(columns, axis=-1))
            )

            def scaled(columns, inverse):
                # a product streams faster than a quotient over n x m entries; a scalar (equal
                # steps) faster still
                stacked = stack(columns)
                if in_place and stacked.dtype == out_dtype:
                    stacked *= inverse
                else:
                    stacked = stacked * inverse
                return np.reshape(stacked, shape)

        if method == "forward":

            def jacobian(x, ctx, want_value):
                flat = np.reshape(x, -1)
                h = steps_at(flat)
                # f(x) rather than f(x, *()): a call with no star-arguments is the faster one
                if ctx:
                    fx = evaluate(owned(x), *ctx)
                    columns = [evaluate(p, *ctx) - fx for p in points(flat, flat + h)]
                else:
                    fx = evaluate(owned(x))
                    columns = [evaluate(p) - fx for p in points(flat, flat + h)]
                return fx, scaled(columns, 1 / h)

        elif method == "central":

            def jacobian(x, ctx, want_value):
                flat = np.reshape(x, -1)
                h = steps_at(flat)
                plus, minus = points(flat, flat + h), points(flat, flat - h)
                # f(x) rather than f(x, *()): a call with no star-arguments is the faster one
                if ctx:
                    columns = [evaluate(p, *ctx) - evaluate(m, *ctx) for p, m in zip(plus, minus)]
                else:
                    columns = [evaluate(p) - evaluate(m) for p, m in zip(plus, minus)]
                value = evaluate(owned(x), *ctx) if want_value else None
                return value, scaled(columns, 1 / (2 * h))

        else:  # complex step: the value is the real part of any evaluation
            complex_type = np.result_type(problem.x_dtype, np.complex64)
            evaluate_complex = self._evaluator(problem, dtype=complex_type)
            out_dtype = problem.spec.dtype

            def jacobian(x, ctx, want_value):
                flat = np.reshape(x, -1)
                h = steps_at(flat)
                flat_complex = np.asarray(flat, dtype=complex_type)
                values = [
                    evaluate_complex(p, *ctx) for p in points(flat_complex, flat_complex + 1j * h)
                ]
                columns = np.stack(values, axis=-1)
                derivative = (np.imag(columns) / h).astype(out_dtype)
                return np.real(values[-1]).astype(out_dtype), np.reshape(derivative, shape)

        return jacobian

    def _scalar_difference(self, problem, shape):
        """``(derivative(x, *ctx), value_and_derivative(x, *ctx))`` at a scalar x, or None.

        Forward and central differences only. The step, taken at each call's x,
        is a Python float, exactly the dtype-rounded one: ``x + h`` keeps x's kind
        (a float stays a float, on which f runs about twice as fast as on a numpy
        scalar) and, a weak scalar, x's dtype. No frame between the core and f
        beyond these functions.
        """
        if problem.x_shape or self.method not in ("forward", "central"):
            return None
        evaluate = self._evaluator(problem)
        dtype = np.asarray(problem.x).dtype
        rel, absolute = self._rel_abs(dtype)
        in_dtype = dtype.type

        if dtype == np.float64:  # Python floats are float64: their arithmetic is the dtype's

            def step_at(x, divisor):
                """(h, 1 / (divisor h)) at this call's x (x.real: a complex step's outer point)."""
                h = float(max(rel * abs(x.real), absolute))
                return h, 1 / (divisor * h)

        else:

            def step_at(x, divisor):
                step = in_dtype(max(rel * abs(x.real), absolute))
                return float(step), float(1 / (divisor * step))

        def shaped(d):
            # the derivative with the output's shape; a 0-d one is left to the core, which makes a
            # NumPy scalar a 0-d array (core/dtypes.py) for this adapter's every 0-d result
            return d if getattr(d, "shape", ()) == shape else np.reshape(d, shape)

        if self.method == "forward":

            def derivative(x, *ctx):
                h, inverse = step_at(x, 1)
                if ctx:
                    return shaped((evaluate(x + h, *ctx) - evaluate(owned(x), *ctx)) * inverse)
                return shaped((evaluate(x + h) - evaluate(owned(x))) * inverse)

            def value_and_derivative(x, *ctx):
                h, inverse = step_at(x, 1)
                if ctx:
                    fx = evaluate(owned(x), *ctx)
                    return fx, shaped((evaluate(x + h, *ctx) - fx) * inverse)
                fx = evaluate(owned(x))  # f(x) rather than f(x, *()): the faster call
                return fx, shaped((evaluate(x + h) - fx) * inverse)

        else:

            def derivative(x, *ctx):
                h, inverse = step_at(x, 2)
                if ctx:
                    return shaped((evaluate(x + h, *ctx) - evaluate(x - h, *ctx)) * inverse)
                return shaped((evaluate(x + h) - evaluate(x - h)) * inverse)

            def value_and_derivative(x, *ctx):
                return evaluate(owned(x), *ctx), derivative(x, *ctx)

        return derivative, value_and_derivative

    def _jacobian_along_tangents(self, problem, shape):
        directional, evaluate, _ = self._directional(problem)
        n = problem.x_size
        seeds = np.eye(n, dtype=np.asarray(problem.x).dtype).reshape((n, *problem.x_shape))

        def jacobian(x, ctx, want_value):
            value = evaluate(owned(x), ctx) if want_value else None
            columns = [directional(x, seed, ctx, None)[1] for seed in seeds]
            return value, np.reshape(np.stack(columns, axis=-1), shape)

        return jacobian

    def _impl(self, problem, operator, shape):
        scalar = self._scalar_difference(problem, shape)
        if scalar is not None:
            return Impl(**{operator: scalar[0], "value_and_" + operator: scalar[1]})
        jacobian = self._jacobian(problem, shape)
        return Impl(
            **{
                operator: lambda x, *ctx: jacobian(x, ctx, False)[1],
                "value_and_" + operator: lambda x, *ctx: jacobian(x, ctx, True),
            }
        )

    def prepare_derivative(self, problem):
        return self._impl(problem, "derivative", problem.spec.shape)

    def prepare_gradient(self, problem):
        require_scalar_output(problem, "gradient")
        return self._impl(problem, "gradient", problem.x_shape)

    def prepare_jacobian(self, problem):
        # one column's evaluations after the other: a batch is one seed
        return record(self._impl(problem, "jacobian", problem.spec.shape + problem.x_shape), 1)
