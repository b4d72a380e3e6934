"""AutoFiniteDiff: finite differences on numpy arrays (forward mode).

Methods and their cost for ``n`` inputs (evaluations of ``f`` per call):

==========  =========================  ===================================
method      gradient / jacobian        value_and_gradient / value_and_jacobian
==========  =========================  ===================================
forward     n + 1                      n + 1 (f(x) is reused)
central     2n                         2n + 1
complex     n (complex step)           n (the value is the real part)
adaptive    many (scipy.differentiate, error-controlled Richardson)
==========  =========================  ===================================

The step along a direction ``t`` is ``h = max(rel_step * max|x_i|, abs_step) / max|t_i|``
over the entries where ``t`` is non-zero, with ``rel_step`` defaulting to
``sqrt(eps)`` (forward), ``cbrt(eps)`` (central) or ``eps`` (complex) of x's
dtype, and ``abs_step`` to ``rel_step``. ``x`` is never modified: each
perturbation is made on a fresh copy.
"""

from __future__ import annotations

import numpy as np

from ..operators._core import Spec, require_scalar_output
from .base import Adapter, Impl

_DEFAULT_POWER = {"forward": 1 / 2, "central": 1 / 3, "complex": 1.0, "adaptive": 1 / 3}


class FiniteDiffAdapter(Adapter):
    mode = "forward"
    inplace = True
    families = ("numpy",)

    def __init__(self, backend):
        super().__init__(backend)
        self.method = backend.method
        if self.method == "adaptive":
            try:
                import scipy.differentiate  # noqa: F401
            except ImportError as error:
                raise ImportError(
                    "AutoFiniteDiff(method='adaptive') uses scipy.differentiate (scipy >= 1.15), which is "
                    "not installed: pip install 'diffinterface[scipy]'",
                    name="scipy",
                ) from error

    def output_spec(self, problem):
        if problem.y is not None:
            return Spec.of(problem.y)
        return Spec.of(problem.f(problem.x, *problem.ctx))

    # -- building blocks -------------------------------------------------------------------

    def _evaluate(self, problem, dtype=None):
        """``evaluate(x, ctx) -> f(x)`` as a fresh numpy array, for one- or two-argument f."""
        f = problem.f
        if problem.y is None:
            if dtype is None:
                return lambda x, ctx: f(x, *ctx)
            return lambda x, ctx: np.asarray(f(x, *ctx))
        shape, y_dtype = problem.y.shape, dtype or problem.y.dtype

        def evaluate(x, ctx):
            buffer = np.zeros(shape, dtype=y_dtype)
            f(buffer, x, *ctx)
            return buffer

        return evaluate

    def _step(self, x, t):
        """Step along tangent ``t`` at ``x``, scaled to x's dtype and magnitude."""
        dtype = np.asarray(x).dtype
        rel = self.backend.rel_step
        if rel is None:
            rel = float(np.finfo(dtype).eps) ** _DEFAULT_POWER[self.method]
        absolute = self.backend.abs_step if self.backend.abs_step is not None else rel
        support = np.asarray(t) != 0
        scale = float(np.max(np.abs(np.asarray(x)[support]))) if support.any() else 0.0
        t_max = float(np.max(np.abs(t))) if support.any() else 1.0
        return max(rel * scale, absolute) / t_max

    def _directional(self, problem):
        """``directional(x, t, ctx, fx) -> (value or None, J(x) @ t)``; fx is f(x) or None."""
        method = self.method
        evaluate = self._evaluate(problem)
        if method == "complex":
            complex_type = np.result_type(problem.x_dtype, np.complex64)
            evaluate_complex = self._evaluate(problem, dtype=complex_type)
            out_dtype = problem.spec.dtype

            def directional(x, t, ctx, fx):
                h = self._step(x, t)
                fz = evaluate_complex(np.asarray(x, dtype=complex_type) + (1j * h) * t, ctx)
                return np.real(fz).astype(out_dtype), (np.imag(fz) / h).astype(out_dtype)

        elif method == "forward":

            def directional(x, t, ctx, fx):
                h = self._step(x, t)
                return fx, (evaluate(x + h * t, ctx) - fx) / h

        elif method == "central":

            def directional(x, t, ctx, fx):
                h = self._step(x, t)
                return fx, (evaluate(x + h * t, ctx) - evaluate(x - h * t, ctx)) / (2 * h)

        else:  # adaptive
            from scipy.differentiate import jacobian as scipy_jacobian

            shape = problem.spec.shape

            def directional(x, t, ctx, fx):
                def along(s):  # s: (1, *batch) -> (m, *batch)
                    batch = s.shape[1:]
                    flat = s.reshape(1, -1)
                    values = [np.reshape(evaluate(x + flat[0, k] * t, ctx), (-1,)) for k in range(flat.shape[1])]
                    return np.stack(values, axis=-1).reshape((-1, *batch))

                result = scipy_jacobian(along, np.zeros(1, dtype=np.asarray(x).dtype))
                return fx, np.reshape(result.df[:, 0], shape).astype(problem.spec.dtype)

        needs_value = method == "forward"
        return directional, evaluate, needs_value

    # -- primitive ----------------------------------------------------------------------------

    def prepare_pushforward(self, problem):
        directional, evaluate, needs_value = self._directional(problem)
        complex_value = self.method == "complex"

        def pushforward(x, tangents, *ctx):
            fx = evaluate(x, ctx) if needs_value else None
            return tuple(directional(x, t, ctx, fx)[1] for t in tangents)

        def value_and_pushforward(x, tangents, *ctx):
            fx = None if complex_value else evaluate(x, ctx)
            results = []
            for t in tangents:
                value, d = directional(x, t, ctx, fx)
                results.append(d)
            return (value if complex_value else fx), tuple(results)

        return Impl(pushforward=pushforward, value_and_pushforward=value_and_pushforward)

    # -- overrides with exact evaluation counts -------------------------------------------------

    def _columns(self, problem):
        """``columns(x, ctx, want_value) -> (value, [J @ e_i for each basis e_i])``."""
        directional, evaluate, needs_value = self._directional(problem)
        n = problem.x_size
        dtype = np.asarray(problem.x).dtype
        seeds = np.eye(n, dtype=dtype).reshape((n, *problem.x_shape))
        complex_value = self.method == "complex"

        def columns(x, ctx, want_value):
            fx = evaluate(x, ctx) if needs_value or (want_value and not complex_value) else None
            value, parts = fx, []
            for seed in seeds:
                v, d = directional(x, seed, ctx, fx)
                parts.append(d)
                if complex_value:
                    value = v
            return value, parts

        return columns

    def prepare_derivative(self, problem):
        columns = self._columns(problem)

        def value_and_derivative(x, *ctx):
            value, (d,) = columns(x, ctx, True)
            return value, d

        return Impl(derivative=lambda x, *ctx: columns(x, ctx, False)[1][0], value_and_derivative=value_and_derivative)

    def prepare_gradient(self, problem):
        require_scalar_output(problem, "gradient")
        columns = self._columns(problem)
        shape = problem.x_shape

        def value_and_gradient(x, *ctx):
            value, parts = columns(x, ctx, True)
            return value, np.reshape(np.stack(parts), shape)

        def gradient(x, *ctx):
            return np.reshape(np.stack(columns(x, ctx, False)[1]), shape)

        return Impl(gradient=gradient, value_and_gradient=value_and_gradient)

    def prepare_jacobian(self, problem):
        columns = self._columns(problem)
        shape = problem.spec.shape + problem.x_shape

        def value_and_jacobian(x, *ctx):
            value, parts = columns(x, ctx, True)
            return value, np.reshape(np.stack(parts, axis=-1), shape)

        def jacobian(x, *ctx):
            return np.reshape(np.stack(columns(x, ctx, False)[1], axis=-1), shape)

        return Impl(jacobian=jacobian, value_and_jacobian=value_and_jacobian)
