"""The :class:`TorchAdapter`: output shapes, the primitives and the gradient; whole Jacobians and derivatives
are :class:`~.jacobians.TorchJacobians`', second order :class:`~.second_order.TorchSecondOrder`'s."""

from __future__ import annotations

import torch

from ...core import Adapter, Capabilities, Impl, require_scalar_output
from ...core.batching import record
from .autodiff import _dual_jvp, _dual_jvps, _traced, _vjp, _vjps, _vmapped_jvp
from .aux import native_aux
from .batching import sweep_batch
from .boundary import _as_output, _Boundary, _contexts, _primal_tensor, _Tensor
from .graph_watch import learned_output_spec
from .jacobians import TorchJacobians
from .nesting import may_nest, nestable
from .second_order import TorchSecondOrder

#: fragments of torch's messages when f converts the tensor it is differentiated at (torch 2.13)
_TRACED_ARRAY_MESSAGES = (
    "numpy() on Tensor that requires grad",
    ".item()",
    "data-dependent",
    "Cannot access data pointer",
    "Cannot access storage",
)


def _differentiable_leaves(leaves, recording):
    """Tensors to differentiate at: each leaf tensor that already requires grad (a model's parameters)
    as it is, as ``torch.autograd.grad(loss, model.parameters())`` does (its ``.grad`` stays
    untouched), any other as a fresh alias marked ``requires_grad`` (``recording``).

    A tensor found at two places of the tree gets one alias per place: its partial derivatives,
    not their sum.
    """
    tensors = [leaf if leaf.requires_grad and leaf.is_leaf else recording(leaf) for leaf in leaves]
    if len(set(map(id, tensors))) != len(tensors):
        return [recording(leaf) for leaf in leaves]
    return tensors


