"""AutoAutograd's adapter: ``make_vjp`` and ``make_jvp`` of HIPS autograd (see the package docstring)."""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
from autograd.core import JVPNode, VJPNode, backward_pass, make_jvp, make_vjp, vspace
from autograd.tracer import getval, trace

from ...families import describe, is_array
from ...core.batching import record
from ...core import Adapter, Capabilities, Impl, Spec
from ...core.complex_convention import require_real_loss
from ...core.dtypes import require_real_output
from ...contexts import Cache
from ...errors import UnsupportedError, graph_break


def _in(result, dtype):
    """``result`` in ``dtype`` (x's numpy dtype) where both are real or both complex, differentiably.

    Results keep x's dtype: autograd's own rules promote float32
    tangents to float64 (``log2``'s and ``log10``'s divide by a float64 numpy
    scalar, ``max``'s by an integer count), which the values do not need.
    """
    got = getattr(getval(result), "dtype", None)
    if got is None or got == dtype or got.kind != dtype.kind:
        return result
    # the array-API namespace over autograd.numpy (its rules are defined at its import): only where
    # a cast is due
    from ...families.autograd_namespace import astype

    return astype(result, dtype, copy=False)


def _function(problem):
    """``problem.f``; where a context is a ``di.Cache``, wrapped to explain why f could not write into it."""
    f = problem.f
    if not any(isinstance(c, Cache) for c in problem.contexts):
        return f

    def writing_into_cache(x, *ctx):
        try:
            return f(x, *ctx)
        except (TypeError, ValueError) as error:
            # numpy's words when a box is stored into a numpy array (or converted to a number)
            if "sequence" not in str(error) and "Box" not in str(error):
                raise
            raise UnsupportedError(
                f"contexts: {problem.adapter.backend} cannot differentiate f with a di.Cache it writes into: autograd "
                f"records f on immutable boxes, which no buffer can hold ({type(error).__name__}: {error}); "
                f"compute the values in f without writing them into the Cache (keep them in local variables), or "
                f"use a backend that writes into buffers (di.AutoTorch(), di.AutoFiniteDiff()). If f does not write "
                f"into the Cache, it called a numpy function or float() on x: use xp = di.array_namespace(x)"
            ) from error

    return writing_into_cache


def _bound(f, ctx):
    """``f`` as a function of ``x`` alone, with the context values fixed for this call."""
    if not ctx:
        return f
    return lambda x: f(x, *ctx)


def _breaks(problem):
    """``broken()``: the GraphBreakError for ``problem.f``; None when f is itself a derivative
    (SecondOrder's outer), whose constant outputs are true zeros."""
    if problem.constant_output_is_zero:
        return None
    f, backend = problem.f, problem.adapter.backend
    return lambda: graph_break(f, backend, "autograd")


def _check_output(value):
    if not is_array(getval(value)):
        raise TypeError(
            f"f: expected f to return an array or a number; it returned {describe(value)}"
        )


def _real_for_real_x(end_value, x, f):
    """Refuse a complex-valued f of a real x: autograd learns f's output dtype only as it runs."""
    value = getval(end_value)
    if (
        getattr(value, "dtype", None) is not None
        and value.dtype.kind == "c"
        and np.result_type(x).kind == "f"
    ):
        require_real_output(Spec(np.shape(value), str(value.dtype)), str(np.result_type(x)), f)


def _cut_off(end_value, broken):
    """True when f's output, untraced by autograd, is a graph break: an empty output has no derivative to lose."""
    _check_output(end_value)
    return broken is not None and np.size(getval(end_value)) > 0


def _vjp_of(fun, x, broken):
    """autograd's ``make_vjp``, but raising ``broken()`` where autograd would warn and return zeros."""
    end_value, end_node = trace(VJPNode.new_root(), fun, x)
    _real_for_real_x(end_value, x, fun)
    if end_node is None:
        if _cut_off(end_value, broken):
            raise broken()
        zeros = vspace(x).zeros()
        return (lambda g: zeros), end_value
    return (lambda g: backward_pass(g, end_node)), end_value


