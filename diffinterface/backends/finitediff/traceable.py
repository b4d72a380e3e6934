"""AutoFiniteDiff on arrays of a family it computes in (``Capabilities.traceable_families``: JAX).

Inside ``jax.jit``, ``jax.vmap`` or ``jax.grad`` x is a tracer, with no
values for the host recipes (``adapter.py``, ``second_order.py``) to read.
On JAX arrays, traced or concrete, the same differences are written here with
the family's namespace: the steps from the rules of ``steps.py`` (the same
constants, without host conversions), the perturbed points stacked, and ``f``
evaluated at all of them in one vectorized call (``Family.mapped``:
``jax.vmap``), so the whole derivative traces into the caller's computation
and compiles with it. A concrete x runs the same functions eagerly (under the
configuration that keeps its dtype, ``Family.keeping_dtype``); wrap the call
in ``jax.jit`` to compile it. Each difference is the host recipe's arithmetic on the
host recipe's points, so results equal the host's up to the rounding of the
compiled arithmetic; their cost in evaluations of ``f`` is the host's, one
vectorized call instead of a loop.

``f`` must be traceable by the framework (written with ``jax.numpy``, or
``xp = di.array_namespace(x)``): a numpy-only ``f`` raises the framework's
error, which the core explains. The whole sweep runs in one vectorized call
(``batch_size`` does not cut it), and neither ``workers`` nor
``method="adaptive"`` (which pick their points on the host) take this path:
they refuse a traced x by name (``Capabilities.needs_values``).
"""

from __future__ import annotations

import numpy as np

from ...contexts import Cache
from ...core import Impl, require_scalar_output
from ...errors import UnsupportedError
from ...families import FAMILIES
from ...families.complex_step import at_complex_points
from .refusals import dropped_imaginary_part
from .steps import traceable_coordinate_steps, traceable_step_rule


def prepare_traceable(adapter, operator, problem):
    """The Impl of ``operator`` computed with the namespace of x's family, or None (the core's fallback
    from these primitives: pullbacks through the Jacobian)."""
    recipe = _RECIPES.get(operator)
    if recipe is None:
        return None
    if problem.y is not None:
        raise UnsupportedError(
            f"y: {adapter.backend!r} on {problem.family} arrays evaluates f at traced points, which "
            "a two-argument f(y, x) cannot write into y; return the output from a one-argument f(x)"
        )
    refuse_caches_when_traced(adapter, problem)
    family = FAMILIES[problem.family]
    impl = recipe(Differences(adapter, problem, family))
    # float64 arrays of a framework that narrows them by default (JAX without x64) keep their dtype
    # only under its configuration. Not compiled here: f may read a context's value (float(c)),
    # which a compiled function's traced contexts have not; inside jax.jit it compiles with the rest
    return Impl(**{name: family.keeping_dtype(m, problem.x) for name, m in vars(impl).items()})


def refuse_caches_when_traced(adapter, problem):
    """Raise naming the first ``di.Cache`` among the contexts: f would write traced points into it."""
    caches = [i for i, c in enumerate(problem.contexts) if isinstance(c, Cache)]
    if caches:
        raise UnsupportedError(
            f"contexts[{caches[0]}]: {adapter.backend!r} on {problem.family} arrays evaluates f at "
            "traced points (under jax.vmap, inside jax.jit or not), which f cannot write into a "
            "di.Cache buffer. Return the value from f instead, or call with a numpy x outside the "
            "transform (the differences then run on the host)"
        )


