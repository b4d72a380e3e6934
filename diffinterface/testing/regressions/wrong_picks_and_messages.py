"""Regression probes: no wrong candidate picked, no stacked output, and messages that fit the call.

- ``AutoSelect`` compares each part of a result (the value, the first
  derivative, the second, aux) on its own scale: a derivative 13 % off beside
  a large f(x) disagrees, so an unprepared ``value_and_`` call between a
  right and a wrong candidate refuses instead of picking either;
- ``derivative`` and ``second_derivative`` have no pytree output: an f
  returning a tuple or a dict is a TypeError on every backend (never a stacked
  or object array), and a pair names ``has_aux=True``;
- ``AutoSparse(MixedMode(b, b))`` computes Hessians as its forward backend
  ``AutoSparse(b)`` does;
- ``batch_size=`` and ``memory_budget=`` together are refused, naming both;
- a ``PreparationMismatchError`` lists the slots of the operator's own
  arguments (no seeds for a gradient; ``cotangents`` for a pullback);
- ``di.explain`` shows a candidate's failure as that backend alone raises it;
- the array namespace's ``asarray`` of x warns about nothing (a framework's
  warn-once warning shows only at its first occurrence in a process).

The foil of the ``AutoSelect`` probe is finite differences with a step far
too large: a candidate that runs but is wrong.

    >>> [probe.name for probe in probes()][:3]
    ['select_each_part_on_its_scale', 'derivative_of_a_tree_output', 'mixed_mode_hessian']
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from ...errors import DifferentiationError, PreparationMismatchError
from ...families import array_namespace
from ...operators import (
    derivative,
    gradient,
    hessian,
    prepare_gradient,
    prepare_pullback,
    prepare_pushforward,
    pullback,
    pushforward,
    second_derivative,
    value_and_derivative,
    value_and_gradient,
    value_derivative_and_second_derivative,
    value_gradient_and_hessian,
)
from ...selectors import AutoFiniteDiff
from ...wrappers import AutoSelect, AutoSparse, MixedMode, explain
from ..probes import BadInput

X = np.array([0.5, -0.25, 1.0])
#: sin(h) / h is 0.87 at this step: central differences of sin are 13 % off
WRONG_STEP = 0.9


def _large(x):
    xp = array_namespace(x)
    return 1e6 + xp.sum(xp.sin(x))  # f(x) dwarfs its derivative


def _select_each_part_on_its_scale(backend, problems, zero):
    selector = _selecting(backend, AutoFiniteDiff(abs_step=WRONG_STEP))
    if zero or selector is None:
        return
    for name, call, x, expected in (
        ("value_and_gradient", value_and_gradient, X, np.cos(X)),
        ("value_and_derivative", value_and_derivative, 0.5, np.cos(0.5)),
    ):
        try:  # the backend alone must be right, or there is nothing to choose
            alone = call(_large, backend, x)[1]
        except Exception:  # noqa: BLE001 - a backend that cannot is another probe's business
            continue
        if not np.allclose(np.asarray(alone, dtype=float), expected, rtol=1e-4):
            continue
        problems.expect_error(
            f"unprepared {name} of 1e6 + sum(sin(x)) by AutoSelect([backend, a candidate 13 % off])",
            lambda call=call, x=x: call(_large, selector, x),
            DifferentiationError,
            "disagree",
        )


def _selecting(backend, other):
    """``AutoSelect`` among ``backend`` and ``other`` (once, where they are equal), timed once; None
    where ``backend`` cannot be a candidate (an ``AutoSelect`` itself)."""
    try:
        return AutoSelect(list(dict.fromkeys([backend, other])), time_budget=0.0)
    except TypeError:
        return None


def _pair(x):
    xp = array_namespace(x)
    return xp.sin(x), xp.cos(x)  # (y, aux) without has_aux=True, or a tree output


def _mapping(x):
    xp = array_namespace(x)
    return {"sin": xp.sin(x), "square": x**2}


def _derivative_of_a_tree_output(backend, problems, zero):
    for name, call in (
        ("derivative", derivative),
        ("value_and_derivative", value_and_derivative),
        ("second_derivative", second_derivative),
        ("value_derivative_and_second_derivative", value_derivative_and_second_derivative),
    ):
        problems.expect_error(
            f"{name} of f returning a pair",
            lambda call=call: call(_pair, backend, 0.5),
            TypeError,
            r"returned tuple.*has_aux=True",
        )
        problems.expect_error(
            f"{name} of f returning a dict",
            lambda call=call: call(_mapping, backend, 0.5),
            TypeError,
            r"f: expected f to return an array or a number; it returned dict",
        )


def _chain(x):
    xp = array_namespace(x)
    return xp.sum(x[1:] * x[:-1]) + xp.sum(x**3)


def _mixed_mode_hessian(backend, problems, zero):
    try:
        mixed = AutoSparse(MixedMode(backend, backend), dense_result=True)
        hessian(_chain, AutoSparse(backend, dense_result=True), X)
    except Exception:  # noqa: BLE001 - a backend MixedMode or AutoSparse does not take
        return
    expected = np.diag(6 * X) + np.eye(3, k=1) + np.eye(3, k=-1)
    problems.expect_results(
        {
            "hessian by AutoSparse(MixedMode(backend, backend))": (
                lambda: hessian(_chain, mixed, X),
                expected,
            ),
            "value_gradient_and_hessian by AutoSparse(MixedMode(backend, backend))": (
                lambda: value_gradient_and_hessian(_chain, mixed, X)[2],
                expected,
            ),
        },
        like=X,
        zero=zero,
    )


def _batch_size_with_memory_budget(backend, problems, zero):
    fields = dict(vars(backend))
    try:
        type(backend)(**{**fields, "batch_size": 2, "memory_budget": None})
    except Exception:  # noqa: BLE001 - a selector without these fields
        return
    problems.expect_error(
        f"{type(backend).__name__}(batch_size=2, memory_budget=2**20)",
        lambda: type(backend)(**{**fields, "batch_size": 2, "memory_budget": 2**20}),
        ValueError,
        r"batch_size.*memory_budget",
    )


def _mismatch_message(problems, what, call):
    try:
        call()
    except PreparationMismatchError as error:
        return str(error)
    except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised(what, error, "a PreparationMismatchError")
    else:
        problems.found.append(f"{what}: expected a PreparationMismatchError; nothing was raised")
    return None


def _mismatch_lists_own_slots(backend, problems, zero):
    wider = np.ones(4)
    seeds = (np.ones(3),)
    for name, call, slots, absent in (
        (
            "gradient",
            lambda: gradient(_sum_sin, backend, wider, prep=prepare_gradient(_sum_sin, backend, X)),
            ("f", "backend", "x", "contexts"),
            ("tangents", "cotangents", "y"),
        ),
        (
            "pushforward",
            lambda: pushforward(
                _sines,
                backend,
                wider,
                (wider,),
                prep=prepare_pushforward(_sines, backend, X, seeds),
            ),
            ("f", "backend", "x", "tangents", "contexts", "y"),
            ("cotangents",),
        ),
        (
            "pullback",
            lambda: pullback(
                _sines, backend, wider, (wider,), prep=prepare_pullback(_sines, backend, X, seeds)
            ),
            ("f", "backend", "x", "cotangents", "contexts", "y"),
            ("tangents",),
        ),
    ):
        what = f"PreparationMismatchError of {name} at a wider x"
        message = _mismatch_message(problems, what, call)
        if message is None:
            continue
        listed = re.findall(r"^  (\w+): ", message, flags=re.MULTILINE)
        if listed != list(slots):
            problems.found.append(f"{what}: expected the slots {list(slots)}; got {listed}")
        if any(f"  {slot}:" in message for slot in absent):
            problems.found.append(f"{what}: lists a slot {name} has not: {message}")


def _sum_sin(x):
    xp = array_namespace(x)
    return xp.sum(xp.sin(x))


def _sines(x):
    return array_namespace(x).sin(x)


def _float_of_x(x):
    xp = array_namespace(x)
    return float(xp.sum(x**2)) + xp.sum(x)  # a number taken out of x's graph


def _explained_in_the_table(backend, problems, zero):
    try:
        gradient(_float_of_x, backend, X)
    except Exception as error:  # noqa: BLE001 - the error the table must show
        alone = type(error).__name__
    else:
        return
    selector = _selecting(backend, AutoFiniteDiff())
    if selector is None:
        return
    try:
        prep = prepare_gradient(_float_of_x, selector, X)
    except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised("AutoSelect of f calling float() on x", error, "a selection")
        return
    row = next(row for row in explain(prep).rows if row.backend == backend)
    if f"raised {alone}:" not in row.reason:
        problems.found.append(
            f"di.explain of f calling float() on x: the backend alone raises {alone}; "
            f"the table says {row.reason[:300]!r}"
        )


def _asarray_of_x(x):
    xp = array_namespace(x)
    return xp.sum(xp.asarray(x) ** 2)


def _no_warning_from_asarray(backend, problems, zero):
    for name, call in (
        ("gradient", lambda: gradient(_asarray_of_x, backend, X)),
        ("pushforward", lambda: pushforward(_asarray_of_x, backend, X, (np.ones(3),))[0]),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            problems.expect_result(
                f"{name} of sum(xp.asarray(x) ** 2)",
                call,
                2 * X if name == "gradient" else np.asarray(2 * X.sum()),
                like=X,
                zero=zero,
            )
        for warning in caught:
            problems.found.append(
                f"{name} of sum(xp.asarray(x) ** 2) warned: {warning.category.__name__}: "
                f"{str(warning.message)[:200]} ({warning.filename}:{warning.lineno})"
            )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "select_each_part_on_its_scale",
            "unprepared value_and_ by AutoSelect: a derivative 13 % off beside a large f(x) "
            "disagrees",
            _select_each_part_on_its_scale,
        ),
        BadInput(
            "derivative_of_a_tree_output",
            "derivative of f returning a tuple or dict: TypeError, naming has_aux=True for a pair",
            _derivative_of_a_tree_output,
        ),
        BadInput(
            "mixed_mode_hessian",
            "AutoSparse(MixedMode(b, b)) Hessians: AutoSparse(b)'s",
            _mixed_mode_hessian,
        ),
        BadInput(
            "batch_size_with_memory_budget",
            "batch_size= and memory_budget= together: ValueError naming both",
            _batch_size_with_memory_budget,
        ),
        BadInput(
            "mismatch_lists_own_slots",
            "PreparationMismatchError lists only the slots of the operator's arguments",
            _mismatch_lists_own_slots,
        ),
        BadInput(
            "explained_in_the_table",
            "di.explain shows a candidate's failure as the backend alone raises it",
            _explained_in_the_table,
        ),
        BadInput(
            "no_warning_from_asarray",
            "xp.asarray(x) in f: no warning",
            _no_warning_from_asarray,
        ),
    ]
