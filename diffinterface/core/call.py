"""The one prepared-call path: every public operator goes through :func:`prepare` and :func:`call`.

``prepare`` validates the arguments, asks the adapter for the operator's
implementation and returns a :class:`~diffinterface.core.preparation.Preparation`.
``call`` runs a prepared method: on the fast path (a preparation of this
operator, no ``out=``, no ``y=``) the preparation's runner compares the
call's key with the preparation's (unless ``strict=False``) and calls the
prepared method, and nothing else. The public functions test for the fast
path themselves: those of operators without seeds serve an array x without
contexts in their own frame (:func:`prepared_fast_path`), the others call
the runner directly (one frame fewer than through ``call``). Every other
case (no preparation, ``out=``, ``y=``, a mismatch) goes through
:func:`_call_slowly`, where the checks, ``out=`` and ``y=`` are handled in
this one place; an exception from f goes through :func:`_off_the_fast_path`
to the explanation of core/boundary.py.

A pytree ``x`` is prepared by :func:`_prepare_tree`: its flattening plan
(:mod:`diffinterface.core.pytree`) is part of the preparation, whose methods
already ravel and unravel, so :func:`call` takes the same fast path for trees
and arrays, and a plain array pays nothing for trees.
"""

from __future__ import annotations

from functools import wraps

import numpy as np

from ..families import describe, dtype_name, family_of, is_array, shape_of, write_out
from ..contexts import check_contexts
from ..errors import UnsupportedError, XSignatureChangedError
from .boundary import explain
from .empty import is_empty, prepare_empty
from .preparation import Preparation
from .problem import Problem, Spec
from .pytree import TREE_OUTPUT_OPERATORS, TreePlan, output_plan, write_tree_out
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


def check_tangents(tangents, like, like_name, name="tangents"):
    """Raise unless ``tangents`` is a non-empty tuple of real floating arrays shaped like ``like`` (a Spec).

    Each must have ``like``'s dtype too: derivatives are computed in that dtype,
    and a complex tangent for a real function has no real meaning (JAX would
    silently drop its imaginary part).
    """
    if not isinstance(tangents, tuple) or not tangents:
        raise TypeError(
            f"{name}: expected a non-empty tuple of arrays shaped like {like_name} (a batch; for one, "
            f"({name[:-1]},)); got {describe(tangents) if is_array(tangents) else type(tangents).__name__}"
        )
    for i, t in enumerate(tangents):
        if not is_array(t) or shape_of(t) != like.shape:
            raise ValueError(
                f"{name}[{i}]: expected an array shaped like {like_name}, {like.shape}; got {describe(t)}"
            )
        dtype = dtype_name(t)
        if dtype != like.dtype:
            kind = (
                "a real floating-point array" if dtype not in _FLOAT_DTYPES
                else f"the dtype of {like_name}"
            )
            raise TypeError(
                f"{name}[{i}]: expected {kind}, {like.dtype} like {like_name}; got {describe(t)}. "
                "Convert it yourself: diffinterface does not change dtypes."
            )


def prepare(op, f, backend, x, tangents, contexts, y, strict, learn_output=False):
    """Validate the arguments and build the :class:`Preparation` of the operator ``op``.

    ``learn_output`` learns f's output at preparation even where the adapter
    would not (``output_from_each_call``): see :func:`_learned_tree_output`.
    """
    adapter = get_adapter(backend)
    if not callable(f):
        raise TypeError(f"f: expected a callable; got {type(f).__name__}")
    tree = None if is_array(x) else _tree_plan(x, adapter, op)
    if tree is None:
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
        if not is_array(y) and output_plan(y, "numpy") is not None:
            raise TypeError(
                f"y: a two-argument f(y, x) writes into one array y; got a pytree {type(y).__name__}. "
                "For a pytree output, return it from a one-argument f(x) instead"
            )
        if not is_array(y) or family_of(y) != family_of(x):
            raise TypeError(f"y: expected an output buffer of the same array family as x; got {describe(y)}")
    if tree is not None:
        return _prepare_tree(op, f, backend, adapter, tree, x, tangents, contexts, y, strict, learn_output)
    problem = Problem(adapter, f, x, tangents, contexts, y, strict=strict)
    ytree = None
    try:
        if op.name in TREE_OUTPUT_OPERATORS and y is None:
            problem, ytree = _output_tree(op, problem, learn_output)
        if op.seeds == "cotangents":
            check_tangents(problem.tangents, problem.spec, "the output y", "cotangents")
        elif op.seeds == "tangents":
            check_tangents(tangents, Spec(problem.x_shape, problem.x_dtype), "x")
        impl = _impl(op, problem)
    except Exception as error:
        better = explain(error, adapter, f, x, problem.ctx, y, trees=op.name in TREE_OUTPUT_OPERATORS)
        if better is None:
            raise
        raise better from error
    if ytree is None:
        methods = _zero_d_results_as_arrays(op, impl, adapter, problem)
    else:
        methods = ytree.wrap(op, (getattr(impl, op.plain), getattr(impl, op.valued)), None)
        methods = _zero_d_results_as_arrays(op, None, adapter, problem, methods) or methods
    return Preparation(op, f, backend, x, tangents, contexts, y, impl, problem._spec, strict, methods=methods,
                       ytree=ytree, off_path=_off_the_fast_path)


