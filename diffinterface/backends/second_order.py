"""SecondOrder(outer, inner): the inner backend differentiates f, the outer differentiates that.

    >>> import numpy as np, diffinterface as di
    >>> backend = di.SecondOrder(di.AutoFiniteDiff(), di.AutoFiniteDiff(method="complex"))
    >>> di.hessian(lambda x: (x[0] * x[1]) ** 2, backend, np.array([1.0, 2.0])).round(6)
    array([[8., 8.],
           [8., 2.]])

Strategies follow the modes of the two backends:

==================  =========================================================
outer mode          hvp / hessian
==================  =========================================================
forward (default)   pushforward of the inner gradient (forward-over-reverse
                    when the inner is reverse: the usual fastest choice);
                    the hessian is these hvps over x's basis, in batches
                    of the outer's ``max_batch``
reverse             pullback of the inner gradient (reverse-over-reverse,
                    reverse-over-forward); H is symmetric, so ``t @ H = H @ t``
==================  =========================================================

An outer backend of mode "both" with no ``mode=`` set works forward. The
inner's own mode picks how it computes the gradient.

Which pairs work:

- An outer whose adapter has ``framework = None`` (AutoFiniteDiff, the zero
  backends) only evaluates functions at concrete arrays, so it differentiates
  any inner's prepared gradient: ``SecondOrder(AutoFiniteDiff(), AutoTorch())``.
- An outer and inner of one framework (JAX over JAX, torch over torch,
  autograd over autograd): the inner hands over its first derivative as a
  function that framework can trace again (the adapter hooks
  ``differentiable_value_and_gradient`` / ``_derivative`` in ``base.py``).
- An outer and inner of different frameworks (JAX over torch, torch over
  finite differences...): the inner's first derivative is bridged into the
  outer's framework as DifferentiateWith does
  (``wrappers/differentiate_with/__init__.py::bridged_first_derivative``); its
  derivatives are the inner's ``gradient_and_hvp`` /
  ``value_derivative_and_second_derivative``.

``SecondOrder(b, b)`` is the plain backend ``b``: it uses ``b``'s native
second-order operators where its adapter has them. A pair of different
backends is composed exactly as asked. As a first-order backend,
``SecondOrder(outer, inner)`` is its inner backend (``gradient`` with it is
``gradient`` with ``inner``).
"""

from __future__ import annotations

import numpy as np

from ..arrays import array_namespace, dtype_name, family_of
from ..errors import UnsupportedError
from . import get_adapter
from .base import Adapter

class SecondOrderAdapter(Adapter):
    """Holds the outer and inner adapters; first order is the inner's."""

    def __init__(self, backend):
        super().__init__(backend)
        self.outer = get_adapter(backend.outer)
        self.inner = get_adapter(backend.inner)
        self.mode = self.inner.mode
        self.inplace = self.inner.inplace
        self.max_batch = self.inner.max_batch
        self.families = tuple(f for f in self.outer.families if f in self.inner.families)

    def choose_mode(self, operator, problem):
        return self.inner.choose_mode(operator, problem)

    def output_spec(self, problem):
        return self.inner.output_spec(problem.replace(adapter=self.inner))

    def _first_order(self, operator, problem):
        return problem.replace(adapter=self.inner).impl(operator)

    def _native_second_order(self, operator, problem):
        # Only SecondOrder(b, b) means "b, natively"; other pairs are composed as asked.
        if self.backend.outer != self.backend.inner:
            return None
        return getattr(self.inner, "prepare_" + operator)(problem.replace(adapter=self.inner))

    def prepare_pushforward(self, problem):
        return self._first_order("pushforward", problem)

    def prepare_pullback(self, problem):
        return self._first_order("pullback", problem)

    def prepare_derivative(self, problem):
        return self._first_order("derivative", problem)

    def prepare_gradient(self, problem):
        return self._first_order("gradient", problem)

    def prepare_jacobian(self, problem):
        return self._first_order("jacobian", problem)

    def prepare_second_derivative(self, problem):
        return self._native_second_order("second_derivative", problem)

    def prepare_hvp(self, problem):
        return self._native_second_order("hvp", problem)

    def prepare_hessian(self, problem):
        return self._native_second_order("hessian", problem)