class TorchAdapter(TorchJacobians, TorchSecondOrder, Adapter):
    """Adapter for :class:`~diffinterface.AutoTorch`; see the module docstring for the recipes."""

    # sweeps run in chunks of the selector's batch_size (batching.py)
    capabilities = Capabilities.of_framework(
        "torch",
        "torch tensor recording gradients",
        inplace=True,
        numpy_results_are_arrays=True,  # every numpy result comes from np.asarray
        cheap_same_point=True,  # f's pass and the gradient's graph, recorded once (same_point.py)
    )

    def __init__(self, backend):
        super().__init__(backend)
        self.forward_only = backend.mode == "forward"
        self.reverse_only = backend.mode == "reverse"
        # One backward pass over the tree's leaves: no ravel per call (forward mode and compile go
        # flat).
        tree_gradient = not (self.forward_only or backend.compile)
        self.capabilities = type(self).capabilities.replace(
            pytrees=frozenset({"gradient"}) if tree_gradient else frozenset()
        )

    def is_traced_array_error(self, error):
        # numpy() / item() on a tensor that requires grad or inside torch.func's transforms
        text = str(error)
        return isinstance(error, RuntimeError) and any(
            part in text for part in _TRACED_ARRAY_MESSAGES
        )

    def prepare(self, operator, problem):
        # the fast recipe, or torch.func's where a call takes part in an outer derivative
        return nestable(self, operator, problem, super().prepare)

    def prepare_same_point(self, operator, problem):
        from .same_point import prepare_same_point

        # a graph recorded once cannot stay connected to an outer one: the ordinary preparation
        return None if may_nest(problem) else prepare_same_point(operator, problem)

    # with has_aux: what f received or computed, unwrapped from torch's recording (boundary.py)
    primal_value = staticmethod(_primal_tensor)

    # -- output shape -----------------------------------------------------------------------------

    def output_spec(self, problem):
        return learned_output_spec(self, problem)

    def _tree_gradient(self, problem, b):
        """The gradient at a pytree x: one backward pass over all its leaves (``autograd.grad``)."""
        tree, recording, back, back_value, f = problem.tree, b.recording, b.back, b.back_value, b.fn
        leaves_of, unflatten = tree.array_leaves, tree.unflatten
        if problem.family == "torch":

            def differentiable(leaves):
                return _differentiable_leaves(leaves, recording)
        else:

            def differentiable(leaves):
                return [recording(leaf) for leaf in leaves]

        def value_and_gradient(x, *ctx):
            if ctx:
                ctx = _contexts(ctx)
            leaves = differentiable(leaves_of(x))
            with torch.enable_grad():
                y = f(unflatten(leaves), *ctx)
            if not isinstance(y, _Tensor):
                y = _as_output(y, leaves[0])
            grads = (
                torch.autograd.grad(y, leaves, allow_unused=True, materialize_grads=True)
                if y.requires_grad
                else [torch.zeros_like(leaf) for leaf in leaves]
            )
            return back_value(y), unflatten([back(g) for g in grads])

        return Impl.from_valued("gradient", value_and_gradient)

    # -- primitives -------------------------------------------------------------------------------

    def prepare_pullback(self, problem):
        b = _Boundary(problem)
        if self.forward_only:
            return self._contracted_jacobian(problem, b, "pullback")
        recording, as_tensor, back, back_value, fn = (
            b.recording,
            b.as_tensor,
            b.back,
            b.back_value,
            b.fn,
        )
        broken = b.broken

        if len(problem.tangents) == 1:

            def value_and_pullback(x, cotangents, *ctx):
                if ctx:
                    ctx = _contexts(ctx)
                xr = recording(x)
                y = _traced(fn, xr, ctx)
                return back_value(y), (back(_vjp(y, xr, as_tensor(cotangents[0]), broken)),)

            def pullback(x, cotangents, *ctx):
                if ctx:
                    ctx = _contexts(ctx)
                xr = recording(x)
                return (back(_vjp(_traced(fn, xr, ctx), xr, as_tensor(cotangents[0]), broken)),)

            return Impl(value_and_pullback=value_and_pullback, pullback=pullback)

        chunk, chosen = sweep_batch(self, b, problem, len(problem.tangents))

        def value_and_pullback(x, cotangents, *ctx):
            if ctx:
                ctx = _contexts(ctx)
            xr = recording(x)
            y = _traced(fn, xr, ctx)
            seeds = torch.stack([as_tensor(c) for c in cotangents])
            return back_value(y), tuple(back(r) for r in _vjps(y, xr, seeds, broken, chunk=chunk))

        return record(Impl.from_valued("pullback", value_and_pullback), chosen)

    def prepare_pushforward(self, problem):
        b = _Boundary(problem)
        if self.reverse_only:
            return self._contracted_jacobian(problem, b, "pushforward")
        as_tensor, back_value, fn = b.as_tensor, b.back_value, b.fn
        broken = b.broken
        chosen = 1
        if len(problem.tangents) == 1:

            def value_and_pushforward(x, tangents, *ctx):
                if ctx:
                    ctx = _contexts(ctx)
                value, tangent = _dual_jvp(fn, as_tensor(x), as_tensor(tangents[0]), ctx, broken)
                return back_value(value), (back_value(tangent),)

        elif b.writes:

            def value_and_pushforward(x, tangents, *ctx):
                if ctx:
                    ctx = _contexts(ctx)
                value, results = _dual_jvps(
                    fn, as_tensor(x), [as_tensor(t) for t in tangents], ctx, broken
                )
                return back_value(value), tuple(back_value(r) for r in results)

        else:
            chunk, chosen = sweep_batch(self, b, problem, len(problem.tangents))
            batched = _vmapped_jvp(fn, len(problem.ctx), b.broken, chunk, native_aux(problem))

            def value_and_pushforward(x, tangents, *ctx):
                if ctx:
                    ctx = _contexts(ctx)
                seeds = torch.stack([as_tensor(t) for t in tangents])
                value, results = batched(x, as_tensor(x), seeds, *ctx)
                return back_value(value), tuple(back_value(r) for r in results)

        return record(Impl.from_valued("pushforward", value_and_pushforward), chosen)

    def _contracted_jacobian(self, problem, b, operator):
        """The primitive of the other mode: the Jacobian in this mode, contracted with each seed.

        ``pushforward`` under ``mode="reverse"`` (batched backward passes over the
        output basis) and ``pullback`` under ``mode="forward"`` (``vmap(jvp)`` over
        the input basis), one evaluation of ``f`` per call whatever the batch.
        """
        as_tensor, back_value = b.as_tensor, b.back_value
        spec = problem.spec
        m, n = spec.size, problem.x_size
        if operator == "pushforward":
            run = self._reverse_jacobian_impl(problem, b, "jacobian", raw=True)
            out_shape, flat_seed = spec.shape, n

            def contract(jac, seeds):
                return seeds @ jac.reshape(m, n).T
        else:
            run = self._forward_jacobian_impl(problem, b, "jacobian", raw=True)
            out_shape, flat_seed = problem.x_shape, m

            def contract(jac, seeds):
                return seeds @ jac.reshape(m, n)

        def value_and_contracted(x, seeds, *ctx):
            value, jac = run(x, ctx)
            stacked = torch.stack([as_tensor(s).reshape(flat_seed) for s in seeds]).to(jac.dtype)
            results = contract(jac, stacked)
            return back_value(value), tuple(back_value(r.reshape(out_shape)) for r in results)

        return Impl.from_valued(operator, value_and_contracted)

    # -- first-order overrides --------------------------------------------------------------------

    def prepare_gradient(self, problem):
        require_scalar_output(problem, "gradient")
        b = _Boundary(problem)
        recording, back, back_value, fn = b.recording, b.back, b.back_value, b.fn
        broken = b.broken
        if self.forward_only:
            return self._forward_jacobian_impl(problem, b, "gradient")
        if self.backend.compile:
            return self._compiled_gradient(problem, b)
        if problem.tree is not None:
            return self._tree_gradient(problem, b)

        def gradient(x, *ctx):
            if ctx:
                ctx = _contexts(ctx)
            xr = recording(x)
            return back(_vjp(_traced(fn, xr, ctx), xr, None, broken))

        def value_and_gradient(x, *ctx):
            if ctx:
                ctx = _contexts(ctx)
            xr = recording(x)
            y = _traced(fn, xr, ctx)
            return back_value(y), back(_vjp(y, xr, None, broken))

        return Impl(gradient=gradient, value_and_gradient=value_and_gradient)

    def prepare_complex_gradient(self, impl, problem):
        # backward() at a complex leaf gives ∂f/∂Re + i ∂f/∂Im (the conjugate Wirtinger derivative
        # times two), diffinterface's convention, in a shorter graph than the real view's; forward
        # mode and torch.compile keep the real view
        if self.forward_only or self.backend.compile:
            return None
        return self.prepare("gradient", problem)

    def _compiled_gradient(self, problem, b):
        """``compile=True``: ``torch.compile(torch.func.grad_and_value(f))``, compiled at preparation."""
        as_tensor, back_value, fn = b.as_tensor, b.back_value, b.fn

        def gradient_and_value(x, *ctx):
            return torch.func.grad_and_value(lambda z: fn(z, *ctx))(x)

        compiled = torch.compile(gradient_and_value)
        compiled(
            as_tensor(problem.x), *_contexts(problem.ctx)
        )  # compile now, not on the first call

        def value_and_gradient(x, *ctx):
            if ctx:
                ctx = _contexts(ctx)
            g, value = compiled(as_tensor(x), *ctx)
            return back_value(value), back_value(g)

        return Impl.from_valued("gradient", value_and_gradient)
