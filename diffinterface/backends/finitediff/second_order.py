"""Second order by finite differences: nested central differences, or central differences of the
complex-step gradient (see the package docstring)."""

from __future__ import annotations

import numpy as np

from ...core.batching import record
from ...core import Impl, require_scalar_output
from ...families import owned


class FiniteDiffSecondOrder:
    """The second-order recipes of :class:`~diffinterface.backends.finitediff.adapter.FiniteDiffAdapter` (a mixin).

    They use the first-order building blocks of the adapter (``_evaluate``,
    ``_directional``, ``_jacobian``) and its ``method`` and ``backend``.
    """

    # Real methods: nested central differences, both steps eps**(1/4) relative (truncation
    # O(h**2), rounding O(eps / h**2): about sqrt(eps), 1e-8 relative in float64). The
    # Hessian uses its symmetry: f(x), f(x +- h_i e_i), and four points per pair i < j,
    # 2n**2 + 1 evaluations. method="complex": central differences (step cbrt(eps)) of the
    # complex-step first derivative, about eps**(2/3) (1e-11 relative), 2n evaluations per
    # column. Gradient and first derivative come from the first-order method, once.

    def _outer_rel_abs(self, dtype, scale=1.0):
        eps = float(np.finfo(dtype).eps)
        if self.method == "complex":  # rel_step/abs_step set the imaginary step, not this one
            return scale * eps ** (1 / 3), scale * eps ** (1 / 3)
        rel = self.backend.rel_step if self.backend.rel_step is not None else eps ** (1 / 4)
        absolute = self.backend.abs_step if self.backend.abs_step is not None else rel
        return scale * rel, scale * absolute

    def _outer_steps(self, x, leaf_dtypes=None, scale=1.0):
        """Per-entry steps (flat, exactly representable) of the outer central difference at ``x``.

        ``leaf_dtypes`` (a flat tree problem's): each leaf's entries get steps for its own dtype,
        exact once the perturbed point is cast back to it. ``scale`` multiplies the step.
        """
        x = np.asarray(x)
        flat = x.reshape(-1)
        if leaf_dtypes is None:
            rel, absolute = self._outer_rel_abs(x.dtype, scale)
            steps = np.maximum(rel * np.abs(flat), absolute).astype(x.dtype)
            return (flat + steps) - flat
        steps = np.empty_like(flat)
        for entries, leaf_dtype in leaf_dtypes:
            rel, absolute = self._outer_rel_abs(np.dtype(leaf_dtype), scale)
            moved = flat[entries] + np.maximum(rel * np.abs(flat[entries]), absolute)
            steps[entries] = moved.astype(leaf_dtype).astype(x.dtype) - flat[entries]
        return steps

    def _outer_step_along(self, x, t, leaf_dtypes=None, scale=1.0):
        """The outer step along tangent ``t``, like ``_step`` with the second-order scale."""
        x, t = np.asarray(x), np.asarray(t)
        support = t != 0
        if leaf_dtypes is not None and support.any():
            steps = self._outer_steps(x, leaf_dtypes, scale)
            return float(np.max(steps[support.reshape(-1)])) / float(np.max(np.abs(t)))
        if not support.any():
            return float(self._outer_steps(np.zeros((), x.dtype), scale=scale)[0])
        size = np.max(np.abs(x[support]))
        return float(self._outer_steps(np.asarray(size, x.dtype), scale=scale)[0]) / float(
            np.max(np.abs(t))
        )

    def _inner_derivatives(self, problem):
        """``first(point, ctx) -> the gradient of the scalar f at point, flat``.

        Only for method="complex" (exact to rounding, so an outer central difference
        of it keeps its accuracy).
        """
        directional = self._directional(problem)[0]
        n = problem.x_size
        seeds = np.eye(n, dtype=np.asarray(problem.x).dtype).reshape((n, *problem.x_shape))

        def first(point, ctx):
            return np.concatenate(
                [np.reshape(directional(point, seed, ctx, None)[1], (1,)) for seed in seeds]
            )

        return first

    def _real_hessian(self, problem):
        f, n, leaf_dtypes = self._evaluator(problem), problem.x_size, problem.leaf_dtypes

        def hessian(x, ctx, fx):
            x = np.asarray(x)  # never given to f: every point f gets is a fresh copy of it
            h = self._outer_steps(x, leaf_dtypes).tolist()
            result = np.empty((n, n), dtype=x.dtype)
            if fx is None:
                fx = f(x.copy(), *ctx)
            for i in range(n):
                hi = h[i]
                plus, minus = x.copy(), x.copy()
                plus.flat[i] += hi
                minus.flat[i] -= hi
                result[i, i] = (f(plus, *ctx) - 2 * fx + f(minus, *ctx)) / (hi * hi)
                for j in range(i + 1, n):
                    hj = h[j]
                    pp, pm, mp, mm = plus.copy(), plus.copy(), minus.copy(), minus.copy()
                    pp.flat[j] += hj
                    pm.flat[j] -= hj
                    mp.flat[j] += hj
                    mm.flat[j] -= hj
                    mixed = f(pp, *ctx) - f(pm, *ctx) - f(mp, *ctx) + f(mm, *ctx)
                    result[i, j] = result[j, i] = mixed / (4 * hi * hj)
            return result.reshape(x.shape + x.shape)

        return hessian

    def _complex_hessian(self, problem):
        first = self._inner_derivatives(problem)
        shape, n, leaf_dtypes = problem.x_shape, problem.x_size, problem.leaf_dtypes

        def hessian(x, ctx, fx):
            flat = np.array(x, copy=True).reshape(-1)
            h = self._outer_steps(flat, leaf_dtypes)
            columns = []
            for j in range(n):
                plus, minus = flat.copy(), flat.copy()
                plus[j] += h[j]
                minus[j] -= h[j]
                columns.append(
                    (first(plus.reshape(shape), ctx) - first(minus.reshape(shape), ctx))
                    / (2 * h[j])
                )
            result = np.stack(columns, axis=1)
            return (0.5 * (result + result.T)).astype(flat.dtype).reshape(shape + shape)

        return hessian

    def prepare_hessian(self, problem):
        require_scalar_output(problem, "hessian")
        hessian = (self._complex_hessian if self.method == "complex" else self._real_hessian)(
            problem
        )
        value_and_gradient = self._jacobian(problem, problem.x_shape)
        # The real second differences reuse f(x) when the first-order method evaluated it.
        reuse_value = self.method != "complex"

        def value_gradient_and_hessian(x, *ctx):
            value, gradient = value_and_gradient(x, ctx, True)
            return value, gradient, hessian(x, ctx, value if reuse_value else None)

        return record(
            Impl(
                hessian=lambda x, *ctx: hessian(x, ctx, None),
                value_gradient_and_hessian=value_gradient_and_hessian,
            ),
            1,
        )

    def prepare_hvp(self, problem):
        require_scalar_output(problem, "hvp")
        shape, n, leaf_dtypes = problem.x_shape, problem.x_size, problem.leaf_dtypes
        gradient_at = self._jacobian(problem, shape)
        if self.method == "complex":
            first = self._inner_derivatives(problem)

            def product(x, t, ctx):
                d = self._outer_step_along(x, t, leaf_dtypes)
                return np.reshape((first(x + d * t, ctx) - first(x - d * t, ctx)) / (2 * d), shape)

        else:
            evaluate = self._evaluate(problem)

            # On an entry i in t's support the four points differ along e_i by h + d, so the
            # diagonal entry is a second difference of step h + d: half steps keep it at the
            # Hessian's step (a sparse Hessian's colors are such tangents).
            def product(x, t, ctx):
                flat = np.array(x, copy=True).reshape(-1)
                h = self._outer_steps(flat, leaf_dtypes, 0.5)
                d = self._outer_step_along(x, t, leaf_dtypes, 0.5)
                shift = d * np.reshape(t, (-1,))
                result = np.empty(n, dtype=flat.dtype)
                for i in range(n):
                    plus, minus = flat.copy(), flat.copy()
                    plus[i] += h[i]
                    minus[i] -= h[i]
                    mixed = (
                        evaluate((plus + shift).reshape(shape), ctx)
                        - evaluate((plus - shift).reshape(shape), ctx)
                        - evaluate((minus + shift).reshape(shape), ctx)
                        + evaluate((minus - shift).reshape(shape), ctx)
                    )
                    result[i] = mixed / (4 * h[i] * d)
                return result.reshape(shape)

        def hvp(x, tangents, *ctx):
            return tuple(product(x, t, ctx) for t in tangents)

        def gradient_and_hvp(x, tangents, *ctx):
            return gradient_at(x, ctx, False)[1], hvp(x, tangents, *ctx)

        return record(Impl(hvp=hvp, gradient_and_hvp=gradient_and_hvp), 1)

    def prepare_second_derivative(self, problem):
        value_and_derivative = self._jacobian(problem, problem.spec.shape)
        evaluate = self._evaluate(problem)
        out_dtype = problem.spec.dtype
        if self.method == "complex":
            directional = self._directional(problem)[0]
            one = np.ones((), dtype=np.asarray(problem.x).dtype)

            def second(x, ctx, fx):
                h = self._outer_step_along(x, one)
                plus = directional(x + h, one, ctx, None)[1]
                minus = directional(x - h, one, ctx, None)[1]
                return ((plus - minus) / (2 * h)).astype(out_dtype)

        else:

            def second(x, ctx, fx):
                h = self._outer_step_along(x, np.ones(()))
                if fx is None:
                    fx = evaluate(owned(x), ctx)
                return np.asarray(
                    (evaluate(x + h, ctx) - 2 * fx + evaluate(x - h, ctx)) / (h * h)
                ).astype(out_dtype)

        reuse_value = self.method != "complex"

        def value_derivative_and_second_derivative(x, *ctx):
            value, d = value_and_derivative(x, ctx, True)
            return value, d, second(x, ctx, value if reuse_value else None)

        return Impl(
            second_derivative=lambda x, *ctx: second(x, ctx, None),
            value_derivative_and_second_derivative=value_derivative_and_second_derivative,
        )