def outer_and_inner(adapter):
    """The (outer, inner) adapters of a second-order problem's adapter; a plain one is both."""
    if isinstance(adapter, SecondOrderAdapter):
        return adapter.outer, adapter.inner
    return adapter, adapter


def outer_mode(adapter):
    """The mode the outer works in: its own, or forward (over the inner) when it does both."""
    if adapter.mode != "both":
        return adapter.mode
    return getattr(adapter.backend, "mode", None) or "forward"


def _describe_pair(outer, inner):
    if outer.backend == inner.backend:
        return repr(outer.backend)
    return f"SecondOrder(outer={outer.backend!r}, inner={inner.backend!r})"


def _first_derivative(problem, outer, inner, operator):
    """``value_and_<operator>(x, *ctx)`` of the inner, as a function ``outer`` can differentiate."""
    inner_problem = problem.replace(adapter=inner)
    if outer.framework is None:
        # The outer only evaluates at concrete arrays of the user's family: any prepared inner works.
        return getattr(inner_problem.impl(operator), "value_and_" + operator)
    pair = _describe_pair(outer, inner)
    if inner.framework != outer.framework:
        # The outer traces its own framework only: it sees the inner's first derivative as a
        # DifferentiateWith-style bridge whose derivatives are the inner's second-order operators.
        from ..wrappers.differentiate_with import bridged_first_derivative

        return bridged_first_derivative(inner_problem, inner.framework, operator)
    hook = getattr(inner, "differentiable_value_and_" + operator, None)
    function = hook(inner_problem) if hook is not None else None
    if function is None:
        raise UnsupportedError(
            f"backend: {pair} cannot work: the inner adapter {type(inner).__name__} does not provide its "
            f"{operator} as a function {outer.framework} can differentiate again "
            f"(differentiable_value_and_{operator}). Use AutoFiniteDiff() as the outer backend."
        )
    return function


def _common_dtype(a, b):
    try:
        return np.result_type(a, b).name
    except TypeError:  # a dtype numpy does not know (bfloat16): keep x's
        return b


def _concat(xp, parts):
    concatenate = getattr(xp, "concatenate", None) or xp.concat
    return concatenate(parts)


def differentiated_problem(problem, operator, *, with_value=False):
    """The problem the outer differentiates: ``problem.f`` replaced by the inner's first derivative.

    ``operator`` is "gradient" (for hvp and hessian) or "derivative" (for
    second_derivative). Without ``with_value`` the new function is that
    derivative, shaped like x (gradient) or like f(x) (derivative). With it,
    the function also carries f(x), so one outer pass gives value, first and
    second derivatives: ``[f(x), *gradient.ravel()]`` (flat, length 1 + x.size)
    or ``stack([f(x), derivative])`` (shape ``(2, *f(x).shape)``).
    Raises UnsupportedError when the outer cannot differentiate the inner.
    """
    from ..operators._core import Problem, Spec

    outer, inner = outer_and_inner(problem.adapter)
    value_and_first = _first_derivative(problem, outer, inner, operator)
    if operator == "gradient":
        first_spec = Spec(problem.x_shape, problem.x_dtype)
    else:
        first_spec = problem.spec
    if not with_value:

        def first(x, *ctx):
            return value_and_first(x, *ctx)[1]

        spec = first_spec
    elif operator == "gradient":

        def first(x, *ctx):
            value, gradient = value_and_first(x, *ctx)
            xp = array_namespace(gradient)
            return _concat(xp, (xp.reshape(value, (1,)), xp.reshape(gradient, (-1,))))

        spec = Spec((1 + problem.x_size,), _common_dtype(problem.spec.dtype, problem.x_dtype))
    else:

        def first(x, *ctx):
            value, derivative = value_and_first(x, *ctx)
            return array_namespace(derivative).stack((value, derivative))

        spec = Spec((2, *first_spec.shape), first_spec.dtype)
    differentiated = Problem(outer, first, problem.x, None, problem.contexts, None)
    differentiated._spec = spec
    return differentiated


def cast(a, dtype):
    """``a`` as ``dtype`` (a name) in its own family; ``a`` itself when it already is."""
    if dtype_name(a) == dtype:
        return a
    if family_of(a) == "torch":
        import torch

        return a.to(getattr(torch, dtype))
    return a.astype(dtype)