class Differences:
    """The building blocks of one problem's differences, in the namespace of x's family."""

    def __init__(self, adapter, problem, family):
        self.method, self.problem = adapter.method, problem
        self.xp, self.mapped = family.namespace(), family.mapped
        self.dtype = np.dtype(problem.x_dtype)
        self.shape, self.n, self.leaf_dtypes = problem.x_shape, problem.x_size, problem.leaf_dtypes
        rel, absolute = adapter._entry_rel_abs(problem)
        self.step_along = traceable_step_rule(rel, absolute, self.dtype)
        self.coordinate_steps = traceable_coordinate_steps(
            rel, absolute, self.dtype, self.leaf_dtypes
        )
        self.outer_rel_abs = adapter._outer_rel_abs
        self.f = problem.f
        self.complex_dtype = np.result_type(self.dtype, np.complex64)
        self.backend = adapter.backend

    # -- evaluations ---------------------------------------------------------------------------

    def values(self, points, ctx):
        """f at each of the stacked ``points`` (flat, shape ``(k, n)``), stacked: ``(k, *y.shape)``."""
        f, shape = self.f, self.shape
        return self.mapped(lambda p: f(self.xp.reshape(p, shape), *ctx))(points)

    def complex_values(self, points, ctx):
        """f at the complex ``points`` (as :meth:`values`), refused when it dropped the imaginary part."""
        f, shape = at_complex_points(self.f, self.backend.rel_step), self.shape
        values = self.mapped(lambda p: f(self.xp.reshape(p, shape), *ctx))(points)
        if np.dtype(values.dtype).kind != "c":
            raise dropped_imaginary_part(self.f, self.backend, np.empty(0, values.dtype))
        return values

    def points(self, flat, moved):
        """Row i: ``flat`` with entry i replaced by ``moved[i]``, for each i (``x + h_i e_i``)."""
        xp = self.xp
        return xp.where(xp.eye(self.n, dtype=xp.bool), moved, flat)

    # -- steps (steps.py's rules and second_order.py's constants) --------------------------------

    def plain_outer_steps(self, flat, scale):
        rel, absolute = self.outer_rel_abs(self.dtype, scale)
        xp = self.xp
        steps = xp.astype(xp.maximum(rel * xp.abs(flat), absolute), self.dtype)
        return (flat + steps) - flat

    def outer_steps(self, flat, scale=1.0):
        """:meth:`FiniteDiffSecondOrder._outer_steps` at the flat x."""
        if self.leaf_dtypes is None:
            return self.plain_outer_steps(flat, scale)
        xp, parts = self.xp, []
        for entries, leaf_dtype in self.leaf_dtypes:
            rel, absolute = self.outer_rel_abs(np.dtype(leaf_dtype), scale)
            part = flat[entries]
            moved = part + xp.maximum(rel * xp.abs(part), absolute)
            parts.append(xp.astype(xp.astype(moved, leaf_dtype), self.dtype) - part)
        return xp.concat(parts)

    def outer_step_along(self, flat, t, scale=1.0):
        """:meth:`FiniteDiffSecondOrder._outer_step_along` at the flat x along the flat ``t``."""
        xp = self.xp
        t_abs = xp.abs(t)
        support, t_max = t_abs != 0, xp.max(t_abs)
        if self.leaf_dtypes is not None:
            largest = xp.max(xp.where(support, self.outer_steps(flat, scale), 0))
        else:
            size = xp.max(xp.where(support, xp.abs(flat), 0))
            largest = self.plain_outer_steps(xp.reshape(size, (1,)), scale)[0]
        resting = self.plain_outer_steps(xp.zeros((1,), dtype=self.dtype), scale)[0]
        moving = largest / xp.where(t_max != 0, t_max, 1)
        return xp.where(t_max != 0, moving, resting)

    # -- first order ---------------------------------------------------------------------------

    def coordinates(self, shape):
        """``jacobian(x, ctx, want_value) -> (value or None, J reshaped to shape)`` (adapter._jacobian)."""
        xp, method = self.xp, self.method

        def scaled(columns, inverse):  # columns (n, *y) -> (*y, n), times 1 / the steps
            stacked = xp.moveaxis(columns, 0, -1) if columns.ndim > 1 else columns
            return xp.reshape(stacked * inverse, shape)

        def jacobian(x, ctx, want_value):
            flat = xp.reshape(x, (-1,))
            h = self.coordinate_steps(xp, flat)
            if method == "forward":
                fx = self.f(x, *ctx)
                columns = self.values(self.points(flat, flat + h), ctx) - fx
                return fx, scaled(columns, 1 / h)
            if method == "central":
                plus = self.values(self.points(flat, flat + h), ctx)
                minus = self.values(self.points(flat, flat - h), ctx)
                value = self.f(x, *ctx) if want_value else None
                return value, scaled(plus - minus, 1 / (2 * h))
            complex_flat = xp.astype(flat, self.complex_dtype)
            values = self.complex_values(self.points(complex_flat, complex_flat + 1j * h), ctx)
            out = self.problem.spec.dtype
            derivative = xp.astype(xp.imag(values) / _last(xp, h, values), out)
            derivative = xp.moveaxis(derivative, 0, -1) if derivative.ndim > 1 else derivative
            return xp.astype(xp.real(values[-1]), out), xp.reshape(derivative, shape)

        return jacobian

    def complex_gradient(self, flat, ctx):
        """The complex-step gradient of the scalar f at the flat point (second order's inner)."""
        xp = self.xp
        h = self.coordinate_steps(xp, flat)
        complex_flat = xp.astype(flat, self.complex_dtype)
        values = self.complex_values(self.points(complex_flat, complex_flat + 1j * h), ctx)
        return xp.imag(values) / _last(xp, h, values)


