"""The adapter contract: what a backend implements.

An adapter wraps one AD library (``diffinterface/backends/``) or other
backends (``diffinterface/wrappers/``). It declares its facts once, in one
frozen value (``capabilities = Capabilities(mode="both", families=...)``, see
:mod:`diffinterface.core.capabilities`), its ``mode`` among them, and
implements at least one primitive preparation, ``prepare_pushforward`` or
``prepare_pullback``. Every other ``prepare_<operator>`` of the operator table
returns ``None`` here, which tells the core to build that operator from the
primitives (the fallbacks registered by ``diffinterface/operators/``); an
adapter overrides one only where its framework does it faster.

Each ``prepare_<operator>(problem)`` receives a :class:`~diffinterface.core.problem.Problem`
(``f``, ``x``, ``ctx`` values, ``tangents``, the two-argument buffer ``y``,
the user's array ``family`` and, on demand, ``problem.spec``: the output shape
and dtype) and returns an :class:`Impl` whose methods do the numeric work and
nothing else. Their names come from the operator table
(:mod:`diffinterface.core.operator_table`); their signatures:

=================  ==========================================================
pushforward        ``pushforward(x, tangents, *ctx)`` -> tuple,
                   ``value_and_pushforward(x, tangents, *ctx)`` -> (y, tuple)
pullback           same with cotangents, results shaped like x
derivative         ``derivative(x, *ctx)``, ``value_and_derivative(x, *ctx)``
gradient           ``gradient(x, *ctx)``, ``value_and_gradient(x, *ctx)``
jacobian           ``jacobian(x, *ctx)``, ``value_and_jacobian(x, *ctx)``
second_derivative  ``second_derivative(x, *ctx)``,
                   ``value_derivative_and_second_derivative(x, *ctx)``
hvp                ``hvp(x, tangents, *ctx)``, ``gradient_and_hvp(x, tangents, *ctx)``
hessian            ``hessian(x, *ctx)``, ``value_gradient_and_hessian(x, *ctx)``
=================  ==========================================================

A strict preparation (``problem.strict``) compares every prepared call's x
with the prepared one in the core, before a method runs
(:mod:`diffinterface.core.check`): methods need not check their arguments.

Inputs and results are in the user's array family (numpy in, numpy out); the
adapter converts at its boundary. A 0-d numpy result (the value of a scalar
``f``, the derivative at a scalar ``x``) is a 0-d ``np.ndarray``: where an
adapter may return NumPy scalars or floats there (numpy reductions and
indexing do), the core converts them once per call, at preparation deciding
whether it must (``capabilities.numpy_results_are_arrays``). For two-argument functions ``f(y, x, *ctx)``
the returned value is a fresh array; the core copies it into the user's ``y``.

Second order (``SecondOrder(outer, inner)``, ``diffinterface/wrappers/second_order.py``):
the outer backend differentiates the inner backend's first derivative. An
adapter whose ``capabilities.framework`` is None (finite differences, zeros) only evaluates
functions at concrete arrays, so as the outer it differentiates any inner's
prepared gradient. An adapter that traces (``framework="jax"``, ``"torch"``,
``"autograd"``) can only differentiate computations of its own framework; as
the inner of such an outer it provides its first derivative as a function its
framework can differentiate again, through two optional hooks:

- ``differentiable_value_and_gradient(problem)`` -> ``vg(x, *ctx) -> (f(x), gradient)``
- ``differentiable_value_and_derivative(problem)`` -> ``vd(x, *ctx) -> (f(x), derivative)``

``vg``/``vd`` take and return the framework's own arrays (tracers included),
exactly as the adapter's primitives pass them to ``f``, convert nothing, and
must be usable as ``f`` in a problem given to any adapter of the same
framework. ``None`` (the default) means the adapter cannot be differentiated
through; a pair that needs it raises UnsupportedError at preparation.

An outer that only evaluates (finite differences) evaluates the inner's
gradient at several points per product; a third optional hook lets the inner
compute the outer's whole formula around them in one call:

- ``prepare_batched_gradient(problem, formulas)`` -> an Impl with one method per
  name of ``formulas`` (finite differences give ``value_and_pushforward``), each
  ``(x, tangents, *ctx)`` -> the pushforward's results. ``formulas`` maps each
  name to ``(gradients per tangent, build)``: ``build(xp, gradient, mapped)``
  returns ``fn(x, tangents) -> (gradient at x, products stacked along a first
  axis)``, written with the array namespace ``xp``, where ``gradient(point)`` is
  one gradient and ``mapped(fn, stacked)`` maps a function of one tangent's array
  (to an array or a tuple of arrays) over a stack of them. The inner runs it with
  its own namespace and map, compiled with the gradients where it compiles.
  ``None`` (the default): the
  outer calls the prepared gradient once per point. The differentiated problem
  offers it to the outer as ``problem.batched_f``.

Pytrees: when ``x`` is a pytree, the core hands the adapter a flat problem
(``f`` of one flat array, see :mod:`diffinterface.core.pytree`) unless the
adapter lists the operator in ``capabilities.pytrees`` (and ``takes_tree`` agrees): then
``problem.x`` is the tree, ``problem.tree`` its flattening plan (leaves,
``unflatten``), and the prepared methods take and return trees.

A plain adapter is its own ``outer`` and ``inner``; ``SecondOrder`` sets them
to its two backends' adapters.
"""

