"""Preparing an operator call: validate the arguments once, ask the adapter, build the :class:`Preparation`.

:func:`prepare` takes a :class:`~diffinterface.core.preparation.Call` (the
arguments by name). An array ``x`` goes to the adapter as it is. A pytree
``x`` (:func:`_prepare_tree`) goes as it is to an adapter that takes it for
this operator, else as a flat problem whose methods the operator's rules
(``Rules.flat_x``) wrap to take and return trees; a pytree output
(:func:`_output_tree`, operators whose row has ``tree_output``) is learned
once and its rules (``Rules.flat_y``) wrap the methods likewise. So every
prepared call takes the same path for trees and arrays, and a plain array
pays nothing for trees.
"""

from __future__ import annotations

import numpy as np

from ..contexts import check_contexts
from ..errors import UnsupportedError
from ..families import FAMILIES, NUMBERS, describe, dtype_name, family_of, is_array, shape_of
from .aux import AuxCapture, aux_methods, capture_of, primal_of, require_has_aux
from .boundary import explain
from .complex_convention import has_complex_leaf, prepare_complex
from .dtypes import derivatives_in_x_dtype, require_real_output
from .empty import is_empty, prepare_empty
from .foreign import converted_contexts, converting_contexts, foreign_constants, require_family
from .output_tree import output_plan
from .preparation import Plan, Preparation
from .problem import Problem, Spec
from .pytree import _FLOAT_DTYPES, TreePlan, require_real_float
from .registry import get_adapter
from .same_point import same_point_plan


#: what to do with an x that is neither real floating-point nor complex (core/complex_convention.py takes those)
_REAL_X_ADVICE = "Convert an integer x yourself (x.astype(float))"


def check_x(x, adapter, op):
    if not is_array(x):
        raise TypeError(f"x: expected a float or an array; got {describe(x)}")
    require_real_float(x, "x", _REAL_X_ADVICE)
    family = family_of(x)
    if family not in adapter.capabilities.families:
        raise TypeError(
            f"x: {type(adapter.backend).__name__} differentiates {' or '.join(adapter.capabilities.families)} "
            f"arrays; got {describe(x)}"
        )
    if op.scalar_x and shape_of(x) != ():
        raise ValueError(f"x: {op.name} expects a scalar x (shape ()); got {describe(x)}")


