"""What a bridge between frameworks shares: arrays crossing families, contexts, and each framework's rules.

``DifferentiateWith`` (``diffinterface/wrappers/differentiate_with/``) and
cross-framework ``SecondOrder`` run an inner backend's operators on behalf of
an outer framework. Each framework that can be the outer registers its rules,
a :class:`FrameworkBridge`, with its backend
(``register_backend(..., framework="jax", differentiate_with="module:attr")``);
they live in that backend's folder (``backends/<name>/differentiate_with.py``)
and are found here by the framework's name, so nothing in this module or in
the wrappers names a framework.

    >>> from diffinterface.core.bridge import HOST_FAMILY, to_family
    >>> to_family(2.0, HOST_FAMILY).dtype  # a Python float is a float64 scalar
    dtype('float64')
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..contexts import Cache
from ..errors import UnsupportedError
from ..families import FAMILIES, NUMBERS, dtype_name, family_of, shape_of
from .registry import framework_bridge

#: the family of the arrays an inner backend without a bridge computes on (finite differences,
#: autograd)
HOST_FAMILY = NUMBERS


class FrameworkBridge:
    """One framework's side of a bridge: how its arrays cross, and how it calls a bridged function.

    A backend whose framework traces its own arrays subclasses this in its
    folder and registers one instance (``differentiate_with=``). The defaults
    suit a framework whose concrete arrays are numpy's.
    """

    #: the array family the framework's backend evaluates ``f`` on as an inner backend
    inner_family = HOST_FAMILY
    #: True when context values of this family go to the inner as they are (not converted)
    keeps_contexts = False

    def call(self, bridge, x, contexts):
        """``bridge(x, *contexts)`` for an ``x`` of this framework, differentiable by it."""
        raise NotImplementedError

    def plain(self, a):
        """The concrete array behind ``a`` (no trace, no autograd history), still of this family."""
        return a

    def to_numpy(self, a):
        """The plain array ``a`` of this family as numpy, sharing memory where it can."""
        return np.asarray(a)

    def receive(self, a, source):
        """The plain array ``a`` of family ``source`` in this framework's family, sharing memory where it can."""
        raise TypeError(f"x: cannot hand a {source} array to a bridged function")

    def wide(self, dtype):
        """The context the framework's work on values of ``dtype`` (a name) runs in (JAX's x64 switch)."""
        return contextlib.nullcontext()

    def output_spec(self, evaluate, x, contexts):
        """``(shape, dtype name)`` of ``evaluate(x, contexts)`` without computing values, or None (evaluate)."""
        return None

    def krylov(self, method, function, y_shape, rtol, atol, maxiter):
        """The framework's own Krylov solver for ``function(y, *args)``'s Jacobian in y, or None (scipy's).

        Returns ``solve(y, args, rhs, transpose) -> (solutions, residuals,
        thresholds)`` (numpy; ``rhs`` flat ``(m, k)``), compiled once per shape,
        for a framework that can run the whole Krylov loop itself; None where
        the products cross into the framework from scipy's loop instead. It may
        also have ``solve.implicit_pullback(y, args, rhs) -> (products,
        residuals, thresholds)``: ``-B^T A^-T u`` per column u, B the Jacobian
        in ``args[0]``, the products in the framework's arrays of that argument's
        shape, the solve and the product in one program.
        """
        return None


def inner_family(framework):
    """The array family an inner backend of ``framework`` (None: none traces) computes ``f`` on."""
    rules = framework_bridge(framework) if framework is not None else None
    return rules.inner_family if rules is not None else HOST_FAMILY


def to_family(a, family):
    """The concrete array ``a`` (numpy, or a framework's) in ``family``, sharing memory where it can."""
    if a.__class__ is float:  # a Python float is a float64 scalar, as everywhere in diffinterface
        a = np.float64(a)
    source = family_of(a)
    if source == family:
        return a
    leaving = framework_bridge(source)
    if leaving is not None:
        a = leaving.plain(a)
    entering = framework_bridge(family)
    if entering is None:
        return leaving.to_numpy(a) if leaving is not None else np.asarray(a)
    return entering.receive(a, source)


def wide(family, dtype):
    """The context in which work of ``family`` on values of ``dtype`` runs (see :meth:`FrameworkBridge.wide`)."""
    rules = framework_bridge(family)
    return rules.wide(dtype) if rules is not None else contextlib.nullcontext()


def context_signature(contexts):
    """Kinds, families, dtypes and shapes of the contexts: what a preparation depends on."""
    return tuple(
        (type(c), family_of(c.value), dtype_name(c.value), shape_of(c.value))
        if family_of(c.value) != "unknown"
        else (type(c), type(c.value))
        for c in contexts
    )


def converted_contexts(contexts, family):
    """The contexts with their array values in ``family`` (other values as they are).

    Python numbers stay Python numbers, as in an unprepared call
    (:mod:`~diffinterface.core.foreign`): the inner ``f`` combines them with
    its arrays as its framework combines weakly typed scalars (a 0-d float64
    tensor would not multiply a float32 TensorFlow one).
    A ``Cache`` is scratch space the inner ``f`` writes: where the conversion
    gives a read-only numpy view (a JAX value handed to a callback), the inner
    gets a writable copy, since what it writes never flows back to the outer.
    """
    converted = []
    for c in contexts:
        source = family_of(c.value)
        rules = framework_bridge(source)
        if (
            source == "unknown"
            or c.value.__class__ in (float, int)
            or (rules is not None and rules.keeps_contexts)
        ):
            converted.append(c)
            continue
        value = to_family(c.value, family)
        if isinstance(c, Cache):
            value = FAMILIES[family_of(value)].writable(value)
        converted.append(type(c)(value))
    return tuple(converted)


class ThirdOrderError(UnsupportedError):
    """A derivative of a bridged function's second derivative was asked for."""


def third_order(what):
    """The error for a derivative the bridge does not provide (``what`` would need third derivatives)."""
    return ThirdOrderError(
        f"DifferentiateWith: {what} would need third derivatives of f, which the bridge does not "
        "provide (first and second order only)"
    )