def _last(xp, steps, values):
    """``steps`` (one per stacked evaluation) shaped to divide ``values`` stacked along a first axis."""
    return xp.reshape(steps, (steps.shape[0],) + (1,) * (values.ndim - 1))


def _pushforward(d):
    xp, f, method = d.xp, d.f, d.method
    out = d.problem.spec.dtype

    def value_and_pushforward(x, tangents, *ctx):
        stacked = xp.reshape(xp.stack(tangents), (len(tangents), -1))
        flat = xp.reshape(x, (-1,))
        h = d.step_along(xp, flat, stacked)
        moves = _last(xp, h, stacked) * stacked
        if method == "complex":
            points = xp.astype(flat, d.complex_dtype) + _last(xp, 1j * h, stacked) * stacked
            values = d.complex_values(points, ctx)
            value = xp.astype(xp.real(values[-1]), out)
            products = xp.astype(xp.imag(values) / _last(xp, h, values), out)
        elif method == "forward":
            value = f(x, *ctx)
            values = d.values(flat + moves, ctx)
            products = (values - value) / _last(xp, h, values)
        else:
            value = f(x, *ctx)
            values = d.values(xp.concat([flat + moves, flat - moves]), ctx)
            k = len(tangents)
            products = (values[:k] - values[k:]) / _last(xp, 2 * h, values[:k])
        return value, tuple(products[i] for i in range(len(tangents)))

    def pushforward(x, tangents, *ctx):
        return value_and_pushforward(x, tangents, *ctx)[1]

    return Impl(pushforward=pushforward, value_and_pushforward=value_and_pushforward)


def _first_order(operator, shape_of):
    def recipe(d):
        jacobian = d.coordinates(shape_of(d.problem))
        return Impl(
            **{
                operator: lambda x, *ctx: jacobian(x, ctx, False)[1],
                "value_and_" + operator: lambda x, *ctx: jacobian(x, ctx, True),
            }
        )

    return recipe


def _gradient(d):
    require_scalar_output(d.problem, "gradient")
    return _first_order("gradient", lambda problem: problem.x_shape)(d)


def _real_hessian(d):
    xp, n = d.xp, d.n
    upper, lower = np.triu_indices(n, 1)
    pairs = len(upper)
    # entry (i, j) of the Hessian: the mixed difference of pair (i, j) or (j, i), or diagonal i
    where = np.empty((n, n), dtype=np.int64)
    where[upper, lower] = where[lower, upper] = np.arange(pairs)
    where[np.arange(n), np.arange(n)] = pairs + np.arange(n)
    where = where.reshape(-1)

    def hessian(x, ctx, fx):
        flat = xp.reshape(x, (-1,))
        h = d.outer_steps(flat)
        if fx is None:
            fx = d.f(x, *ctx)
        moves = d.points(xp.zeros_like(flat), h)  # row i: h_i e_i
        plus, minus = flat + moves, flat - moves
        mixed = [plus[upper] + moves[lower], plus[upper] - moves[lower]]
        mixed += [minus[upper] + moves[lower], minus[upper] - moves[lower]]
        values = d.values(xp.concat([plus, minus, *mixed]), ctx)
        diagonal = (values[:n] - 2 * fx + values[n : 2 * n]) / (h * h)
        pp, pm, mp, mm = (values[2 * n + k * pairs : 2 * n + (k + 1) * pairs] for k in range(4))
        off = (pp - pm - mp + mm) / (4 * h[upper] * h[lower])
        entries = xp.take(xp.concat([off, diagonal]), xp.asarray(where))
        return xp.reshape(entries, d.shape + d.shape)

    return hessian