def _output_tree(op, problem, learn_output=False):
    """``(problem, plan)``: for a pytree output ``f(x)``, the flat-output problem and its :class:`OutputPlan`.

    An array output returns ``(problem, None)`` after learning the output spec
    the adapter learns anyway (no extra work, no wrapper). Only when the
    adapter refuses the output as not an array is ``f`` probed, once, through
    the adapter's own evaluation (JAX traces it, so leaves may be tracers:
    only their shapes and dtypes are kept).
    """
    if not learn_output and problem._spec is None and op.name in problem.adapter.output_from_each_call:
        return problem, None  # learning the output here would cost an evaluation the native recipe does not make
    try:
        problem.spec
        return problem, None
    except TypeError as error:
        refusal = error
    plans, failures = [], []
    f = problem.f

    def probe(*args):
        out = f(*args)
        try:
            plan = output_plan(out, problem.family)
        except TypeError as error:  # a leaf that is no float array: the plan names it
            failures.append(error)
            raise
        if plan is None:
            return out
        plans.append(plan)
        return plan.ravel_output(out)

    probed = problem.replace(f=probe, _spec=None)
    try:
        spec = probed.spec
    except TypeError:
        if failures:
            raise failures[0] from None
        if not plans:
            raise refusal from None
        raise
    if not plans:
        raise refusal
    plan = plans[-1]
    problem = problem.replace(f=plan.flat_output(f), _spec=spec)
    if op.seeds == "cotangents":
        cotangents = problem.tangents
        _check_tree_seeds(cotangents, plan, "cotangents", "the output y = f(x)")
        problem = problem.replace(tangents=tuple(plan.ravel(c) for c in cotangents))
    return problem, plan


def _as_array(result):
    """``result`` with NumPy scalars and floats (in nested tuples too) as 0-d ``np.ndarray``."""
    if result.__class__ is tuple:
        return tuple(_as_array(r) for r in result)
    if isinstance(result, (float, np.generic)):
        return np.asarray(result)
    return result


def _zero_d_results_as_arrays(op, impl, adapter, problem, methods=None):
    """The (plain, valued) methods (``impl``'s, or ``methods``), wrapped where a numpy result may be a NumPy scalar.

    The contract promises a 0-d ``np.ndarray`` for every 0-d numpy result; an
    adapter that does not (``numpy_results_are_arrays`` False) gets its methods
    wrapped, and only when a result can be 0-d: when x or f(x) is. ``None``
    keeps the methods as they are, so every other call pays nothing.
    """
    if adapter.numpy_results_are_arrays or problem.family != "numpy":
        return None
    spec = problem._spec
    if problem.x_shape and spec is not None and spec.shape:
        return None
    plain, valued = methods or (getattr(impl, op.plain), getattr(impl, op.valued))
    ndarray = np.ndarray

    def plain_as_array(*args):
        result = plain(*args)
        return result if result.__class__ is ndarray else _as_array(result)

    return plain_as_array, (lambda *args: _as_array(valued(*args)))


def _impl(op, problem):
    """The prepared implementation of ``op``: the adapter's, or the core's answer to an empty problem.

    An empty ``x`` is known before asking the adapter; an empty ``f(x)`` only
    once the output's shape is learned, which the adapter may do while
    preparing (:mod:`diffinterface.core.empty`).
    """
    handles_empty = op.name in problem.adapter.own_empty_results
    if not handles_empty and is_empty(op, problem):
        return prepare_empty(op, problem)
    impl = problem.impl(op.name)
    if not handles_empty and is_empty(op, problem):
        return prepare_empty(op, problem)
    return impl


