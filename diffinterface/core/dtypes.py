"""Result dtypes and kinds, decided at preparation: derivatives in x's dtype, 0-d results as arrays.

A real f of a real x may compute in another dtype than x's (a float32 x
promoted by a float64 ``Constant``, ``xp.astype(x, xp.float64)`` inside f,
or a float64 x whose f returns float32). The frameworks disagree on what
their derivatives' dtype then is (a reverse pass ends in x's dtype, a
forward pass or a difference quotient in f's output's), so the core decides
once, at preparation, where the output's dtype is known: derivatives are cast
to x's dtype. The value ``f(x)`` is f's own and keeps its dtype. A prepared
call pays for the cast only where the dtypes differ (known at preparation);
elsewhere its methods are the adapter's own.

A complex-valued f of a real x is refused when its output is learned
(:func:`require_real_output`): a real derivative would drop half of its
value, a complex one is not supported yet.

Both rules apply where the output's dtype is known at preparation (the
adapter learned it, as most do, or ``y=`` gave it). An adapter that learns f's
output only at each call (``output_from_each_call``) or never (a reverse pass
seeded by a scalar) must keep them itself. Not covered yet: a pytree output, whose
derivatives' leaves take each output leaf's dtype (the output plan casts them).

A 0-d numpy result is a 0-d ``np.ndarray``, never a NumPy scalar (numpy's
reductions and indexing return those): an adapter that already returns
arrays says so (``numpy_results_are_arrays``); for every other one, the
methods whose results can be 0-d are wrapped, decided at preparation too.

    >>> import numpy as np, diffinterface as di
    >>> type(di.derivative(lambda x: x**2, di.AutoFiniteDiff(), 1.0)).__name__
    'ndarray'
    >>> x = np.ones(2, dtype=np.float32)
    >>> di.gradient(lambda x, c: (x * c).sum(), di.AutoFiniteDiff(), x, di.Constant(np.full(2, 2.0))).dtype
    dtype('float32')
"""

from __future__ import annotations

import numpy as np

from ..families import FAMILIES, FLOAT_DTYPES, cast
from .transform import Step


def require_real_output(spec, x_dtype, f):
    """Raise a TypeError naming ``f`` when its output (``spec``) is complex while x (``x_dtype``) is real."""
    if spec.dtype.startswith("complex") and x_dtype in FLOAT_DTYPES:
        raise TypeError(
            f"f: expected f to return real floating-point values for a real x ({x_dtype}); it returned "
            f"{spec.dtype} of shape {spec.shape}. Return the real part (xp.real(...)), or the real and "
            "imaginary parts stacked (xp.stack([xp.real(y), xp.imag(y)])): diffinterface differentiates "
            "real-valued functions; complex outputs are not supported yet."
        )


def _cast_all(result, dtype):
    """``result`` (an array, or a tuple of arrays) cast to ``dtype``."""
    if result.__class__ is tuple:
        return tuple(_cast_all(r, dtype) for r in result)
    return cast(np.asarray(result) if result.__class__ is float else result, dtype)


def derivatives_in_x_dtype(op, problem, methods):
    """The (plain, valued) ``methods`` wrapped to cast derivatives to x's dtype, or None when they need not be.

    Decided at preparation: only when the output's dtype is known (``problem._spec``)
    and differs from x's, both real floating dtypes.
    """
    spec, x_dtype = problem._spec, problem.x_dtype
    if (
        spec is None
        or spec.dtype == x_dtype
        or spec.dtype not in FLOAT_DTYPES
        or x_dtype not in FLOAT_DTYPES
    ):
        return None
    plain, valued = methods
    n_values = op.n_values

    def plain_in_x_dtype(*args):
        return _cast_all(plain(*args), x_dtype)

    def valued_in_x_dtype(*args):
        result = valued(*args)
        return (*result[:n_values], *(_cast_all(r, x_dtype) for r in result[n_values:]))

    return plain_in_x_dtype, valued_in_x_dtype


def result_dtype(draft, setting):
    """The transform casting derivatives to x's dtype where f's output has another (a pytree output's
    plan casts each leaf itself)."""
    if draft.ytree is not None:
        return None
    op = draft.call.op

    def wrap(built):
        problem = built.problem
        if problem.tree is not None:  # a pytree x as it is: its adapter keeps each leaf's dtype
            return built
        methods = derivatives_in_x_dtype(op, problem, built.methods)
        return built if methods is None else built._replace(methods=methods)

    return Step(draft, wrap)


def zero_d_results(draft, setting):
    """The transform turning 0-d numpy results into arrays where the adapter may return scalars."""
    if setting.adapter.capabilities.numpy_results_are_arrays:
        return None
    op, adapter = draft.call.op, setting.adapter

    def wrap(built):
        problem = built.problem
        if problem is None or problem.tree is not None:  # handed over whole, or a pytree x as it is
            return built
        methods = _zero_d_methods(op, adapter, problem, built.methods)
        return built if methods is None else built._replace(methods=methods)

    return Step(draft, wrap)


def _as_arrays(result, as_result):
    """``result`` (an array, or nested tuples of them) as the family's ``as_result`` makes each one."""
    if result.__class__ is tuple:
        return tuple(_as_arrays(r, as_result) for r in result)
    return as_result(result)


def _zero_d_methods(op, adapter, problem, methods):
    """The (plain, valued) ``methods``, wrapped where a numpy result may be a NumPy scalar.

    The contract promises a 0-d ``np.ndarray`` for every 0-d numpy result; an
    adapter that does not (``numpy_results_are_arrays`` False) gets its methods
    wrapped, and only when a result can be 0-d: the value-and method when x or
    f(x) is, the plain one when its result is (``op.result_shape``). ``None``
    keeps the methods as they are, so every other call pays nothing; a
    prepared gradient at an array x, say, goes to the adapter unwrapped.
    """
    family = FAMILIES[problem.family]
    if adapter.capabilities.numpy_results_are_arrays or not family.scalar_results:
        return None
    spec = problem._spec
    x_scalar, y_scalar = not problem.x_shape, spec is None or not spec.shape
    if not (x_scalar or y_scalar):
        return None
    plain, valued = methods
    plain_scalar = {"x": x_scalar, "y": y_scalar, "y+x": x_scalar and y_scalar, "x+x": x_scalar}[
        op.result_shape
    ]
    as_result = family.as_result

    def valued_as_arrays(*args):
        return _as_arrays(valued(*args), as_result)

    if not plain_scalar:
        return plain, valued_as_arrays

    if op.seeds is None:  # one result, never a tuple of them

        def plain_as_arrays(*args):
            return as_result(plain(*args))

    else:

        def plain_as_arrays(*args):
            return _as_arrays(plain(*args), as_result)

    return plain_as_arrays, valued_as_arrays
