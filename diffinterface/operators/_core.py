"""Machinery shared by every operator family: validation, preparation, fallbacks' tools.

``prepare(operator, ...)`` validates the arguments, asks the adapter for a
native implementation of ``operator`` and, where it has none, builds one with
the operator module's fallback (registered in ``FALLBACKS``). Fallbacks work in
the user's array family with the namespace of :mod:`diffinterface.arrays`.
"""

from __future__ import annotations

import numpy as np

from ..arrays import describe, dtype_name, family_of, from_numpy, is_array, namespace, shape_of, size_of, write_out
from ..backends import get_adapter
from ..contexts import check_contexts
from ..errors import UnsupportedError
from ..preparation import Preparation, signature

#: operator family name -> fallback(problem) -> Impl, filled by each operator module
FALLBACKS = {}

_FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


class Spec:
    """Shape and dtype of an array, as learned at preparation."""

    __slots__ = ("shape", "dtype", "size")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.size = size_of(self.shape)

    @classmethod
    def of(cls, a):
        if not is_array(a):
            raise TypeError(f"f: expected f to return an array or a number; it returned {describe(a)}")
        return cls(shape_of(a), dtype_name(a))

    def __repr__(self):
        return f"Spec({self.shape}, {self.dtype})"


class Problem:
    """Everything an adapter needs to prepare one operator (see ``backends/base.py``)."""

    def __init__(self, adapter, f, x, tangents, contexts, y):
        self.adapter = adapter
        self.f = f
        self.x = x
        self.tangents = tangents
        self.contexts = contexts
        self.ctx = tuple(c.value for c in contexts)
        self.y = y
        self.family = family_of(x)
        self.x_shape = shape_of(x)
        self.x_size = size_of(self.x_shape)
        self.x_dtype = dtype_name(x)
        self._spec = None if y is None else Spec.of(y)

    @property
    def spec(self):
        """Output shape and dtype, learned once (the adapter decides how)."""
        if self._spec is None:
            self._spec = self.adapter.output_spec(self)
        return self._spec

    def replace(self, **changes):
        """A copy with some fields changed (for instance other tangents); keeps the spec."""
        new = object.__new__(Problem)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    def mode(self, operator):
        return self.adapter.choose_mode(operator, self)

    def impl(self, operator, tangents=None):
        """The adapter's implementation of ``operator``, or the fallback built from primitives."""
        problem = self if tangents is None else self.replace(tangents=tangents)
        impl = getattr(self.adapter, "prepare_" + operator)(problem)
        if impl is None:
            impl = FALLBACKS[operator](problem)
        return impl

    # Helpers for fallbacks, in the user's array family.
    @property
    def xp(self):
        return namespace(self.family)

    def basis(self, shape, dtype):
        """The standard basis of arrays of ``shape`` and ``dtype`` in the user's family, as a tuple."""
        n = size_of(shape)
        eye = from_numpy(np.eye(n, dtype=dtype).reshape((n, *shape)), self.family, self.x)
        return tuple(eye[i] for i in range(n))

    def seeded(self, operator, seeds):
        """The primitive ``operator`` over all ``seeds``, as a :class:`Seeded` (batches prepared here once)."""
        return Seeded(self, operator, seeds)


class Seeded:
    """A primitive (pushforward or pullback) run over a fixed set of seeds.

    The seeds go in batches of at most the adapter's ``max_batch``, each batch
    prepared once. ``results(x, *ctx)`` gives the list of per-seed results;
    ``value_and_results(x, *ctx)`` gives ``(f(x), list)``: fallbacks use the
    former for plain operators so that no evaluation is spent on a value that
    is thrown away.
    """

    def __init__(self, problem, operator, seeds):
        step = problem.adapter.max_batch or len(seeds)
        batches = [seeds[i : i + step] for i in range(0, len(seeds), step)]
        impls = [problem.impl(operator, tangents=batch) for batch in batches]
        plain = [(getattr(impl, operator), batch) for impl, batch in zip(impls, batches)]
        valued = [(getattr(impl, "value_and_" + operator), batch) for impl, batch in zip(impls, batches)]
        if len(batches) == 1:
            (fn, batch), (value_fn, _) = plain[0], valued[0]
            self.results = lambda x, *ctx: fn(x, batch, *ctx)
            self.value_and_results = lambda x, *ctx: value_fn(x, batch, *ctx)
            return

        def results(x, *ctx):
            return [r for fn, batch in plain for r in fn(x, batch, *ctx)]

        def value_and_results(x, *ctx):
            (value_fn, first), rest = valued[0], plain[1:]
            value, parts = value_fn(x, first, *ctx)
            return value, [*parts, *(r for fn, batch in rest for r in fn(x, batch, *ctx))]

        self.results, self.value_and_results = results, value_and_results


