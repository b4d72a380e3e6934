"""The TensorFlow adapter: TensorFlow's recipes (``recipes.py``), traced once at preparation (``boundary.py``)."""

from __future__ import annotations

import weakref

import numpy as np
import tensorflow as tf

from ...core import Adapter, Capabilities, Impl, Spec, require_scalar_output
from . import recipes
from .batching import Sweep
from .boundary import Boundary, as_output, connected, forward_mode
from .numpy_rules import promoting

#: fragments of TensorFlow's messages when f converts the tensor it is differentiated at (TensorFlow
#: 2.21)
_TRACED_ARRAY_MESSAGES = (
    "symbolic tf.Tensor",
    "SymbolicTensor",
    "Symbolic Tensor",
    "as a Python `bool`",
    "out of scope",
    "numpy() is only available",
)


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _array(tensor):
    """``tensor`` as a NumPy array, 0-d ones included (``.numpy()`` gives those as NumPy scalars)."""
    return np.asarray(tensor.numpy())


def _distinct_variables(leaves):
    """Positions of the leaves that are ``tf.Variable`` objects, each found once: a traced function takes them as
    variables (read inside the graph, no eager read per call). A variable at two places goes in as
    tensors: traced as one aliased variable, its places would share one gradient, not each its own."""
    variables = [i for i, leaf in enumerate(leaves) if isinstance(leaf, tf.Variable)]
    counts: dict[int, int] = {}
    for i in variables:
        counts[id(leaves[i])] = counts.get(id(leaves[i]), 0) + 1
    return tuple(i for i in variables if counts[id(leaves[i])] == 1)


#: the reverse-mode gradients of an array x this adapter prepared, for
#: :meth:`TensorFlowAdapter.prepare_complex_gradient`
_REVERSE_GRADIENTS: "weakref.WeakSet[Impl]" = weakref.WeakSet()


