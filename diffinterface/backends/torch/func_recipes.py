"""Every operator as ``torch.func``'s transforms of f: results an outer ``torch.autograd`` or ``torch.func``
transform differentiates or batches again (:mod:`.nesting` decides when they run).

Nothing here detaches: x, the seeds and the contexts are used as given, and
the value and every derivative keep their graph. Functions that write into a
buffer (a ``di.Cache``, the two-argument ``y``) are refused by ``torch.func``:
under an outer ``torch.autograd`` their gradient and derivative are backward
passes with ``create_graph=True`` (:mod:`.second_order`'s recorded recipes);
anything else raises an :class:`~diffinterface.UnsupportedError` that names the
way around.
"""

from __future__ import annotations

import torch

from ...core import Impl
from ...core.operator_table import OPERATORS
from ...errors import UnsupportedError, function_name
from .autodiff import _with_value
from .boundary import _as_output, _Boundary, _live_contexts
from .second_order import (
    _recorded_value_and_derivative,
    _recorded_value_and_gradient,
    _recording_leaf,
)

_func = torch.func
_ones_like = torch.ones_like
_enable_grad = torch.enable_grad
_current_level = torch._C._functorch.maybe_current_level
_compiling = torch.compiler.is_compiling


def _bound(fn, ctx):
    """``z -> fn(z, *ctx)`` as a tensor."""

    def bound(z):
        y = fn(z, *ctx)
        return y if isinstance(y, torch.Tensor) else _as_output(y, z)

    return bound


def _gradient(adapter, problem, fn):
    tree = problem.tree
    leaves_of, unflatten = (None, None) if tree is None else (tree.array_leaves, tree.unflatten)

    def of_leaves(ctx):
        """``leaves -> f(tree, *ctx)`` as a tensor (a number returned by f made one like the first leaf)."""

        def of(leaves):
            y = fn(unflatten(leaves), *ctx)
            return y if isinstance(y, torch.Tensor) else _as_output(y, leaves[0])

        return of

    def under_transform(x, ctx):
        ctx = _live_contexts(ctx)
        if tree is None:
            gradient, value = _func.grad_and_value(_bound(fn, ctx))(x)
            return value, gradient
        gradient, value = _func.grad_and_value(of_leaves(ctx))(list(leaves_of(x)))
        return value, unflatten(gradient)

    def recorded(x, ctx):
        # under an outer torch.autograd alone, a backward pass that records itself gives the same
        # connected results as torch.func's, with none of its wrapping of every tensor
        ctx = _live_contexts(ctx)
        with _enable_grad():
            if tree is None:
                z = _recording_leaf(x)
                y = _bound(fn, ctx)(z)
                return y, _connected_gradients(y, [z])[0]
            # one alias per place: a tensor at two places of x gets a partial derivative at each
            leaves = [_alias(leaf) for leaf in leaves_of(x)]
            y = of_leaves(ctx)(leaves)
            return y, unflatten(_connected_gradients(y, leaves))

    def value_and_gradient(x, *ctx):
        if _current_level() is not None or _compiling():
            return under_transform(x, ctx)
        return recorded(x, ctx)

    return Impl.from_valued("gradient", value_and_gradient)


def _alias(leaf):
    """``leaf`` as a tensor of its own in the graph: a view, connected to an outer graph that records
    it, else a leaf that requires grad (``clone`` keeps a dual tangent; ``detach`` would not)."""
    return leaf.view_as(leaf) if leaf.requires_grad else leaf.clone().requires_grad_()


def _connected_gradients(y, leaves):
    """The gradients of ``y`` at ``leaves``, recorded for an outer derivative; zeros where y does not
    depend on a leaf, as ``torch.func.grad`` gives."""
    if not y.requires_grad:
        return [torch.zeros_like(leaf) for leaf in leaves]
    return list(
        torch.autograd.grad(y, leaves, create_graph=True, allow_unused=True, materialize_grads=True)
    )


def _pullback(adapter, problem, fn):
    def value_and_pullback(x, cotangents, *ctx):
        value, vjp = _func.vjp(_bound(fn, _live_contexts(ctx)), x)
        return value, tuple(vjp(c)[0] for c in cotangents)

    return Impl.from_valued("pullback", value_and_pullback)


def _pushforward(adapter, problem, fn):
    def value_and_pushforward(x, tangents, *ctx):
        bound = _bound(fn, _live_contexts(ctx))
        results = [_func.jvp(bound, (x,), (t,)) for t in tangents]
        return results[0][0], tuple(tangent for _, tangent in results)

    return Impl.from_valued("pushforward", value_and_pushforward)


def _derivative(adapter, problem, fn):
    def value_and_derivative(x, *ctx):
        return _func.jvp(_bound(fn, _live_contexts(ctx)), (x,), (_ones_like(x),))

    return Impl.from_valued("derivative", value_and_derivative)


