"""The point a DifferentiateWith inside JAX prepares its inner operators at: one the user passed, never an
invented one (see ``differentiate_with.py``'s docstring)."""

from __future__ import annotations

import jax
import numpy as np

from ...contexts import Cache
from ...core.bridge import context_signature, converted_contexts, framework_bridge, to_family
from ...errors import UnsupportedError
from ...families import dtype_name, family_of, shape_of


class ValuesNeededError(UnsupportedError):
    """A bridged function met under ``jax.jit`` for the first time, with an ``f`` JAX cannot trace: its output's
    shape can only be learned by evaluating ``f`` at a point the user passed."""


def _concrete(a):
    """The concrete JAX array behind the tracer ``a`` (the primal of eager ``grad``/``jvp``), or None under jit."""
    while isinstance(a, jax.core.Tracer):
        a = getattr(a, "primal", None)
    return a


class _Pending:
    """The rules of a signature first met without values (under jit): the output's shape from
    ``jax.eval_shape``; the inner operators prepared at the first point a callback receives."""

    def __init__(self, bridge, spec, x_shape, x_dtype):
        self.bridge, self.spec, self.x_shape, self.x_dtype = bridge, spec, x_shape, x_dtype
        # decided from the shape alone, as the rules will decide it: under jit too, a scalar f's
        # gradient costs one callback, which returns the value with it
        self.gradient_route = bridge.gradient_route(tuple(spec[0]))
        self._rules = None

    def _at(self, x, contexts):
        if self._rules is None:
            self._rules = self.bridge.rules(x, contexts)
        return self._rules

    def value(self, x, contexts):
        return self._at(x, contexts).value(x, contexts)

    def value_and_gradient(self, x, contexts):
        return self._at(x, contexts).value_and_gradient(x, contexts)

    def pushforward(self, x, tangents, contexts):
        return self._at(x, contexts).pushforward(x, tangents, contexts)

    def pullback(self, x, cotangents, contexts):
        return self._at(x, contexts).pullback(x, cotangents, contexts)

    def hvp(self, x, c, tangents, contexts):
        return self._at(x, contexts).hvp(x, c, tangents, contexts)


def _rules(bridge, x, contexts):
    """The bridge's rules for ``x``'s signature, prepared at a point the user passed (see the module docstring)."""
    key = (shape_of(x), dtype_name(x), context_signature(contexts))
    known = bridge.__dict__.setdefault("_jax_rules", {})
    rules = known.get(key)
    if rules is not None:
        return rules
    point = _concrete(x)
    values = [_concrete(c.value) if family_of(c.value) == "jax" else c.value for c in contexts]
    # a Cache is written by the inner f: a writable copy, never a read-only view of a JAX buffer
    values = [
        np.array(v) if isinstance(c, Cache) and v is not None and family_of(v) == "jax" else v
        for c, v in zip(contexts, values)
    ]
    if point is not None and all(v is not None for v in values):
        rules = bridge.rules(point, tuple(type(c)(v) for c, v in zip(contexts, values)))
    else:
        rules = _Pending(
            bridge, _spec_without_values(bridge, x, contexts), shape_of(x), dtype_name(x)
        )
    known[key] = rules
    return rules


def _spec_without_values(bridge, x, contexts):
    """``(shape, dtype name)`` of f's output at the traced ``x``, learned without computing any value: by the
    inner framework's shape-only evaluation (torch's meta device; the zeros below only carry shapes there), or
    by ``jax.eval_shape`` where JAX can trace f; else :class:`ValuesNeededError`."""
    if bridge.has_rules(
        x, contexts
    ):  # met before outside jit (a numpy or JAX call built its rules)
        return bridge.rules(x, contexts).spec
    declared = bridge.declared_spec(x, contexts)
    if declared is not None:
        return declared
    f = getattr(bridge, "f", None)
    if f is None:
        return _values_needed(
            bridge, x, TypeError("the bridge has no f to evaluate without values")
        )
    inner = framework_bridge(bridge.family)
    if inner is not None:

        def carrier(a):
            return to_family(np.zeros(shape_of(a), dtype=dtype_name(a)), bridge.family)

        shapes = tuple(
            type(c)(carrier(c.value)) if family_of(c.value) == "jax" else c for c in contexts
        )
        spec = inner.output_spec(
            lambda x, cs: f(x, *(c.value for c in cs)),
            carrier(x),
            converted_contexts(shapes, bridge.family),
        )
        if spec is not None:
            return spec
    try:
        out = jax.eval_shape(lambda x: f(x, *(c.value for c in contexts)), x)
    except Exception as error:  # noqa: BLE001 - f is not JAX code: no shape without values
        return _values_needed(bridge, x, error)
    return tuple(out.shape), str(out.dtype)


def _values_needed(bridge, x, error):
    raise ValuesNeededError(
        f"x: {bridge!r} was called under jax.jit at a {dtype_name(x)} {shape_of(x)} input it had not seen, "
        "and learns its output's shape by evaluating f at a point you pass (jit traces without values, and "
        f"neither JAX nor the inner framework can learn it without values: {type(error).__name__}: {error}). "
        "Call it once outside jax.jit with an array of this shape and dtype (numpy or JAX), or "
        "differentiate with jax.grad without jit: later jit traces use what it learned"
        + bridge.values_hint
    ) from error