def _complex_hessian(d):
    xp = d.xp

    def hessian(x, ctx, fx):
        flat = xp.reshape(x, (-1,))
        h = d.outer_steps(flat)
        moves = d.points(xp.zeros_like(flat), h)
        gradient = d.mapped(lambda point: d.complex_gradient(point, ctx))
        rows = (gradient(flat + moves) - gradient(flat - moves)) / _last(xp, 2 * h, moves)
        result = xp.matrix_transpose(rows)  # column j: the difference along e_j
        return xp.reshape(0.5 * (result + rows), d.shape + d.shape)

    return hessian


def _hessian(d):
    require_scalar_output(d.problem, "hessian")
    hessian = (_complex_hessian if d.method == "complex" else _real_hessian)(d)
    value_and_gradient = d.coordinates(d.shape)
    reuse_value = d.method != "complex"

    def value_gradient_and_hessian(x, *ctx):
        value, gradient = value_and_gradient(x, ctx, True)
        return value, gradient, hessian(x, ctx, value if reuse_value else None)

    return Impl(
        hessian=lambda x, *ctx: hessian(x, ctx, None),
        value_gradient_and_hessian=value_gradient_and_hessian,
    )


def _hvp(d):
    require_scalar_output(d.problem, "hvp")
    xp, n = d.xp, d.n
    gradient_at = d.coordinates(d.shape)

    if d.method == "complex":

        def product(x, t, ctx):
            flat, direction = xp.reshape(x, (-1,)), xp.reshape(t, (-1,))
            step = d.outer_step_along(flat, direction)
            plus = d.complex_gradient(flat + step * direction, ctx)
            minus = d.complex_gradient(flat - step * direction, ctx)
            return xp.reshape((plus - minus) / (2 * step), d.shape)

    else:
        # half steps, as the host recipe: the diagonal entry is a second difference of step h + d

        def product(x, t, ctx):
            flat, direction = xp.reshape(x, (-1,)), xp.reshape(t, (-1,))
            h = d.outer_steps(flat, 0.5)
            step = d.outer_step_along(flat, direction, 0.5)
            shift = step * direction
            plus, minus = d.points(flat, flat + h), d.points(flat, flat - h)
            points = [plus + shift, plus - shift, minus + shift, minus - shift]
            values = d.values(xp.concat(points), ctx)
            pp, pm, mp, mm = (values[k * n : (k + 1) * n] for k in range(4))
            return xp.reshape((pp - pm - mp + mm) / (4 * h * step), d.shape)

    def hvp(x, tangents, *ctx):
        return tuple(product(x, t, ctx) for t in tangents)

    def gradient_and_hvp(x, tangents, *ctx):
        return gradient_at(x, ctx, False)[1], hvp(x, tangents, *ctx)

    return Impl(hvp=hvp, gradient_and_hvp=gradient_and_hvp)


def _second_derivative(d):
    xp = d.xp
    value_and_derivative = d.coordinates(d.problem.spec.shape)
    out = d.problem.spec.dtype
    one = np.ones(1, dtype=d.dtype)

    def second(x, ctx, fx):
        flat = xp.reshape(x, (-1,))
        if d.method == "complex":
            step = d.outer_step_along(flat, xp.asarray(one))
            plus = d.complex_gradient(flat + step, ctx)
            minus = d.complex_gradient(flat - step, ctx)
            return xp.astype(xp.reshape((plus - minus) / (2 * step), out_shape), out)
        step = d.outer_step_along(flat, xp.asarray(one))
        if fx is None:
            fx = d.f(x, *ctx)
        plus, minus = d.f(x + step, *ctx), d.f(x - step, *ctx)
        return xp.astype((plus - 2 * fx + minus) / (step * step), out)

    out_shape = d.problem.spec.shape
    reuse_value = d.method != "complex"

    def value_derivative_and_second_derivative(x, *ctx):
        value, derivative = value_and_derivative(x, ctx, True)
        return value, derivative, second(x, ctx, value if reuse_value else None)

    return Impl(
        second_derivative=lambda x, *ctx: second(x, ctx, None),
        value_derivative_and_second_derivative=value_derivative_and_second_derivative,
    )


_RECIPES = {
    "pushforward": _pushforward,
    "derivative": _first_order("derivative", lambda problem: problem.spec.shape),
    "gradient": _gradient,
    "jacobian": _first_order("jacobian", lambda problem: problem.spec.shape + problem.x_shape),
    "hessian": _hessian,
    "hvp": _hvp,
    "second_derivative": _second_derivative,
}
