"""The inner side of a bridge: the inner backend's prepared operators for one input signature.

An outer framework (its rules in ``backends/<name>/differentiate_with.py``,
found through the registry) sees a bridged function as a value and five rules, all taking and returning concrete
arrays: ``value``, ``value_and_gradient`` (scalar outputs), ``pushforward``,
``pullback`` and ``hvp`` (``sum_k c_k * H_k @ v``, the derivative of a
pullback with respect to x). :class:`OperatorRules` computes them with the
inner backend's public operators, each prepared once per (operator, batch
size) and called with exactly the arguments it was prepared with, so strict
preparations hold. Arrays cross into the inner backend's family through
:func:`~diffinterface.core.bridge.to_family` (DLPack or a shared numpy buffer,
no copy) and come back the same way.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from ... import operators
from ...families import array_namespace, dtype_name, shape_of
from ...contexts import Constant
from ...core import get_adapter
from ...errors import UnsupportedError
from ...core.bridge import framework_bridge, inner_family, third_order, to_family, wide
from ...operators import (
    hvp,
    prepare_gradient,
    prepare_hvp,
    prepare_pullback,
    prepare_pushforward,
    pullback,
    pushforward,
    value_and_gradient,
)

# -- the inner backend's rules ----------------------------------------------------------------


def refuse_complex_x(x_dtype):
    """Raise for derivatives at a complex x: the outer framework would read them in its own convention."""
    if x_dtype.startswith("complex"):
        raise UnsupportedError(
            f"x: a DifferentiateWith function does not differentiate a complex x ({x_dtype}) inside another "
            "framework's differentiation yet: the frameworks disagree on the convention of complex derivatives. "
            "Pass (x.real, x.imag) and rebuild x inside f; see docs/complex.md"
        )


def _wide(method):
    """``method`` of a rules object in its inner family's context for its input's dtype (JAX's x64 switch)."""

    @functools.wraps(method)
    def widened(self, *args):
        with wide(self.family, self.x_dtype):
            return method(self, *args)

    return widened


class OperatorRules:
    """``f``'s value and derivatives by ``backend``, for inputs of one shape, dtype and context kinds.

    ``x`` and ``contexts`` are reference values in the inner family (the
    operators are prepared there once; later calls may use other values of the
    same signature).
    """

    def __init__(self, f, backend, framework, x, contexts):
        self.f, self.backend, self.family = f, backend, inner_family(framework)
        self.x_shape, self.x_dtype = shape_of(x), dtype_name(x)
        self._x, self._contexts = x, contexts
        self._preps = {}
        self._lock = threading.Lock()
        self.spec = self._output_spec()
        self.scalar = self.spec[0] == ()
        self.gradient_route = gradient_route(backend, self.spec[0])

    # evaluation
    def _call_f(self, x, contexts):
        with wide(self.family, self.x_dtype):
            return self.f(x, *[c.value for c in contexts])

    def _output_spec(self):
        """Shape and dtype of f's output: without values where the inner family can (torch's meta
        device), else one evaluation."""
        rules = framework_bridge(self.family)
        spec = (
            rules.output_spec(self._call_f, self._x, self._contexts) if rules is not None else None
        )
        if spec is not None:
            return spec
        with np.errstate(all="ignore"):
            y = self._call_f(self._x, self._contexts)
        return shape_of(y), dtype_name(y)

    def value(self, x, contexts):
        return self._call_f(x, contexts)

    # prepared operators
    def _prepared(self, key, make):
        prep = self._preps.get(key)
        if prep is None:
            refuse_complex_x(
                self.x_dtype
            )  # the value alone is fine (an outer complex step asks for it)
            with self._lock:
                prep = self._preps.get(key)
                if prep is None:
                    prep = self._preps[key] = make()
        return prep

    def _ones(self, shape, dtype, k):
        return tuple(to_family(np.ones(shape, dtype=dtype), self.family) for _ in range(k))

    def value_and_gradient(self, x, contexts):
        prep = self._prepared(
            ("gradient",), lambda: prepare_gradient(self.f, self.backend, self._x, *self._contexts)
        )
        return value_and_gradient(self.f, self.backend, x, *contexts, prep=prep)

    def pushforward(self, x, tangents, contexts):
        prep = self._prepared(
            ("pushforward", len(tangents)),
            lambda: prepare_pushforward(
                self.f,
                self.backend,
                self._x,
                self._ones(self.x_shape, self.x_dtype, len(tangents)),
                *self._contexts,
            ),
        )
        return pushforward(self.f, self.backend, x, tangents, *contexts, prep=prep)

    def pullback(self, x, cotangents, contexts):
        prep = self._prepared(
            ("pullback", len(cotangents)),
            lambda: prepare_pullback(
                self.f,
                self.backend,
                self._x,
                self._ones(*self.spec, len(cotangents)),
                *self._contexts,
            ),
        )
        return pullback(self.f, self.backend, x, cotangents, *contexts, prep=prep)

    @_wide
    def hvp(self, x, c, tangents, contexts):
        """``sum_k c_k H_k v`` for each ``v``: the derivative along v of the pullback of ``c``."""

        k = len(tangents)
        if self.scalar:
            prep = self._prepared(
                ("hvp", k),
                lambda: prepare_hvp(
                    self.f,
                    self.backend,
                    self._x,
                    self._ones(self.x_shape, self.x_dtype, k),
                    *self._contexts,
                ),
            )
            return tuple(
                c * h for h in hvp(self.f, self.backend, x, tangents, *contexts, prep=prep)
            )
        weighted = self._weighted()
        prep = self._prepared(
            ("hvp-weighted", k),
            lambda: prepare_hvp(
                weighted,
                self.backend,
                self._x,
                self._ones(self.x_shape, self.x_dtype, k),
                *self._contexts,
                Constant(self._ones(*self.spec, 1)[0]),
            ),
        )
        return hvp(weighted, self.backend, x, tangents, *contexts, Constant(c), prep=prep)

    def _weighted(self):
        """``x -> sum(c * f(x))``, with ``c`` its last (Constant) argument: one function object, kept."""
        weighted = self.__dict__.get("_weighted_f")
        if weighted is None:
            f = self.f

            def weighted(x, *args):
                y = f(x, *args[:-1])
                return array_namespace(y).sum(args[-1] * y)

            self._weighted_f = weighted
        return weighted


def gradient_route(backend, y_shape):
    """True for a scalar f (``y_shape == ()``) on a reverse-mode inner: it gives the gradient in one pass,
    so the outer asks for value and gradient together (one inner call per outer gradient) instead of a
    value pass plus a pullback pass."""
    if y_shape != ():
        return False
    adapter = get_adapter(backend)
    if adapter.capabilities.mode == "both":
        return backend.mode != "forward"
    return adapter.capabilities.mode == "reverse"


class FirstDerivativeRules:
    """Rules of ``x -> [f(x), gradient(x)]`` (flat) or ``x -> stack([f(x), f'(x)])`` by an inner backend.

    Cross-framework ``SecondOrder`` bridges this function: its pushforward and
    pullback are the inner's second-order operators (``gradient_and_hvp``,
    ``value_derivative_and_second_derivative``), so the outer framework
    differentiates the inner's first derivative with the inner's own rules.
    """

    scalar = False
    gradient_route = False

    def __init__(self, f, backend, framework, operator, x, contexts):
        self.f, self.backend, self.operator = f, backend, operator
        self.family = inner_family(framework)
        self.x_shape, self.x_dtype = shape_of(x), dtype_name(x)
        self._x, self._contexts = x, contexts
        self._preps = {}
        self._lock = threading.Lock()
        self.spec = None
        y = self.value(x, contexts)
        self.spec = (shape_of(y), dtype_name(y))

    _prepared = OperatorRules._prepared

    def _first(self, x, contexts):
        # The bridge keys its own preparations on the input signature; the contexts it hands over
        # may arrive in another array family than at preparation (a 0-d numpy or JAX scalar), which
        # the inner's prepared code accepts alike: the preparations here are unchecked.
        prep = self._prepared(
            ("first",),
            lambda: getattr(operators, "prepare_" + self.operator)(
                self.f, self.backend, self._x, *self._contexts, strict=False
            ),
        )
        return getattr(operators, "value_and_" + self.operator)(
            self.f, self.backend, x, *contexts, prep=prep
        )

    def _second(self, x, tangents, contexts):
        """(first derivative, second-order results along each tangent)."""
        if self.operator == "gradient":
            k = len(tangents)
            prep = self._prepared(
                ("hvp", k),
                lambda: operators.prepare_hvp(
                    self.f,
                    self.backend,
                    self._x,
                    tuple(
                        to_family(np.ones(self.x_shape, self.x_dtype), self.family)
                        for _ in range(k)
                    ),
                    *self._contexts,
                    strict=False,
                ),
            )
            return operators.gradient_and_hvp(
                self.f, self.backend, x, tangents, *contexts, prep=prep
            )
        prep = self._prepared(
            ("second",),
            lambda: operators.prepare_second_derivative(
                self.f, self.backend, self._x, *self._contexts, strict=False
            ),
        )
        _, d, dd = operators.value_derivative_and_second_derivative(
            self.f, self.backend, x, *contexts, prep=prep
        )
        return d, tuple(dd * t for t in tangents)

    @_wide
    def value(self, x, contexts):
        y, first = self._first(x, contexts)
        xp = array_namespace(first)
        if self.operator == "gradient":
            return _concat(xp, (xp.reshape(y, (1,)), xp.reshape(first, (-1,))))
        return xp.stack((y, first))

    @_wide
    def pushforward(self, x, tangents, contexts):
        first, second = self._second(x, tangents, contexts)
        xp = array_namespace(first)
        if self.operator == "gradient":
            return tuple(
                _concat(xp, (xp.reshape(xp.sum(first * t), (1,)), xp.reshape(h, (-1,))))
                for t, h in zip(tangents, second)
            )
        return tuple(xp.stack((first * t, h)) for t, h in zip(tangents, second))

    @_wide
    def pullback(self, x, cotangents, contexts):
        xp = array_namespace(cotangents[0])
        if self.operator == "gradient":  # H is symmetric: c_g @ H = H @ c_g
            first, second = self._second(
                x, tuple(xp.reshape(c[1:], self.x_shape) for c in cotangents), contexts
            )
            return tuple(c[0] * first + h for c, h in zip(cotangents, second))
        first, (dd,) = self._second(x, (1.0,), contexts)
        return tuple(xp.reshape(xp.sum(c[0] * first + c[1] * dd), self.x_shape) for c in cotangents)

    def hvp(self, x, c, tangents, contexts):
        raise third_order(f"differentiating SecondOrder's {self.operator} twice")


def _concat(xp, parts):
    concatenate = getattr(xp, "concatenate", None) or xp.concat
    return concatenate(parts)