def _jvp_of(fun, x, broken):
    """autograd's ``make_jvp``, raising ``broken()`` when f's output does not depend on x."""

    def jvp(g):
        end_value, end_node = trace(JVPNode.new_root(g), fun, x)
        _real_for_real_x(end_value, x, fun)
        if end_node is None:
            if _cut_off(end_value, broken):
                raise broken()
            return end_value, vspace(end_value).zeros()
        return end_value, end_node.g

    return jvp


def _one(dtype):
    """The scalar 1 of ``dtype`` as an immutable numpy scalar (so no result can alias a seed)."""
    return np.dtype(dtype).type(1)


def _check_scalar(value, operator):
    """Raise unless f's value (maybe boxed) is a scalar, as ``operator`` needs.

    gradient, hvp and hessian need no output shape to run, so instead of an
    evaluation at preparation each call checks the value its forward pass computed.
    """
    value = getval(value)
    shape = getattr(value, "shape", None)
    if shape == () or (shape is None and isinstance(value, (float, int))):
        return
    if shape is None:
        raise TypeError(
            f"f: expected f to return an array or a number; it returned {describe(value)}"
        )
    raise ValueError(
        f"f: {operator} needs f to return a scalar; it returns shape {tuple(shape)}"
        + (" (use jacobian for array outputs)" if operator == "gradient" else "")
    )


def _shape_and_dtype(value):
    """Shape and dtype of f's value (maybe boxed), as f's forward pass computed it."""
    shape = getattr(value, "shape", None)
    if shape is not None:
        return tuple(shape), value.dtype
    if isinstance(getval(value), (float, int)):
        return (), np.float64
    raise TypeError(
        f"f: expected f to return an array or a number; it returned {describe(getval(value))}"
    )


def _rows(vjp, shape, dtype, xp):
    """``vjp`` applied to each basis array of ``shape``, stacked with ``xp``: shape ``(size, ...)``.

    Each basis array is fresh, as in ``autograd.jacobian``, since a vjp may
    return its cotangent itself (or a view of it). ``xp`` is numpy, or
    autograd.numpy when x is a box (plain numpy would stack boxes into an
    object array).
    """
    size = 1
    for d in shape:
        size *= d
    if size == 0:
        # an output of size 0 (learned only now, from the forward pass): a Jacobian with no rows
        return np.zeros((0,), dtype=dtype)
    rows = []
    for i in range(size):
        e = np.zeros(size, dtype=dtype)
        e[i] = 1
        rows.append(vjp(e.reshape(shape)))
    return xp.stack(rows)


#: the operators whose preparations sweep seeds (one after the other here)
_SWEEPS = frozenset({"pushforward", "jacobian", "hessian", "hvp"})


def _valued_impl(operator, valued):
    """``Impl.from_valued``, with a sweep's batch size: autograd's seeds go one after the other."""
    impl = Impl.from_valued(operator, valued)
    return record(impl, 1) if operator in _SWEEPS else impl