def _jacobian(adapter, problem, fn):
    transform = _func.jacfwd if adapter.forward_only else _func.jacrev

    def value_and_jacobian(x, *ctx):
        jacobian, value = transform(_with_value(_bound(fn, _live_contexts(ctx))), has_aux=True)(x)
        return value, jacobian

    return Impl.from_valued("jacobian", value_and_jacobian)


def _second_derivative(adapter, problem, fn):
    def value_derivative_and_second_derivative(x, *ctx):
        bound, ones = _bound(fn, _live_contexts(ctx)), _ones_like(x)

        def value_and_derivative(z):
            return _func.jvp(bound, (z,), (ones,))

        (value, derivative), (_, second) = _func.jvp(value_and_derivative, (x,), (ones,))
        return value, derivative, second

    return Impl(
        value_derivative_and_second_derivative=value_derivative_and_second_derivative,
        second_derivative=lambda x, *ctx: value_derivative_and_second_derivative(x, *ctx)[2],
    )


def _hvp(adapter, problem, fn):
    def gradient_and_hvp(x, tangents, *ctx):
        gradient = _func.grad(_bound(fn, _live_contexts(ctx)))
        results = [_func.jvp(gradient, (x,), (t,)) for t in tangents]
        return results[0][0], tuple(product for _, product in results)

    return Impl.from_valued("hvp", gradient_and_hvp)


def _hessian(adapter, problem, fn):
    def value_gradient_and_hessian(x, *ctx):
        grad_and_value = _func.grad_and_value(_bound(fn, _live_contexts(ctx)))

        def gradient_with_both(z):
            gradient, value = grad_and_value(z)
            return gradient, (gradient, value)

        hessian, (gradient, value) = _func.jacfwd(gradient_with_both, has_aux=True)(x)
        return value, gradient, hessian

    return Impl(
        value_gradient_and_hessian=value_gradient_and_hessian,
        hessian=lambda x, *ctx: value_gradient_and_hessian(x, *ctx)[2],
    )


_RECIPES = {
    "gradient": _gradient,
    "pullback": _pullback,
    "pushforward": _pushforward,
    "derivative": _derivative,
    "jacobian": _jacobian,
    "second_derivative": _second_derivative,
    "hvp": _hvp,
    "hessian": _hessian,
}

#: the recipes that record a function's writes (backward passes with create_graph=True)
_RECORDED = {"gradient": _recorded_value_and_gradient, "derivative": _recorded_value_and_derivative}


def nested_impl(adapter, operator, problem, inside):
    """The ``torch.func`` :class:`~diffinterface.core.Impl` of ``operator`` (see the module docstring);
    ``inside``: prepared inside a ``torch.func`` transform."""
    b = _Boundary(problem)
    if any(c.kind == "Cache" for c in problem.contexts):
        return _cache_impl(adapter, operator, problem, b, inside)
    impl = _RECIPES[operator](adapter, problem, b.fn)
    if problem.y is None:
        return impl
    # the two-argument y: a buffer made per call, which torch.func's grad, jvp and vjp let f write
    # into, and vmap does not
    return Impl(
        **{name: _explained_vmap(getattr(impl, name), adapter, problem) for name in vars(impl)}
    )


def _explained_vmap(method, adapter, problem):
    def explained(*args):
        try:
            return method(*args)
        except RuntimeError as error:
            if "vmap" not in str(error):
                raise
            raise _unsupported(adapter, problem, "the two-argument y") from error

    return explained


def _cache_impl(adapter, operator, problem, b, inside):
    """For f writing into a ``di.Cache``: the recorded recipe under an outer ``torch.autograd``, else an
    Impl whose methods raise the explanation (a fast call never reaches them)."""
    recorded = _RECORDED.get(operator)
    if recorded is not None and not inside:
        if operator == "gradient":
            valued = recorded(b.fn)
        else:
            valued = recorded(b.fn, problem.spec.shape)
        return Impl.from_valued(operator, lambda x, *ctx: valued(x, *_live_contexts(ctx)))

    def refuse(*args):
        raise _unsupported(adapter, problem, "a di.Cache", operator)

    return Impl(**{name: refuse for name in OPERATORS[operator].methods})


def _unsupported(adapter, problem, buffer, operator=None):
    what = f" the {operator} of" if operator else ""
    return UnsupportedError(
        f"f: {adapter.backend!r} cannot compute{what} {function_name(problem.f)} inside an outer "
        "derivative (a torch.func transform such as vmap, grad, jacrev or jacfwd, or a call whose x, "
        f"seeds, contexts or closed-over tensors require grad): f writes into {buffer}, which "
        "torch.func's transforms refuse there. Pass a function that returns its output instead, or "
        "call under torch.no_grad() for results detached from the outer graph."
    )