from __future__ import annotations

import warnings
from types import MappingProxyType
from typing import Callable, ClassVar, Mapping, Optional


from ..families import owned
from .capabilities import FIELDS, Capabilities
from .operator_table import OPERATORS
from .problem import Problem, Spec


class Impl:
    """The prepared numeric functions of one operator family, as attributes.

    >>> impl = Impl(gradient=abs, value_and_gradient=divmod)
    >>> impl
    Impl(gradient, value_and_gradient)
    """

    def __init__(self, **methods):
        self.__dict__.update(methods)

    @classmethod
    def from_valued(cls, operator: str, valued: Callable) -> Impl:
        """The Impl of ``operator`` from its combined form alone (``value_and_<operator>``...).

        The operator alone is the combined form's last result: a recipe that
        computes the value anyway writes only the combined form.

            >>> impl = Impl.from_valued("gradient", lambda x: (x * x, 2 * x))
            >>> impl.gradient(3.0), impl.value_and_gradient(3.0)
            (6.0, (9.0, 6.0))
        """
        alone, combined = OPERATORS[operator].methods
        return cls(**{alone: lambda *args: valued(*args)[-1], combined: valued})

    def __repr__(self):
        return f"Impl({', '.join(self.__dict__)})"


class Adapter:
    """Base class of backend adapters; see the module docstring for the contract."""

    #: what this adapter declares about itself (mode, array families, framework...), in one value;
    #: an adapter whose facts depend on its selector sets ``self.capabilities`` in ``__init__``
    capabilities: Capabilities = Capabilities()
    #: operator name -> the method preparing it (``prepare_<name>``), declared by a subclass; filled
    #: at class creation, so that an operator registered by a third party is found as the built-in
    #: ones
    preparations: ClassVar[Mapping[str, Callable]] = MappingProxyType({})

    def __init__(self, backend):
        self.backend = backend
        self.outer = self.inner = self

    def __repr__(self):
        return f"<{type(self).__name__} for {self.backend!r}>"

    def __init_subclass__(cls, **options):
        super().__init_subclass__(**options)
        # the declared table of preparations: each ``prepare_<operator>`` defined below Adapter,
        # mixins included (built-in operators and those a third party registers alike), the closest
        # first
        table = {}
        for klass in reversed(cls.__mro__[: cls.__mro__.index(Adapter)]):
            for attribute, value in vars(klass).items():
                name = attribute[len("prepare_") :]
                if attribute.startswith("prepare_") and name not in NOT_OPERATORS:
                    table[name] = value
        cls.preparations = MappingProxyType(table)
        # an adapter written before ``capabilities`` states its facts as class attributes: folded in
        legacy = {
            name: value
            for name, value in vars(cls).items()
            if name in FIELDS and not isinstance(value, property)
        }
        if legacy:
            warnings.warn(
                f"{cls.__name__}: declare {', '.join(legacy)} in one value, "
                f"capabilities = Capabilities({', '.join(f'{n}=...' for n in legacy)}) "
                "(diffinterface.core.Capabilities); class attributes are read once, at class creation",
                DeprecationWarning,
                stacklevel=2,
            )
            cls.capabilities = cls.capabilities.replace(**legacy)

    def prepare(self, operator: str, problem: Problem) -> Optional[Impl]:
        """The :class:`Impl` of ``operator`` for ``problem``, or None: the core builds it from the
        primitives (its fallback). By default, the class's ``prepare_<operator>`` (see
        ``preparations``); a wrapper that routes every operator overrides this method."""
        method = self.preparations.get(operator)
        return None if method is None else method.__get__(self, type(self))(problem)

    # The operators' preparations: None builds the operator from the primitives; an adapter
    # overrides those its framework does faster, and at least one primitive.
    def prepare_pushforward(self, problem: Problem) -> Optional[Impl]:
        return None

    def prepare_pullback(self, problem: Problem) -> Optional[Impl]:
        return None

    def prepare_derivative(self, problem: Problem) -> Optional[Impl]:
        return None

    def prepare_gradient(self, problem: Problem) -> Optional[Impl]:
        return None

    def prepare_jacobian(self, problem: Problem) -> Optional[Impl]:
        return None

    def prepare_second_derivative(self, problem: Problem) -> Optional[Impl]:
        return None

    def prepare_hvp(self, problem: Problem) -> Optional[Impl]:
        return None

    def prepare_hessian(self, problem: Problem) -> Optional[Impl]:
        return None

    def choose_mode(self, operator, problem):
        """Which mode a fallback should use for ``operator``: "forward" or "reverse"."""
        mode = self.capabilities.mode
        if mode != "both":
            return mode
        chosen = self.backend.mode
        if chosen is not None:
            return chosen
        prefers = OPERATORS[operator].fallback_mode
        if prefers == "smaller side":
            if problem.x_size == problem.spec.size:
                return self.capabilities.square_jacobian_mode
            return "forward" if problem.x_size < problem.spec.size else "reverse"
        return prefers

    def takes_tree(self, operator, tree):
        """True when ``prepare_<operator>`` should receive the pytree ``x`` itself (its plan: ``tree``)."""
        return operator in self.capabilities.pytrees

    def output_spec(self, problem):
        """Output shape and dtype of ``f``: by default, one evaluation at preparation."""
        return Spec.of(problem.f(owned(problem.x), *problem.ctx))

    def prepare_evaluation(self, problem):
        """``value(x, *ctx) -> f(x)`` in the user's family, as the adapter's operators evaluate ``f``
        (under the same dtype configuration): by default, ``f`` itself. Used where no derivative
        needs computing (an empty problem, :mod:`diffinterface.core.empty`)."""
        return problem.f

    def parts(self):
        """This adapter and those of the backends it is made of (a wrapper's), whose frameworks may run ``f``.

        The boundary (:mod:`diffinterface.core.boundary`) explains an error raised
        inside ``f`` by the frameworks of every part.
        """
        return (self,)

    def is_traced_array_error(self, error):
        """True when ``error``, raised by ``f``, is the framework refusing a conversion of its traced
        array (numpy called on it, ``float()``, ``.item()``): see :mod:`diffinterface.core.boundary`."""
        return False

    def prepare_same_point(self, operator, problem):
        """The :class:`Impl` of ``operator`` (pushforward, pullback, hvp) for calls at ``problem.x`` and its
        contexts only, having computed once what depends on them alone; None (the default): the ordinary one.

        Krylov solvers and Newton-CG apply one derivative at one x to many seeds
        (``prepare_hvp_same_point`` and its siblings): the recipe computes once
        what depends only on x (JAX's linearization or ``vjp`` residuals,
        torch's recorded graph, autograd's recorded pass), and its calls run the
        seed-dependent part only. The core's check
        (:class:`~diffinterface.core.check.Check`) compares each call's x and
        contexts with the prepared ones; an adapter whose recipe costs about one
        call of the operator says so (``Capabilities.cheap_same_point``).
        """
        return None

    def primal_value(self, value):
        """``value`` (what f receives, or computes from it) unwrapped from the framework's recording.

        With ``has_aux=True`` the core finds the evaluation at the call's x and
        returns the aux computed there through it (:mod:`diffinterface.core.aux`):
        a torch tensor that requires grad is detached, an autograd box gives its
        value. The default: ``value`` itself (frameworks that only evaluate).
        """
        return value

    def fused_method(
        self, impl: Impl, name: str, before: Callable, after: Callable, x
    ) -> Optional[Callable]:
        """The method ``name`` of ``impl`` (which this adapter prepared) as one compiled function of an x like
        ``x``: ``before(x)`` is the x the method takes, ``after`` turns its result into the caller's; both
        written for the framework's traced values. A transform that converts x and the results of every
        call (the complex view) asks for it. None (the default): the caller composes them around the
        method, each conversion its own call.
        """
        return None

    def prepare_complex_gradient(self, impl: Impl, problem: Problem) -> Optional[Impl]:
        """For a gradient that this adapter prepared (``impl``) over the real view of a complex array x:
        the gradient prepared at the complex x itself (``problem``: the user's f, that x, the same
        contexts), its gradients in diffinterface's convention (``∂f/∂Re + i ∂f/∂Im``) and x's dtype,
        its value real. Asked once per preparation, before :meth:`fused_method`, where the framework's own
        complex gradient runs faster than the real view's. None (the default): the real view.
        """
        return None

    # Second-order hooks for SecondOrder pairs of one framework (see the module docstring).
    def differentiable_value_and_gradient(self, problem: Problem) -> Optional[Callable]:
        """``vg(x, *ctx) -> (f(x), gradient)`` in the framework's own arrays, differentiable again by
        it; None: this adapter's gradient cannot be differentiated through."""
        return None

    def differentiable_value_and_derivative(self, problem: Problem) -> Optional[Callable]:
        """``vd(x, *ctx) -> (f(x), derivative)``, as :meth:`differentiable_value_and_gradient`."""
        return None

    def differentiable_first_derivative(
        self, operator: str, problem: Problem
    ) -> Optional[Callable]:
        """The hook above of ``operator``, "gradient" or "derivative"."""
        if operator == "gradient":
            return self.differentiable_value_and_gradient(problem)
        return self.differentiable_value_and_derivative(problem)

    def bridge_first_derivative(
        self, problem: Problem, framework: Optional[str], operator: str
    ) -> Optional[Callable]:
        """For a pair of different frameworks (``SecondOrder``): the inner's first derivative
        ``operator`` of ``problem`` (computed by ``framework``) as a function of the outer's arrays
        whose derivatives are the inner's second-order operators; None: the pair cannot work."""
        return None

    def prepare_batched_gradient(self, problem: Problem, formulas: dict) -> Optional[Impl]:
        """An Impl computing an evaluating outer's ``formulas`` around this adapter's gradients in
        one call (``capabilities.batches_gradients``, see the module docstring); None: the outer
        calls the prepared gradient once per point."""
        return None

    # Sparse hooks (``AutoSparse`` over this adapter): a compressed Jacobian or Hessian built whole.
    def sparse_jacobian(
        self, problem: Problem, compression, seed_matrix, dense_shape, assembler
    ) -> Optional[tuple]:
        """``(jacobian, value_and_jacobian)`` of ``problem`` for the coloring ``compression`` (its
        seeds: ``seed_matrix``; ``assembler`` decompresses), or None: ``AutoSparse`` runs the
        colors through this adapter's primitives."""
        return None

    def sparse_hessian(
        self, problem: Problem, compression, seed_matrix, dense_shape, assembler
    ) -> Optional[tuple]:
        """``(hessian, value_gradient_and_hessian)``, as :meth:`sparse_jacobian`."""
        return None


#: ``prepare_<name>`` methods that are hooks of their own, not an operator's preparation
NOT_OPERATORS = frozenset({"same_point", "batched_gradient", "evaluation", "call"})
