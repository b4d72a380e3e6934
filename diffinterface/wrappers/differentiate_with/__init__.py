"""``DifferentiateWith(f, backend)``: ``f`` inside any framework's derivative, differentiated by ``backend``.

    >>> import numpy as np, diffinterface as di
    >>> def simulator(x):                      # numpy only: no AD framework can trace it
    ...     return np.sum(np.cumsum(x) ** 2)
    >>> g = di.DifferentiateWith(simulator, di.AutoFiniteDiff())
    >>> float(g(np.array([1.0, 2.0])))
    10.0
    >>> di.gradient(lambda x: 3.0 * g(x), di.AutoAutograd(), np.array([1.0, 2.0])).round(4)
    array([24., 18.])

``g(x, *contexts)`` has ``f``'s signature (contexts are ``di.Constant`` /
``di.Cache``, never differentiated). What a call does depends on the array
family of ``x`` (``diffinterface.families.family_of``, which imports nothing):

- ``x`` of the inner backend's own framework (JAX arrays and tracers for
  ``AutoJAX``, tensors for ``AutoTorch``, autograd's boxes for
  ``AutoAutograd``): ``f`` is called directly and the framework
  differentiates through it, at no cost;
- a JAX array or tracer otherwise: ``f`` is a custom JVP whose callbacks run
  the inner backend's prepared operators (``backends/jax/differentiate_with.py``);
  ``grad``, ``vjp``, ``jvp``, ``jacfwd``, ``jacrev``, ``hessian``, ``jit`` and
  ``vmap`` work;
- a torch tensor otherwise: a ``torch.autograd.Function`` with backward, jvp
  and vmap rules (``backends/torch/differentiate_with.py``): ``backward()``,
  ``torch.autograd.grad``, forward AD and ``torch.func`` work;
- an autograd box otherwise: an ``autograd`` primitive with vjp and jvp rules
  (``backends/autograd/differentiate_with.py``);
- numpy arrays and floats: ``f`` on ``x`` in the inner's family, the result
  back in numpy.

Each framework's rules are a :class:`~diffinterface.core.bridge.FrameworkBridge`
that its backend registers (``register_backend(..., differentiate_with=...)``);
this module finds them by the family of ``x`` and names no framework.

Derivatives go to second order (a pullback's derivative is the inner's
``hvp``); asking for a third raises :class:`~diffinterface.UnsupportedError`.
The inner operators are prepared once per input signature (shape, dtype,
contexts' kinds) in a small cache that threads share; the output's shape is
learned then, on torch's meta device when ``f`` runs there and otherwise by
one evaluation of ``f`` at the first input seen: under ``jax.jit``, the
first values JAX's callback receives, never an invented point. Only an
input without values and without such a callback (a tracer of another
framework's transform) is prepared at zeros of its shape. Results keep ``x``'s family and dtype; float64 stays float64
for JAX without changing its global configuration (JAX itself only has
float64 tracers under x64, and the inner JAX calls run under a thread-local
``jax.enable_x64``).
"""

from __future__ import annotations

import threading

import numpy as np

from ...families import array_namespace, dtype_name, family_of, shape_of
from ...contexts import check_contexts
from ...core import get_adapter
from ...core.bridge import (
    context_signature,
    converted_contexts,
    framework_bridge,
    inner_family,
    to_family,
)
from ._rules import OperatorRules, gradient_route, refuse_complex_x


