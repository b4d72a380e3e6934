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
  ``differentiable_value_and_gradient`` / ``_derivative`` of ``core/adapter.py``).
- An outer and inner of different frameworks (JAX over torch, torch over
  finite differences...): the inner's first derivative is bridged into the
  outer's framework as ``DifferentiateWith`` does
  (``wrappers/differentiate_with/``); its derivatives are the inner's
  ``gradient_and_hvp`` / ``value_derivative_and_second_derivative``.

``SecondOrder(b, b)`` is the plain backend ``b``: it uses ``b``'s native
second-order operators where its adapter has them. A pair of different
backends is composed exactly as asked. As a first-order backend,
``SecondOrder(outer, inner)`` is its inner backend (``gradient`` with it is
``gradient`` with ``inner``).
"""

from __future__ import annotations

import numpy as np

from ..core import OPERATORS, Impl, get_adapter
from ..errors import UnsupportedError
from ..families import FAMILIES, NUMBERS, as_numpy
from .delegating import DelegatingAdapter
from .differentiate_with import bridged_first_derivative


class SecondOrderAdapter(DelegatingAdapter):
    """Holds the outer and inner adapters; first order is the inner's (its delegate).

    The second-order fallbacks (``operators/_second_order.py``) read ``outer``
    and ``inner``; this adapter only routes each operator of the table.
    """

    def __init__(self, backend):
        super().__init__(backend, get_adapter(backend.inner))
        self.outer = get_adapter(backend.outer)
        self.inner = self.delegate
        outer, inner = self.outer.capabilities, self.inner.capabilities
        families = tuple(f for f in outer.families if f in inner.families)
        if outer.framework is None and NUMBERS in families:
            # an outer that only evaluates (finite differences) works on numpy arrays: an x of
            # another family the inner takes goes through numpy (_through_numpy)
            families = inner.families
        # a family both compute in, one of them in its namespace (traceable_families: finite
        # differences on JAX arrays), the other natively or in its namespace too
        traceable = tuple(
            f for f in outer.all_families if f in inner.all_families and f not in families
        )
        self.capabilities = self.capabilities.replace(
            # f runs wherever either backend evaluates it: at complex points if either takes complex
            # steps
            writes_cache=outer.writes_cache and inner.writes_cache,
            families=families,
            traceable_families=traceable,
            approximate=outer.approximate or inner.approximate,
            float64_accuracy=outer.float64_accuracy or inner.float64_accuracy,
        )

    def parts(self):
        return (self, *self.outer.parts(), *self.inner.parts())

    def through_numpy(self, name, problem):
        """``name``'s implementation for an x the outer cannot take: x and seeds as numpy, results back.

        The outer differentiates the inner's derivative on numpy arrays (the
        inner takes numpy x: numpy in, numpy out, f still sees its own
        framework's arrays); results come back in x's family, on its device.
        """
        op, family, like = OPERATORS[name], FAMILIES[problem.family], problem.x
        seeded = op.seeds is not None
        tangents = problem.tangents
        impl = problem.replace(
            x=as_numpy(like),
            family=NUMBERS,
            tangents=None if tangents is None else tuple(as_numpy(t) for t in tangents),
        ).impl(name)

        def back(result):
            if result.__class__ is tuple:
                return tuple(back(r) for r in result)
            return family.from_numpy(np.asarray(result), like)

        def converting(method):
            def run(x, *rest):
                if seeded:
                    rest = (tuple(as_numpy(t) for t in rest[0]), *rest[1:])
                return back(method(as_numpy(x), *rest))

            return run

        return Impl(**{m: converting(getattr(impl, m)) for m in op.methods})

    def prepare(self, operator, problem):
        """First order: the inner's. Second order: the inner's native one for ``SecondOrder(b, b)``
        only; other pairs are composed as asked (None: the second-order fallback)."""
        if OPERATORS[operator].order != 2:
            return super().prepare(operator, problem)
        if self.outer.capabilities.complex_step and self.inner.capabilities.framework is not None:
            raise UnsupportedError(
                f"backend: {self.backend!r}: the outer's complex step evaluates the inner's "
                f"{operator} at complex points x + i·h·t, and {type(self.inner.backend).__name__} "
                "differentiates at real points only (its framework's gradient takes real outputs). "
                "Use AutoFiniteDiff(method='central') as the outer backend"
            )
        if self.backend.outer != self.backend.inner:
            outer = self.outer.capabilities
            if problem.family in outer.families or problem.family in outer.traceable_families:
                return None
            return self.through_numpy(operator, problem)
        return self.inner.prepare(operator, self.delegated(problem))

    def bridge_first_derivative(self, problem, framework, operator):
        """Pairs of different frameworks: the inner's first derivative, bridged into the outer's."""
        return bridged_first_derivative(problem, framework, operator)