def _explained(error, prep, f, x, contexts, y):
    """``error`` raised by a prepared method, as :func:`~diffinterface.core.boundary.explain` sees it."""
    return explain(error, get_adapter(prep.backend), f, x, tuple(c.value for c in contexts), y,
                   trees=prep.op.name in TREE_OUTPUT_OPERATORS)


def _raise_explained(error, prep, f, x, contexts, y):
    """Raise ``error`` as :func:`_explained` rewrites it (chained), or as it is when nothing is clearer."""
    better = _explained(error, prep, f, x, contexts, y)
    if better is None:
        raise error
    raise better from error


def _tree_plan(x, adapter, op):
    """The flattening plan of a pytree ``x``, checked against the adapter and the operator."""
    tree = TreePlan(x, narrowest=adapter.framework is None)
    if tree.family not in adapter.families:
        raise TypeError(
            f"x: {type(adapter.backend).__name__} differentiates {' or '.join(adapter.families)} "
            f"arrays; got a tree of {tree.family} arrays"
        )
    if op.scalar_x:
        raise ValueError(f"x: {op.name} expects a scalar x (shape ()); got a tree of {len(tree.shapes)} leaves")
    return tree


def _check_tree_seeds(seeds, plan, name, like):
    """Raise unless ``seeds`` is a non-empty tuple of trees that ``plan`` (of x or of y) fits."""
    if not isinstance(seeds, tuple) or not seeds:
        raise TypeError(f"{name}: expected a non-empty tuple of trees shaped like {like} (a batch); "
                        f"got {type(seeds).__name__}")
    for i, seed in enumerate(seeds):
        plan.check(seed, f"{name}[{i}]")


def _prepare_tree(op, f, backend, adapter, tree, x, tangents, contexts, y, strict, learn_output=False):
    """The preparation of ``op`` at a pytree ``x``: natively when the adapter takes trees, else flat."""
    if op.seeds == "tangents":
        _check_tree_seeds(tangents, tree, "tangents", "x")
    native = adapter.takes_tree(op.name, tree)
    if native:
        problem = Problem(adapter, f, x, tangents, contexts, y, tree=tree, strict=strict)
        methods = None
    else:
        flat_tangents = tuple(tree.ravel(t) for t in tangents) if op.seeds == "tangents" else tangents
        flat_f = tree.flat_function(f, two_argument=y is not None)
        problem = Problem(adapter, flat_f, tree.ravel(x), flat_tangents, contexts, y, strict=strict)
    ytree = None
    if op.name in TREE_OUTPUT_OPERATORS and y is None and not native:
        # a flat tree problem's jacobian needs f's output shape anyway (tree.wrap below): learn it now
        problem, ytree = _output_tree(op, problem, learn_output=True)
    if op.seeds == "cotangents":
        check_tangents(problem.tangents, problem.spec, "the output y", "cotangents")
    impl = _impl(op, problem)
    if not native:
        methods = tree.wrap(op, impl, problem.spec.shape if op.name == "jacobian" else None)
        if ytree is not None:
            methods = ytree.wrap(op, methods, tree)
        methods = _zero_d_results_as_arrays(op, None, adapter, problem, methods) or methods
    return Preparation(op, f, backend, x, tangents, contexts, y, impl, problem._spec, strict, tree, methods, ytree,
                       _off_the_fast_path)


def call(op, valued, f, backend, x, tangents, contexts, prep, out, y):
    """Run the operator ``op`` (its plain method, or with ``valued`` its value-and method).

    The public functions test for the fast path themselves (one frame fewer);
    this is the same test, for every other caller.
    """
    # prep=None fails the class test too
    if prep.__class__ is Preparation and prep.op is op and out is None and y is None:
        return prep.runners[valued](f, backend, x, tangents, contexts)
    return _call_slowly(op, valued, f, backend, x, tangents, contexts, prep, out, y)