class TensorFlowAdapter(Adapter):
    """Adapter for :class:`~diffinterface.AutoTensorFlow`; see the package docstring for the recipes."""

    # every sweep runs in batches of the selector's batch_size (batching.Sweep), inside the one
    # traced function
    capabilities = Capabilities.of_framework(
        "tensorflow",
        "TensorFlow tensor",
        # TensorFlow's tensors are immutable and a traced function cannot write into a numpy buffer
        writes_cache=False,
        # TensorFlow's own tape.jacobian traces faster than a vectorized ForwardAccumulator and
        # runs as fast or faster
        square_jacobian_mode="reverse",
        # with has_aux, a traced function returns aux's tensors too (aux.py) and an eager call takes
        # aux from its evaluation at x: no operator evaluates f again for aux (aux_evaluated_again
        # stays empty)
    )

    def __init__(self, backend):
        super().__init__(backend)
        # a prepared f is traced by tf.function without values (autograph turns tensor branches into
        # tf.cond); a reverse gradient takes a pytree x as its leaves, one tape watching them all: no
        # ravel per call (forward mode goes flat, over x's basis)
        self.capabilities = type(self).capabilities.replace(
            traces_without_values=backend.jit,
            pytrees=frozenset() if backend.mode == "forward" else frozenset({"gradient"}),
        )

    def is_traced_array_error(self, error):
        text = str(error)
        return isinstance(
            error, (TypeError, AttributeError, NotImplementedError, ValueError)
        ) and any(part in text for part in _TRACED_ARRAY_MESSAGES)

    # -- output and evaluation --------------------------------------------------------------------

    def output_spec(self, problem):
        b = Boundary(self, problem)
        with promoting():
            y = b.bound()(b.x_in(problem.x), *problem.ctx)
        return Spec(tuple(y.shape), y.dtype.name)

    def prepare_evaluation(self, problem):
        b = Boundary(self, problem)
        f, x_in, out = b.bound(), b.x_in, b.out

        def value(x, *ctx):
            with promoting():
                return out(f(x_in(x), *ctx))

        return value

    # -- the shapes of methods --------------------------------------------------------------------

    @staticmethod
    def _seeded(b, operator, core, values):
        """The Impl of a seeded operator (pushforward, pullback, hvp) from ``core(x, seeds, *ctx)``:
        ``values`` results before the products (1: f(x); 2: f(x) and the gradient). One seed goes in and
        comes out as a tensor (``core(x, seed, *ctx)``), a batch as tuples."""
        one = len(b.problem.tangents) == 1
        compiled = b.compiled(core, *b.example(with_seeds=True))
        combined = "gradient_and_hvp" if operator == "hvp" else "value_and_" + operator
        x_in, out = b.x_in, b.out
        if one and b.passes_through:

            def valued(x, seeds, *ctx):
                results = compiled(x, seeds[0], *ctx)
                return results[values - 1], (results[-1],)

            def alone(x, seeds, *ctx):
                return (compiled(x, seeds[0], *ctx)[-1],)
        elif one:
            seed_in = b.seed_in

            def valued(x, seeds, *ctx):
                results = compiled(x_in(x), seed_in(seeds[0]), *ctx)
                return out(results[values - 1]), (out(results[-1]),)

            def alone(x, seeds, *ctx):
                return (out(compiled(x_in(x), seed_in(seeds[0]), *ctx)[-1]),)
        elif b.passes_through:

            def valued(x, seeds, *ctx):
                results = compiled(x, seeds, *ctx)
                return results[values - 1], results[-1]

            def alone(x, seeds, *ctx):
                return compiled(x, seeds, *ctx)[-1]
        else:
            seed_in = b.seed_in

            def valued(x, seeds, *ctx):
                results = compiled(x_in(x), tuple(map(seed_in, seeds)), *ctx)
                return out(results[values - 1]), tuple(out(r) for r in results[-1])

            def alone(x, seeds, *ctx):
                return tuple(
                    out(r) for r in compiled(x_in(x), tuple(map(seed_in, seeds)), *ctx)[-1]
                )

        return b.handing_over(Impl(**{operator: alone, combined: valued}))

    @staticmethod
    def _unseeded(b, names, core):
        """The Impl of ``names`` = (alone, combined) from ``core(x, *ctx) -> results``; the alone form is the last."""
        compiled = b.compiled(core, *b.example())
        if b.passes_through:
            return b.handing_over(Impl.from_valued(names[0], compiled))
        x_in, out = b.x_in, b.out

        def combined(x, *ctx):
            return tuple(out(r) for r in compiled(x_in(x), *ctx))

        def alone(x, *ctx):
            return out(compiled(x_in(x), *ctx)[-1])

        return b.handing_over(Impl(**{names[0]: alone, names[1]: combined}))

    @staticmethod
    def _scalar(b, impl):
        """``impl`` of an operator that needs a scalar f, once that is checked: the trace learned f's output
        (:meth:`.boundary.Boundary.learned_output`, which raised there for another shape) or, where it could not
        (an eager preparation, a shape known only at run time), one evaluation learns it now."""
        require_scalar_output(b.problem, b.scalar)
        return impl

    # -- primitives -------------------------------------------------------------------------------

    def prepare_pushforward(self, problem):
        b = Boundary(self, problem)
        k = len(problem.tangents)
        s = Sweep(self, b, k, forward=True)
        return s.record(
            self._seeded(
                b,
                "pushforward",
                recipes.pushforwards(b.recorded(), k, b.broken, s.vmap, s.parallel),
                1,
            )
        )

    def prepare_pullback(self, problem):
        b = Boundary(self, problem)
        k = len(problem.tangents)
        s = Sweep(self, b, k, forward=False)
        return s.record(
            self._seeded(b, "pullback", recipes.pullbacks(b.recorded(), k, b.broken, s.parallel), 1)
        )

    # -- first order ------------------------------------------------------------------------------

    def _tree_gradient(self, b):
        """The gradient at a pytree x (``problem.tree``): the traced function takes x's leaves, variables as
        variables (:func:`_distinct_variables`); a call that brings a tensor where a variable was prepared
        runs a second trace, made then, that takes every leaf as a tensor."""
        problem, tree = b.problem, b.problem.tree
        core = recipes.tree_gradient(b.recorded(), tree.unflatten, b.broken)
        leaves = tree.array_leaves(problem.x)
        variables = _distinct_variables(leaves)
        as_tensors = [
            leaf
            if i in variables or not isinstance(leaf, tf.Variable)
            else tf.convert_to_tensor(leaf)
            for i, leaf in enumerate(leaves)
        ]
        compiled = b.compiled(core, as_tensors, *problem.ctx)
        if variables:
            by_variables, of_tensors = compiled, []

            def compiled(leaves, *ctx):
                if all(isinstance(leaves[i], tf.Variable) for i in variables):
                    return by_variables(leaves, *ctx)
                if not of_tensors:
                    example = [tf.convert_to_tensor(leaf) for leaf in as_tensors]
                    of_tensors.append(b.compiled(core, example, *problem.ctx))
                return of_tensors[0](leaves, *ctx)

        leaves_of, unflatten = tree.array_leaves, tree.unflatten
        if b.numpy:

            def value_and_gradient(x, *ctx):
                y, grads = compiled(leaves_of(x), *ctx)
                return _array(y), unflatten([_array(g) for g in grads])
        else:

            def value_and_gradient(x, *ctx):
                y, grads = compiled(leaves_of(x), *ctx)
                return y, unflatten(grads)

        return b.handing_over(Impl.from_valued("gradient", value_and_gradient))

    def prepare_gradient(self, problem):
        b = Boundary(self, problem, scalar="gradient")
        if problem.tree is not None:
            return self._scalar(b, self._tree_gradient(b))
        if problem.mode("gradient") == "forward":
            s = Sweep(self, b, _size(problem.x_shape), forward=True)
            core = recipes.or_reverse(
                recipes.forward_jacobian(b.recorded(), problem.x_shape, (), b.broken, s.vmap),
                recipes.gradient(b.recorded(), b.broken),
            )
            return self._scalar(
                b, s.record(self._unseeded(b, ("gradient", "value_and_gradient"), core))
            )
        core = recipes.gradient(b.recorded(), b.broken)
        impl = self._scalar(b, self._unseeded(b, ("gradient", "value_and_gradient"), core))
        _REVERSE_GRADIENTS.add(impl)
        return impl

    def prepare_complex_gradient(self, impl, problem):
        # a GradientTape at a complex x gives ∂f/∂Re + i ∂f/∂Im, diffinterface's convention, in
        # one shorter graph than the real view's
        return self.prepare_gradient(problem) if impl in _REVERSE_GRADIENTS else None

    def prepare_jacobian(self, problem):
        b = Boundary(self, problem)
        if problem.mode("jacobian") == "forward":
            s = Sweep(self, b, _size(problem.x_shape), forward=True)
            core = recipes.or_reverse(
                recipes.forward_jacobian(
                    b.recorded(), problem.x_shape, problem.spec.shape, b.broken, s.vmap
                ),
                recipes.reverse_jacobian(b.recorded(), b.broken, s.parallel),
            )
        else:
            s = Sweep(self, b, _size(problem.spec.shape), forward=False)
            core = recipes.reverse_jacobian(b.recorded(), b.broken, s.parallel)
        return s.record(self._unseeded(b, ("jacobian", "value_and_jacobian"), core))

    def prepare_derivative(self, problem):
        b = Boundary(self, problem)
        if problem.mode("derivative") == "forward":
            core = recipes.or_reverse(
                recipes.derivative_forward(b.recorded(), b.broken),
                recipes.reverse_jacobian(b.recorded(), b.broken),
            )
            return self._unseeded(b, ("derivative", "value_and_derivative"), core)
        s = Sweep(self, b, _size(problem.spec.shape), forward=False)
        core = recipes.reverse_jacobian(b.recorded(), b.broken, s.parallel)
        return s.record(self._unseeded(b, ("derivative", "value_and_derivative"), core))

    # -- second order: forward over reverse in one traced function --------------------------------

    def prepare_hvp(self, problem):
        b = Boundary(self, problem, scalar="hvp")
        k = len(problem.tangents)
        s = Sweep(self, b, k, forward=True)
        return self._scalar(
            b, s.record(self._seeded(b, "hvp", recipes.hvps(b.recorded(), k, b.broken, s.vmap), 2))
        )

    def prepare_hessian(self, problem):
        b = Boundary(self, problem, scalar="hessian")
        s = Sweep(self, b, _size(problem.x_shape), forward=True)
        core = recipes.hessian(b.recorded(), problem.x_shape, b.broken, s.vmap)
        return self._scalar(
            b, s.record(self._unseeded(b, ("hessian", "value_gradient_and_hessian"), core))
        )

    def prepare_second_derivative(self, problem):
        b = Boundary(self, problem)
        core = recipes.second_derivative(b.recorded(), b.broken)
        return self._unseeded(
            b, ("second_derivative", "value_derivative_and_second_derivative"), core
        )

    # -- first derivatives TensorFlow can differentiate again (SecondOrder pairs) -----------------

    def differentiable_value_and_gradient(self, problem):
        b = Boundary(self, problem)
        f, broken = b.bound(), b.broken

        def value_and_gradient(x, *ctx):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x, *ctx)
            return y, connected(tape.gradient(y, x), x, broken)

        return value_and_gradient

    def differentiable_value_and_derivative(self, problem):
        b = Boundary(self, problem)
        f, broken = b.bound(), b.broken

        def value_and_derivative(x, *ctx):
            with forward_mode(), tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
                y = as_output(f(x, *ctx), x)
            return y, connected(acc.jvp(y), y, broken)

        def by_reverse(
            x, *ctx
        ):  # f holds a DifferentiateWith, whose custom gradients forward mode cannot see
            return recipes.derivative_by_outputs(
                lambda z, *c: as_output(f(z, *c), z), x, ctx, broken
            )

        return recipes.or_reverse(value_and_derivative, by_reverse)