def check_tangents(tangents, like, like_name, name="tangents", family=None):
    """Raise unless ``tangents`` is a non-empty tuple of real floating arrays shaped like ``like`` (a Spec).

    Each must have ``like``'s dtype too: derivatives are computed in that dtype,
    and a complex tangent for a real function has no real meaning (JAX would
    silently drop its imaginary part); and, given ``family``, be an array of
    that family (x's).
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
                "a real floating-point array"
                if dtype not in _FLOAT_DTYPES
                else f"the dtype of {like_name}"
            )
            raise TypeError(
                f"{name}[{i}]: expected {kind}, {like.dtype} like {like_name}; got {describe(t)}. "
                "Convert it yourself: diffinterface does not change dtypes."
            )
        if family is not None:
            require_family(t, family, f"{name}[{i}]", like_name)


def _check_y(call, adapter):
    op, y = call.op, call.y
    if not op.two_argument:
        raise TypeError(f"y: {op.name} does not take two-argument functions f(y, x)")
    if not adapter.capabilities.inplace:
        raise UnsupportedError(
            f"y: {type(call.backend).__name__} cannot differentiate two-argument functions f(y, x) "
            "that write into y (check_inplace(backend) is False); return the output from f instead"
        )
    if not is_array(y) and output_plan(y, NUMBERS) is not None:
        raise TypeError(
            f"y: a two-argument f(y, x) writes into one array y; got a pytree {type(y).__name__}. "
            "For a pytree output, return it from a one-argument f(x) instead"
        )
    if not is_array(y) or family_of(y) != family_of(call.x):
        raise TypeError(
            f"y: expected an output buffer of the same array family as x; got {describe(y)}"
        )


def prepare(call, strict, learn_output=False, one_off=False, point_checked=False):
    """Validate the :class:`~diffinterface.core.preparation.Call` and build its :class:`Preparation`.

    ``learn_output`` learns f's output at preparation even where the adapter
    would not (``output_from_each_call``): see ``core/call.py``'s ``_learned_tree_output``.
    ``one_off`` marks the preparation of an unprepared call (:attr:`Problem.one_off`).
    ``point_checked``: the methods of a same-point preparation (``call.same_point``) are wrapped by the
    caller, which checks each call's x (:mod:`diffinterface.core.same_point`).
    """
    op, f, x = call.op, call.f, call.x
    adapter = get_adapter(call.backend)
    if (
        call.has_aux
    ):  # before any wrapper's own preparation: every backend prepares the f without aux
        if not callable(f):
            raise TypeError(f"f: expected a callable; got {type(f).__name__}")
        return _prepare_with_aux(call, adapter, strict, learn_output, one_off)
    if (
        adapter.capabilities.prepares_calls
    ):  # a wrapper preparing the whole call through other backends (AutoSelect)
        return adapter.prepare_call(call, strict, one_off)
    if not callable(f):
        raise TypeError(f"f: expected a callable; got {type(f).__name__}")
    if call.same_point and not point_checked:
        plan = prepare(call, strict, learn_output, one_off, point_checked=True).plan
        return Preparation(op, call.backend, strict, same_point_plan(call, plan, strict))
    if has_complex_leaf(x):  # differentiated through its real view, one convention on every backend
        return prepare_complex(call, adapter, strict, learn_output, one_off, prepare)
    tree = None if is_array(x) else _tree_plan(x, adapter, op)
    if tree is None:
        check_x(x, adapter, op)
    check_contexts(call.contexts)
    if not isinstance(strict, bool):
        raise TypeError(f"strict: expected True or False; got {strict!r}")
    if call.y is not None:
        _check_y(call, adapter)
    family = tree.family if tree is not None else family_of(x)
    foreign = foreign_constants(call.contexts, family, adapter)
    if (
        foreign
    ):  # f sees them in x's family; the preparation keeps the call as given, for its checks
        plan = prepare(
            call._replace(contexts=converted_contexts(call.contexts, foreign, family)),
            strict,
            learn_output,
            one_off,
        ).plan
        methods = converting_contexts(plan.methods, foreign, op.seeds is not None, family)
        return Preparation(
            op,
            call.backend,
            strict,
            Plan(call, plan.impl, plan.spec, strict, methods, plan.tree, plan.ytree),
        )
    if tree is not None:
        return _prepare_tree(call, adapter, tree, strict, learn_output, one_off)
    problem = Problem(
        adapter, f, x, call.seeds, call.contexts, call.y, strict=strict, one_off=one_off
    )
    problem.aux, problem.aux_entry, problem.same_point = capture_of(f), f, call.same_point
    ytree = None
    try:
        if op.tree_output and call.y is None:
            problem, ytree = _output_tree(op, problem, learn_output)
        if op.seeds == "cotangents":
            check_tangents(
                problem.tangents,
                problem.spec,
                "the output y",
                "cotangents",
                None if ytree is not None else problem.family,
            )
        elif op.seeds == "tangents":
            check_tangents(
                call.seeds, Spec(problem.x_shape, problem.x_dtype), "x", family=problem.family
            )
        impl = _impl(op, problem)
    except Exception as error:
        better = explain(error, adapter, f, x, problem.ctx, call.y, trees=op.tree_output)
        if better is None:
            raise
        raise better from error
    own = (getattr(impl, op.plain), getattr(impl, op.valued))
    methods = (
        derivatives_in_x_dtype(op, problem, own) if ytree is None else ytree.wrap(op, own, None)
    )
    methods = _zero_d_results_as_arrays(op, impl, adapter, problem, methods) or methods
    return Preparation(
        op, call.backend, strict, Plan(call, impl, problem._spec, strict, methods, ytree=ytree)
    )


def _prepare_with_aux(call, adapter, strict, learn_output, one_off):
    """The preparation of ``call`` whose f returns ``(y, aux)`` (:mod:`diffinterface.core.aux`)."""
    require_has_aux(call.has_aux)
    if call.y is not None:
        raise TypeError(
            "has_aux: two-argument functions f(y, x) write their output into y and return no aux; "
            "return (y, aux) from a one-argument f(x) instead"
        )
    capture = AuxCapture(call.f, primal_of(adapter))
    if one_off:  # an evaluation at x while preparing gives the aux of the call that follows
        capture.prime(call.x)
    plan = prepare(call._replace(f=capture, has_aux=False), strict, learn_output, one_off).plan
    methods = aux_methods(call.op, capture, plan.methods)
    return Preparation(
        call.op,
        call.backend,
        strict,
        Plan(call, plan.impl, plan.spec, strict, methods, plan.tree, plan.ytree),
        has_aux=True,
    )


def _output_tree(op, problem, learn_output=False):
    """``(problem, plan)``: for a pytree output ``f(x)``, the flat-output problem and its :class:`OutputPlan`.

    An array output returns ``(problem, None)`` after learning the output spec
    the adapter learns anyway (no extra work, no wrapper). Only when the
    adapter refuses the output as not an array is ``f`` probed, once, through
    the adapter's own evaluation (JAX traces it, so leaves may be tracers:
    only their shapes and dtypes are kept).
    """
    if (
        not learn_output
        and problem._spec is None
        and op.listed_in(problem.adapter.capabilities.output_from_each_call)
    ):
        return (
            problem,
            None,
        )  # learning the output here would cost an evaluation the native recipe does not make
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
    if (
        problem.aux_entry is f
    ):  # the flat output's f still reaches the aux capture once per evaluation
        problem.aux_entry = problem.f
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
    wrapped, and only when a result can be 0-d: the value-and method when x or
    f(x) is, the plain one when its result is (``op.result_shape``). ``None``
    keeps the methods as they are, so every other call pays nothing; a
    prepared gradient at an array x, say, goes to the adapter unwrapped.
    """
    if adapter.capabilities.numpy_results_are_arrays or not FAMILIES[problem.family].scalar_results:
        return None
    spec = problem._spec
    x_scalar, y_scalar = not problem.x_shape, spec is None or not spec.shape
    if not (x_scalar or y_scalar):
        return None
    plain, valued = methods or (getattr(impl, op.plain), getattr(impl, op.valued))
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