def prepared_fast_path(op, valued):
    """Decorator of the public functions of an operator without seeds: the prepared call in this one frame.

    The returned function takes the decorated one's arguments. A preparation
    of ``op`` made for an array x without contexts (``prep.direct``) is
    served here: f and the backend compared by identity, x by class (and by
    shape and dtype unless ``prep.x_checked``), then the prepared method,
    with no other Python frame between the user and the adapter (on the
    smallest JAX calls each frame costs about 3 %). Any other preparation
    of ``op`` goes to its runner, and everything else (no preparation,
    ``out=``, ``y=``) to the decorated function's body.
    """

    def decorate(public):
        # one signature for both kinds: a y= given to an operator without it reaches the body, whose
        # own signature refuses it (TypeError naming the function)
        def fast(f, backend, x, *contexts, prep=None, out=None, y=None):
            if prep.__class__ is Preparation and out is None and y is None:
                if (
                    prep.direct is op and f is prep.f and backend is prep.backend
                    and x.__class__ is prep.x_class and not contexts
                    and (prep.x_checked
                         or (x.shape == prep.x_shape and ((d := x.dtype) is prep.x_dtype or d == prep.x_dtype)))
                ):
                    try:
                        return prep.methods[valued](x)
                    except Exception as error:
                        return _off_the_fast_path(prep, valued, error, f, backend, x, None, contexts)
                if prep.op is op:
                    return prep.runners[valued](f, backend, x, None, contexts)
            if y is None:
                return public(f, backend, x, *contexts, prep=prep, out=out)
            return public(f, backend, x, *contexts, prep=prep, out=out, y=y)

        return wraps(public)(fast)

    return decorate


def _off_the_fast_path(prep, valued, error, f, backend, x, tangents, contexts):
    """Where a prepared runner sends a call it cannot finish: a failed check (``error`` None) or f's exception.

    A failed check goes to :func:`_call_slowly`, which compares the full
    signature (raising on a real mismatch). An exception is explained
    (core/boundary.py), unless it was a pytree output met for the first time.
    """
    op = prep.op
    if error is None or isinstance(error, XSignatureChangedError):
        return _call_slowly(op, valued, f, backend, x, tangents, contexts, prep, None, None)
    if _learned_tree_output(error, op, f, backend, x, tangents, contexts, prep, None):
        return call(op, valued, f, backend, x, tangents, contexts, prep, None, None)
    _raise_explained(error, prep, f, x, contexts, None)


def _learned_tree_output(error, op, f, backend, x, tangents, contexts, prep, y):
    """True when ``prep`` was rebuilt for a pytree output that its adapter met only at the call.

    An adapter that learns f's output from each call's forward pass
    (``output_from_each_call``, autograd's jacobian) is prepared without
    evaluating f, so a pytree output first shows up as that call's TypeError.
    Only then, on this error path, f's output is learned (one evaluation) and
    ``prep`` becomes the preparation for that output tree, in place: the
    caller's object keeps working, and array outputs never pay for this.
    """
    if not (isinstance(error, TypeError) and prep.ytree is None and y is None and op.name in TREE_OUTPUT_OPERATORS
            and op.name in get_adapter(backend).output_from_each_call):
        return False
    try:
        fresh = prepare(op, f, backend, x, tangents, contexts, y, prep.strict, learn_output=True)
    except TypeError:  # not a pytree either: the original error stands
        return False
    if fresh.ytree is None:
        return False
    for slot in Preparation.__slots__:
        setattr(prep, slot, getattr(fresh, slot))
    return True


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
    try:
        result = prep.methods[1 if y is not None else valued](*args)
    except Exception as error:
        if _learned_tree_output(error, op, f, backend, x, tangents, contexts, prep, y):
            return _call_slowly(op, valued, f, backend, x, tangents, contexts, prep, out, y)
        _raise_explained(error, prep, f, x, contexts, y)
    if prep.tree is None and prep.ytree is None:
        def write(o, r):
            return write_out(o, r, avoid=x)
    else:
        write = write_tree_out
    if y is None and not valued:
        return result if out is None else write(out, result)
    n_values = op.n_values
    if y is not None:
        result = (write_out(y, result[0], "y"), *result[1:])
    if out is not None:
        derivatives = result[n_values:]
        if len(derivatives) == 1:
            derivatives = (write(out, derivatives[0]),)
        else:
            derivatives = write(out, tuple(derivatives))
        result = (*result[:n_values], *derivatives)
    if returns_value_only_for_y:
        return result[1] if len(result) == 2 else result[1:]
    return result