class AutogradAdapter(Adapter):
    # x may be one of autograd's own boxes, so diffinterface calls nest inside functions that
    # autograd differentiates (results stay boxed); sweeps run one seed after the other (no vmap)
    capabilities = Capabilities.of_framework(
        "autograd",
        "autograd ArrayBox",
        cheap_same_point=True,  # f's pass recorded once (same_point.py)
        # autograd.jacobian's recipe: the output shape comes from the forward pass of the call
        # itself
        output_from_each_call=frozenset({"jacobian"}),
        # autograd's boxes are immutable and no numpy buffer holds them: f cannot write into a
        # di.Cache
        writes_cache=False,
    )

    def primal_value(self, value):
        return getval(value)

    def prepare_same_point(self, operator, problem):
        from .same_point import prepare_same_point

        return prepare_same_point(operator, problem, _vjp_of, _bound, _breaks, _in)

    def is_traced_array_error(self, error):
        # float(), int() or a numpy function autograd does not wrap, called on the box it traces
        return isinstance(error, TypeError) and "Box" in str(error)

    def choose_mode(self, operator, problem):
        # make_jvp re-runs f for each tangent, make_vjp records f once for any
        # number of cotangents: forward only where one tangent is enough (prepare_derivative
        # still goes reverse for a scalar output, which it learns from its first call).
        return (
            "forward"
            if operator in ("derivative", "pushforward", "second_derivative")
            else "reverse"
        )

    # -- primitives -------------------------------------------------------------------------

    def prepare_pullback(self, problem):
        f, broken, x_dtype = _function(problem), _breaks(problem), np.dtype(problem.x_dtype)

        def value_and_pullback(x, cotangents, *ctx):
            vjp, value = _vjp_of(_bound(f, ctx), x, broken)
            return value, tuple(_in(vjp(c), x_dtype) for c in cotangents)

        def pullback(x, cotangents, *ctx):
            vjp, _ = _vjp_of(_bound(f, ctx), x, broken)
            return tuple(_in(vjp(c), x_dtype) for c in cotangents)

        return record(Impl(pullback=pullback, value_and_pullback=value_and_pullback), 1)

    def prepare_pushforward(self, problem):
        f, broken, x_dtype = _function(problem), _breaks(problem), np.dtype(problem.x_dtype)

        def value_and_pushforward(x, tangents, *ctx):
            jvp = _jvp_of(_bound(f, ctx), x, broken)
            results = []
            for t in tangents:
                value, d = jvp(t)
                results.append(d)
            return value, tuple(_in(d, x_dtype) for d in results)

        return _valued_impl("pushforward", value_and_pushforward)

    # -- first-order overrides: one recorded forward pass per call ---------------------------

    def prepare_gradient(self, problem):
        # No evaluation here: f's output is a scalar by contract, checked on each call for free.
        f, broken, x_dtype = _function(problem), _breaks(problem), np.dtype(problem.x_dtype)
        seed = _one(problem.x_dtype)

        def gradient(x, *ctx):
            vjp, value = _vjp_of(_bound(f, ctx), x, broken)
            if getattr(value, "shape", None) != ():
                _check_scalar(value, "gradient")
            return _in(vjp(seed), x_dtype)

        def value_and_gradient(x, *ctx):
            vjp, value = _vjp_of(_bound(f, ctx), x, broken)
            if getattr(value, "shape", None) != ():
                _check_scalar(value, "gradient")
            return value, _in(vjp(seed), x_dtype)

        return Impl(gradient=gradient, value_and_gradient=value_and_gradient)

    def prepare_complex_gradient(self, impl, problem):
        # autograd's backward pass at a complex x itself, a shorter trace than the real view's, gives
        # ∂f/∂Re - i ∂f/∂Im: the conjugate of diffinterface's convention. f's output dtype is learned
        # only as it runs, so each call refuses a complex one, as the real view's f does
        f, broken, x_dtype = _function(problem), _breaks(problem), np.dtype(problem.x_dtype)
        seed = _one(np.empty((), x_dtype).real.dtype)  # f's real value's dtype

        def conjugate_gradient(x, ctx):
            vjp, value = _vjp_of(_bound(f, ctx), x, broken)
            require_real_loss("gradient", getval(value))
            if getattr(value, "shape", None) != ():
                _check_scalar(value, "gradient")
            return value, np.conj(_in(vjp(seed), x_dtype))

        return Impl(
            gradient=lambda x, *ctx: conjugate_gradient(x, ctx)[1],
            value_and_gradient=lambda x, *ctx: conjugate_gradient(x, ctx),
        )

    def prepare_jacobian(self, problem):
        # No evaluation here: the forward pass each call records gives the output's shape.
        f, x_shape, xp = _function(problem), problem.x_shape, problem.xp
        broken, x_dtype = _breaks(problem), np.dtype(problem.x_dtype)

        def value_and_jacobian(x, *ctx):
            vjp, value = _vjp_of(_bound(f, ctx), x, broken)
            y_shape, y_dtype = _shape_and_dtype(value)
            rows = xp.reshape(_rows(vjp, y_shape, y_dtype, xp), y_shape + x_shape)
            return value, _in(rows, x_dtype)

        return _valued_impl("jacobian", value_and_jacobian)

    def prepare_derivative(self, problem):
        # A scalar output is cheapest in reverse mode (one backward pass, autograd.grad's recipe,
        # faster than make_jvp: benchmarks/README.md), any other in
        # forward mode (one tangent pass, not a backward pass per output). autograd learns the
        # output only by running f, so calls record f for reverse mode until one returns a
        # non-scalar; that call's rows come from the same recorded pass (f still runs once) and
        # later calls go forward. The choice changes the speed, never the result.
        f, broken, x_dtype = _function(problem), _breaks(problem), np.dtype(problem.x_dtype)
        tangent = _one(problem.x_dtype)
        reverse = [True]

        def value_and_derivative(x, *ctx):
            fun = _bound(f, ctx)
            if not reverse[0]:
                value, d = _jvp_of(fun, x, broken)(tangent)
                return value, _in(d, x_dtype)
            vjp, value = _vjp_of(fun, x, broken)
            shape, dtype = _shape_and_dtype(value)
            if shape == ():
                return value, _in(vjp(_one(dtype)), x_dtype)
            reverse[0] = False
            # autograd.numpy: the rows are boxes when an outer autograd pass differentiates this
            return value, _in(anp.reshape(_rows(vjp, shape, dtype, anp), shape), x_dtype)

        return _valued_impl("derivative", value_and_derivative)

    # -- first derivatives autograd can differentiate again (SecondOrder pairs) --------------

    def differentiable_value_and_gradient(self, problem):
        # make_vjp inside an outer trace returns the outer's boxes: both results stay
        # differentiable.
        return self.prepare_gradient(problem).value_and_gradient

    def differentiable_value_and_derivative(self, problem):
        return self.prepare_derivative(problem).value_and_derivative

    # -- second order: nested recordings of the same single forward pass --------------------

    @staticmethod
    def _gradient_recording_value(fun, seed, values, operator, broken):
        """The gradient of ``fun`` as a function autograd can differentiate again.

        The value of ``fun`` computed on the way (checked to be a scalar, unboxed)
        is appended to ``values``, so second-order operators get f(x) and its
        gradient from the one forward pass.
        """

        def gradient(z):
            vjp, value = _vjp_of(fun, z, broken)
            _check_scalar(value, operator)
            values.append(getval(value))
            return vjp(seed)

        return gradient

    def prepare_hessian(self, problem):
        f, broken = _function(problem), _breaks(problem)
        seed = _one(problem.x_dtype)
        x_shape, x_dtype, xp = problem.x_shape, np.dtype(problem.x_dtype), problem.xp
        shape = x_shape + x_shape
        gradient_of = self._gradient_recording_value

        def value_gradient_and_hessian(x, *ctx):
            values = []
            # The Hessian is symmetric: its rows are the vjps of the gradient.
            vjp, gradient = make_vjp(
                gradient_of(_bound(f, ctx), seed, values, "hessian", broken), x
            )
            return (
                values[0],
                _in(gradient, x_dtype),
                _in(xp.reshape(_rows(vjp, x_shape, x_dtype, xp), shape), x_dtype),
            )

        return _valued_impl("hessian", value_gradient_and_hessian)

    def prepare_hvp(self, problem):
        f, broken, x_dtype = _function(problem), _breaks(problem), np.dtype(problem.x_dtype)
        seed = _one(problem.x_dtype)
        gradient_of = self._gradient_recording_value

        def gradient_and_hvp(x, tangents, *ctx):
            values = []
            vjp, gradient = make_vjp(gradient_of(_bound(f, ctx), seed, values, "hvp", broken), x)
            return _in(gradient, x_dtype), tuple(_in(vjp(t), x_dtype) for t in tangents)

        return _valued_impl("hvp", gradient_and_hvp)

    def prepare_second_derivative(self, problem):
        f, broken, x_dtype = _function(problem), _breaks(problem), np.dtype(problem.x_dtype)
        tangent = _one(problem.x_dtype)

        def value_derivative_and_second_derivative(x, *ctx):
            fun = _bound(f, ctx)
            values = []

            def derivative(z):
                value, d = _jvp_of(fun, z, broken)(tangent)
                values.append(value)
                return d

            d, dd = make_jvp(derivative, x)(tangent)
            return getval(values[0]), _in(d, x_dtype), _in(dd, x_dtype)

        return _valued_impl("second_derivative", value_derivative_and_second_derivative)
