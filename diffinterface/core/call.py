"""The one prepared-call path: every public operator goes through :func:`prepare` and :func:`call`.

``prepare`` validates the arguments, asks the adapter for the operator's
implementation and returns a :class:`~diffinterface.core.preparation.Preparation`.
``call`` runs a prepared method: on the fast path (a preparation of this
operator, no ``out=``, no ``y=``) it compares the call's key with the
preparation's (unless ``strict=False``) and calls the prepared method, and
nothing else; every other case (no preparation, ``out=``, ``y=``, a mismatch)
goes through :func:`_call_slowly`, where the checks, ``out=`` and ``y=`` are
handled in this one place.
"""

from __future__ import annotations

from ..arrays import describe, dtype_name, family_of, is_array, shape_of, write_out
from ..contexts import check_contexts
from ..errors import UnsupportedError
from .preparation import MISMATCH, Preparation
from .problem import Problem
from .registry import get_adapter

_FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


def check_x(x, adapter, op):
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
    if op.scalar_x and shape_of(x) != ():
        raise ValueError(f"x: {op.name} expects a scalar x (shape ()); got {describe(x)}")


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


def prepare(op, f, backend, x, tangents, contexts, y, strict):
    """Validate the arguments and build the :class:`Preparation` of the operator ``op``."""
    adapter = get_adapter(backend)
    if not callable(f):
        raise TypeError(f"f: expected a callable; got {type(f).__name__}")
    check_x(x, adapter, op)
    check_contexts(contexts)
    if not isinstance(strict, bool):
        raise TypeError(f"strict: expected True or False; got {strict!r}")
    if y is not None:
        if not op.allows_y:
            raise TypeError(f"y: {op.name} does not take two-argument functions f(y, x)")
        if not adapter.inplace:
            raise UnsupportedError(
                f"y: {type(backend).__name__} cannot differentiate two-argument functions f(y, x) "
                "that write into y (check_inplace(backend) is False); return the output from f instead"
            )
        if not is_array(y) or family_of(y) != family_of(x):
            raise TypeError(f"y: expected an output buffer of the same array family as x; got {describe(y)}")
    problem = Problem(adapter, f, x, tangents, contexts, y)
    if op.seeds == "cotangents":
        check_tangents(tangents, problem.spec.shape, "the output y", "cotangents")
    elif op.seeds == "tangents":
        check_tangents(tangents, problem.x_shape, "x")
    impl = problem.impl(op.name)
    return Preparation(op, f, backend, x, tangents, contexts, y, impl, problem._spec, strict)


def call(op, valued, f, backend, x, tangents, contexts, prep, out, y):
    """Run the operator ``op`` (its plain method, or with ``valued`` its value-and method)."""
    # prep=None fails the class test too: one test for "a preparation of this operator"
    if prep.__class__ is Preparation and prep.op is op and out is None and y is None:
        result = prep.runners[valued](f, backend, x, tangents, contexts)
        if result is not MISMATCH:
            return result
    return _call_slowly(op, valued, f, backend, x, tangents, contexts, prep, out, y)


def _call_slowly(op, valued, f, backend, x, tangents, contexts, prep, out, y):
    """Preparing when needed, checking, and handling ``out=`` and ``y=``."""
    if prep is None:
        prep = prepare(op, f, backend, x, tangents, contexts, y, strict=False)
    elif not isinstance(prep, Preparation):
        raise TypeError(f"prep: expected the result of prepare_{op.name}(...); got {type(prep).__name__}")
    else:
        prep.check(op, f, backend, x, tangents, contexts, y)
    # Only the value-and method gives the value that must land in y.
    returns_value_only_for_y = y is not None and not valued
    args = (x,) if tangents is None else (x, tangents)
    if contexts:
        args = (*args, *[c.value for c in contexts])
    result = prep.methods[1 if y is not None else valued](*args)
    if y is None and not valued:
        return result if out is None else write_out(out, result)
    n_values = op.n_values
    if y is not None:
        result = (write_out(y, result[0], "y"), *result[1:])
    if out is not None:
        derivatives = result[n_values:]
        if len(derivatives) == 1:
            derivatives = (write_out(out, derivatives[0]),)
        else:
            derivatives = write_out(out, tuple(derivatives))
        result = (*result[:n_values], *derivatives)
    if returns_value_only_for_y:
        return result[1] if len(result) == 2 else result[1:]
    return result