class Bridge:
    """A function whose value and derivatives come from an inner backend, callable from any framework.

    ``make_rules(x, contexts)`` builds the rules (see ``_rules.py``) for one
    input signature from reference values in the inner family. Used by
    :class:`DifferentiateWith` and by cross-framework ``SecondOrder``.
    """

    def __init__(self, make_rules, framework, direct=None):
        self._make_rules = make_rules
        self.framework = (
            framework  # the inner backend's (its adapter's ``framework``; None: none traces)
        )
        self.family = inner_family(framework)
        self._direct = direct  # called as is when x belongs to the inner's own framework
        #: the class of the last x that went to ``_direct`` without contexts: such a call skips the
        #: checks
        self._direct_class = None
        self._rules = {}
        self._lock = threading.Lock()

    def rules(self, x, contexts, derivatives=True):
        """The rules for ``x``'s signature, built on first use from ``x`` (concrete) or zeros (traced).

        ``derivatives=False``: only the value will be asked for (which a complex x may have).
        """
        key = (shape_of(x), dtype_name(x), context_signature(contexts))
        rules = self._rules.get(key)
        if rules is None:
            if derivatives:
                refuse_complex_x(key[1])
            with self._lock:
                rules = self._rules.get(key)
                if rules is None:
                    rules = self._rules[key] = self._make_rules(
                        self._reference(x), tuple(self._reference_context(c) for c in contexts)
                    )
        return rules

    def _reference_context(self, c):
        """``c`` as the inner's operators are prepared with: as every call will hand it over.

        A framework's value (perhaps traced) by :meth:`_reference`; the others
        as :func:`~diffinterface.core.bridge.converted_contexts` converts them
        at each call (a float or a numpy array becomes an array of the inner
        family), so that the calls fit the inner's strict preparations.
        """
        if framework_bridge(family_of(c.value)) is not None:
            return type(c)(self._reference(c.value))
        return converted_contexts((c,), self.family)[0]

    def gradient_route(self, y_shape):
        """True when the rules of an output shaped ``y_shape`` take the gradient route (see ``_rules.py``);
        known before they are built, for an outer that traces without values (``jax.jit``)."""
        return False

    #: how a caller can give the output's shape under a trace without values (named in that error)
    values_hint = ""

    def declared_spec(self, x, contexts):
        """``(shape, dtype name)`` of the output at ``x`` as the caller declared it, or None (learn it)."""
        return None

    def has_rules(self, x, contexts):
        """True when the rules for ``x``'s signature are built already (nothing is prepared)."""
        return (shape_of(x), dtype_name(x), context_signature(contexts)) in self._rules

    def _reference(self, x):
        try:
            return to_family(x, self.family)
        except Exception:  # noqa: BLE001 - a traced x has no values: prepare at zeros of its shape
            return to_family(np.zeros(shape_of(x), dtype=dtype_name(x)), self.family)

    def __call__(self, x, *contexts):
        if x.__class__ is self._direct_class and not contexts:
            # a family is decided by the class alone: this x goes where the last one of its class
            # went
            return self._direct(x)
        check_contexts(contexts)
        family = family_of(x)
        if self._direct is not None and family in (self.framework, self.family):
            if not contexts:
                self._direct_class = x.__class__
                return self._direct(x)
            return self._direct(x, *[c.value for c in contexts])
        # x of a framework that traces it: that framework's rules
        # (backends/<name>/differentiate_with.py)
        outer = framework_bridge(family)
        if outer is not None:
            return outer.call(self, x, contexts)
        if (
            family != "unknown"
        ):  # concrete arrays no framework traces: f's value, back in x's family
            x = np.float64(x) if x.__class__ is float else x
            rules = self.rules(x, contexts, derivatives=False)
            inner_contexts = converted_contexts(contexts, self.family)
            return to_family(rules.value(to_family(x, self.family), inner_contexts), family)
        raise TypeError(
            f"x: a DifferentiateWith function expected a float or a numpy, JAX, torch or autograd array; "
            f"got {type(x).__name__}"
        )


class DifferentiateWith(Bridge):
    """``f`` with its derivatives computed by ``backend``, inside whatever framework calls it.

    Parameters
    ----------
    f : callable
        ``f(x, *contexts) -> y``, written for the inner backend (a numpy-only
        function for ``AutoFiniteDiff``, torch code for ``AutoTorch``...).
    backend : selector
        The backend that differentiates ``f``.

    Returns
    -------
    callable
        ``g(x, *contexts)``, with ``f``'s signature: see the module
        docstring for what each framework sees.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> g = di.DifferentiateWith(lambda x: np.sum(x ** 3), di.AutoFiniteDiff())
    >>> di.gradient(lambda x: g(x) * 2.0, di.AutoFiniteDiff(), np.array([1.0, 2.0])).round(3)
    array([ 6., 24.])
    """

    def __init__(self, f, backend):
        if not callable(f):
            raise TypeError(f"f: DifferentiateWith expected a callable; got {type(f).__name__}")
        framework = get_adapter(
            backend
        ).capabilities.framework  # raises the TypeError naming the selectors
        self.f, self.backend = f, backend
        super().__init__(
            lambda x, contexts: OperatorRules(f, backend, framework, x, contexts),
            framework,
            direct=f,
        )

    def gradient_route(self, y_shape):
        return gradient_route(self.backend, y_shape)

    def __repr__(self):
        return f"DifferentiateWith({getattr(self.f, '__name__', self.f)!r}, {self.backend!r})"


def bridged_first_derivative(problem, framework, operator):
    """``value_and_<operator>(x, *ctx)`` of ``problem``'s inner backend, for an outer of another framework.

    ``problem`` is the inner's (``f``, ``x``, contexts); ``operator`` is
    "gradient" or "derivative". The returned function takes the outer
    framework's arrays (tracers included) and is differentiable there: its
    derivatives are the inner's second-order operators. Cross-framework
    ``SecondOrder`` uses it (``operators/_second_order.py::_first_derivative``).
    """
    from ._rules import FirstDerivativeRules

    f, backend, kinds = problem.f, problem.adapter.backend, tuple(type(c) for c in problem.contexts)
    x_shape = problem.x_shape
    bridge = Bridge(
        lambda x, contexts: FirstDerivativeRules(f, backend, framework, operator, x, contexts),
        framework,
    )

    def value_and_first(x, *ctx):
        z = bridge(x, *(kind(value) for kind, value in zip(kinds, ctx)))
        if operator == "gradient":
            return z[0], array_namespace(z).reshape(z[1:], x_shape)
        return z[0], z[1]

    return value_and_first