def _impl(op, problem):
    """The prepared implementation of ``op``: the adapter's, or the core's answer to an empty problem.

    An empty ``x`` is known before asking the adapter; an empty ``f(x)`` only
    once the output's shape is learned, which the adapter may do while
    preparing (:mod:`diffinterface.core.empty`).
    """
    handles_empty = op.listed_in(problem.adapter.capabilities.own_empty_results)
    if not handles_empty and is_empty(op, problem):
        return prepare_empty(op, problem)
    impl = (
        problem.same_point and problem.adapter.prepare_same_point(op.name, problem)
    ) or problem.impl(op.name)
    if problem._spec is not None:  # an adapter that learned the output its own way
        require_real_output(problem._spec, problem.x_dtype, problem.f)
    if not handles_empty and is_empty(op, problem):
        return prepare_empty(op, problem)
    return impl


def _tree_plan(x, adapter, op):
    """The flattening plan of a pytree ``x``, checked against the adapter and the operator."""
    tree = TreePlan(x)
    if tree.family not in adapter.capabilities.families:
        raise TypeError(
            f"x: {type(adapter.backend).__name__} differentiates {' or '.join(adapter.capabilities.families)} "
            f"arrays; got a tree of {tree.family} arrays"
        )
    if op.scalar_x:
        raise ValueError(
            f"x: {op.name} expects a scalar x (shape ()); got a tree of {len(tree.shapes)} leaves"
        )
    return tree


def _check_tree_seeds(seeds, plan, name, like):
    """Raise unless ``seeds`` is a non-empty tuple of trees that ``plan`` (of x or of y) fits."""
    if not isinstance(seeds, tuple) or not seeds:
        raise TypeError(
            f"{name}: expected a non-empty tuple of trees shaped like {like} (a batch); "
            f"got {type(seeds).__name__}"
        )
    for i, seed in enumerate(seeds):
        plan.check(seed, f"{name}[{i}]")


def _prepare_tree(call, adapter, tree, strict, learn_output=False, one_off=False):
    """The preparation of ``call.op`` at a pytree ``x``: natively when the adapter takes trees, else flat."""
    op, f, x, seeds, y = call.op, call.f, call.x, call.seeds, call.y
    if op.seeds == "tangents":
        _check_tree_seeds(seeds, tree, "tangents", "x")
    native = adapter.takes_tree(op.name, tree)
    if native:
        problem = Problem(
            adapter, f, x, seeds, call.contexts, y, tree=tree, strict=strict, one_off=one_off
        )
    else:
        flat_seeds = tuple(tree.ravel(t) for t in seeds) if op.seeds == "tangents" else seeds
        flat_f = tree.flat_function(f, two_argument=y is not None)
        problem = Problem(
            adapter,
            flat_f,
            tree.ravel(x),
            flat_seeds,
            call.contexts,
            y,
            strict=strict,
            one_off=one_off,
        )
        if tree.mixed:
            problem.leaf_dtypes = tuple(zip(tree.slices, tree.dtypes))
    problem.aux, problem.aux_entry, problem.same_point = capture_of(f), problem.f, call.same_point
    if (
        problem.aux is not None and not native
    ):  # the flat x an evaluation sees while preparing is the call's
        problem.aux.stand_in(problem.x)
    ytree = None
    if op.tree_output and y is None and not native:
        # a flat tree problem's jacobian needs f's output shape anyway (tree.wrap below): learn it now
        problem, ytree = _output_tree(op, problem, learn_output=True)
    if op.seeds == "cotangents":
        check_tangents(problem.tangents, problem.spec, "the output y", "cotangents")
    impl = _impl(op, problem)
    methods = None
    if not native:
        own = (getattr(impl, op.plain), getattr(impl, op.valued))
        if (
            problem.aux is not None
        ):  # each call's flat copy of x stands for the call's x (core/aux.py)
            own = tuple(map(problem.aux.noting_stand_in, own))
        methods = tree.wrap(
            op,
            (derivatives_in_x_dtype(op, problem, own) if ytree is None else None) or own,
            problem,
        )
        if ytree is not None:
            methods = ytree.wrap(op, methods, tree)
        methods = _zero_d_results_as_arrays(op, None, adapter, problem, methods) or methods
    return Preparation(
        op, call.backend, strict, Plan(call, impl, problem._spec, strict, methods, tree, ytree)
    )