def check_x(x, adapter, operator, *, scalar=False):
    if not is_array(x):
        raise TypeError(f"x: expected a float or an array; got {describe(x)}")
    if x.__class__ is not float and dtype_name(x) not in _FLOAT_DTYPES:
        raise TypeError(
            f"x: expected a real floating-point array (float32 or float64); got {describe(x)}. "
            "Convert it yourself (for example x.astype(float)): diffinterface does not change dtypes."
        )
    family = family_of(x)
    if family not in adapter.families:
        raise TypeError(
            f"x: {type(adapter.backend).__name__} differentiates {' or '.join(adapter.families)} "
            f"arrays; got {describe(x)}"
        )
    if scalar and shape_of(x) != ():
        raise ValueError(f"x: {operator} expects a scalar x (shape ()); got {describe(x)}")


def check_tangents(tangents, like_shape, like_name, name="tangents"):
    if not isinstance(tangents, tuple) or not tangents:
        raise TypeError(
            f"{name}: expected a non-empty tuple of arrays shaped like {like_name} (a batch); "
            f"got {type(tangents).__name__}"
        )
    for i, t in enumerate(tangents):
        if not is_array(t) or shape_of(t) != like_shape:
            raise ValueError(
                f"{name}[{i}]: expected an array shaped like {like_name}, {like_shape}; got {describe(t)}"
            )


def prepare(operator, f, backend, x, contexts, *, tangents=None, y=None, strict=False, scalar_x=False):
    """Validate the arguments and build the :class:`Preparation` of ``operator``."""
    adapter = get_adapter(backend)
    if not callable(f):
        raise TypeError(f"f: expected a callable; got {type(f).__name__}")
    check_x(x, adapter, operator, scalar=scalar_x)
    check_contexts(contexts)
    if y is not None:
        if not adapter.inplace:
            raise UnsupportedError(
                f"y: {type(backend).__name__} cannot differentiate two-argument functions f(y, x) "
                "that write into y (check_inplace(backend) is False); return the output from f instead"
            )
        if not is_array(y) or family_of(y) != family_of(x):
            raise TypeError(f"y: expected an output buffer of the same array family as x; got {describe(y)}")
    problem = Problem(adapter, f, x, tangents, contexts, y)
    if tangents is not None:
        if operator == "pullback":
            check_tangents(tangents, problem.spec.shape, "the output y", "cotangents")
        else:
            check_tangents(tangents, problem.x_shape, "x")
    impl = problem.impl(operator)
    recorded = signature(f, backend, x, tangents, contexts, y) if strict else None
    return Preparation(operator, backend, impl, problem._spec, strict, recorded)


def require_scalar_output(problem, operator):
    spec = problem.spec
    if spec.shape != ():
        raise ValueError(
            f"f: {operator} needs f to return a scalar; it returns shape {spec.shape}"
            + (" (use jacobian for array outputs)" if operator == "gradient" else "")
        )
    return spec


def stack_results(problem, results, axis):
    """Stack per-seed results along ``axis`` in the user's family."""
    xp = problem.xp
    return xp.stack(tuple(results), axis=axis)


def flatten(problem, a, n):
    return problem.xp.reshape(a, (n,))


def as_float(x):
    """A Python float x as a numpy float64 (so it has shape and dtype)."""
    return np.float64(x) if x.__class__ is float else x


def context_values(contexts):
    """The values ``f`` receives for its contexts (the fast path's only bookkeeping)."""
    if len(contexts) == 1:
        return (contexts[0].value,)
    return tuple(c.value for c in contexts)


def run(operator, method, f, backend, x, contexts, prep, *, tangents=None, out=None, y=None, n_values=0,
        scalar_x=False):
    """Run ``prep.impl.<method>``, preparing first when ``prep`` is None.

    ``n_values`` leading results are values (``value_and_*``), the rest are
    derivatives; ``out`` holds one buffer per derivative (a bare buffer when
    there is one). With a two-argument ``f`` the value is copied into ``y``.
    """
    if prep is None:
        prep = prepare(operator, f, backend, x, contexts, tangents=tangents, y=y, scalar_x=scalar_x)
    elif prep.strict or prep.operator != operator:
        prep.check(operator, f, backend, x, tangents, contexts, y)
    if y is not None and not n_values:
        # Only value_and_* gives the value that must land in y.
        method, n_values, keep = VALUE_METHODS[method], 1, False
    else:
        keep = True
    args = (x,) if tangents is None else (x, tangents)
    if contexts:
        args = (*args, *[c.value for c in contexts])
    result = getattr(prep.impl, method)(*args)
    if not n_values and y is None:
        return result if out is None else write_out(out, result)
    if y is not None:
        result = (write_out(y, result[0], "y"), *result[1:])
    if out is not None:
        derivs = result[n_values:]
        if len(derivs) == 1:
            derivs = (write_out(out, derivs[0]),)
        else:
            if not isinstance(out, tuple) or len(out) != len(derivs):
                raise ValueError(f"out: expected a tuple of {len(derivs)} buffers (or None entries)")
            derivs = tuple(d if o is None else write_out(o, d, f"out[{i}]") for i, (o, d) in enumerate(zip(out, derivs)))
        result = (*result[:n_values], *derivs)
    if keep:
        return result
    return result[1] if len(result) == 2 else result[1:]


#: operator method -> the value_and_ method that also gives f(x)
VALUE_METHODS = {
    "pushforward": "value_and_pushforward",
    "pullback": "value_and_pullback",
    "derivative": "value_and_derivative",
    "jacobian": "value_and_jacobian",
}
