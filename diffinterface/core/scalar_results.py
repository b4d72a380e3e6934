"""0-d results as arrays: a numpy result of shape () is a 0-d ``np.ndarray``, never a NumPy scalar.

numpy's reductions and indexing return NumPy scalars (and plain floats);
the contract promises arrays. An adapter that already returns arrays says so
(``numpy_results_are_arrays``); for every other one, the methods whose
results can be 0-d are wrapped, decided once at preparation, so a prepared
call whose results cannot be 0-d pays nothing.

    >>> import numpy as np, diffinterface as di
    >>> type(di.derivative(lambda x: x**2, di.AutoFiniteDiff(), 1.0)).__name__
    'ndarray'
"""

from __future__ import annotations

import numpy as np

from ..families import FAMILIES
from .transform import Step


def zero_d_results(draft, setting):
    """The transform turning 0-d numpy results into arrays where the adapter may return scalars."""
    if setting.adapter.numpy_results_are_arrays:
        return None
    op, adapter = draft.call.op, setting.adapter

    def wrap(built):
        problem = built.problem
        if problem is None or problem.tree is not None:  # handed over whole, or a pytree x as it is
            return built
        methods = _zero_d_methods(op, adapter, problem, built.methods)
        return built if methods is None else built._replace(methods=methods)

    return Step(draft, wrap)


def _as_array(result):
    """``result`` with NumPy scalars and floats (in nested tuples too) as 0-d ``np.ndarray``."""
    if result.__class__ is tuple:
        return tuple(_as_array(r) for r in result)
    if isinstance(result, (float, np.generic)):
        return np.asarray(result)
    return result


def _zero_d_methods(op, adapter, problem, methods):
    """The (plain, valued) ``methods``, wrapped where a numpy result may be a NumPy scalar.

    The contract promises a 0-d ``np.ndarray`` for every 0-d numpy result; an
    adapter that does not (``numpy_results_are_arrays`` False) gets its methods
    wrapped, and only when a result can be 0-d: the value-and method when x or
    f(x) is, the plain one when its result is (``op.result_shape``). ``None``
    keeps the methods as they are, so every other call pays nothing; a
    prepared gradient at an array x, say, goes to the adapter unwrapped.
    """
    if adapter.numpy_results_are_arrays or not FAMILIES[problem.family].scalar_results:
        return None
    spec = problem._spec
    x_scalar, y_scalar = not problem.x_shape, spec is None or not spec.shape
    if not (x_scalar or y_scalar):
        return None
    plain, valued = methods
    plain_scalar = {"x": x_scalar, "y": y_scalar, "y+x": x_scalar and y_scalar, "x+x": x_scalar}[
        op.result_shape
    ]
    if not plain_scalar:
        return plain, (lambda *args: _as_array(valued(*args)))
    ndarray = np.ndarray

    def plain_as_array(*args):
        result = plain(*args)
        return result if result.__class__ is ndarray else _as_array(result)

    return plain_as_array, (lambda *args: _as_array(valued(*args)))
