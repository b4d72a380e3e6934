"""Regression probes: an unprepared call sees f as it is now, and eager backends run f eagerly.

An unprepared call behaves like preparing afresh: after a global, a
closed-over array or a model's attribute changes, it returns the derivative
of f as it is now (AutoJAX reused a trace keyed by the function object). A
new preparation traces afresh too. A function that branches on x's values
(``if x[0] > 0``) is differentiated wherever f runs on values; a backend
that traces f without values at preparation declares it
(``capabilities.traces_without_values`` of its adapter) and refuses naming the way around,
as does one that traces unprepared calls too (``capabilities.traces_unprepared_calls``).
A function of another framework called on x (``torch.sin`` under AutoJAX,
``jnp.sin`` under AutoTorch) gives the right derivative or a
:class:`~diffinterface.TracedArrayError` naming ``di.array_namespace``; where
f cannot run on a numpy x at all, f's own error may stand.

    >>> [probe.name for probe in probes()]
    ['changed_global', 'changed_closure_array', 'changed_model_attribute', 'branch_on_values', 'foreign_function_on_x']
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ...core import get_adapter
from ...errors import DifferentiationError
from ...families import FAMILIES, NUMBERS, array_namespace
from ...operators import gradient, prepare_gradient
from ..probes import BadInput

X = np.array([0.5, -0.25, 1.0])


def _seen_fresh(backend, problems, zero, what, loss, change):
    """``loss``'s gradient, unprepared and freshly prepared, before and after ``change(scale)``."""
    for scale in (1.0, 3.0):
        change(scale)
        expected = 2 * scale * X
        problems.expect_results(
            {
                f"unprepared gradient after {what} became {scale}": (
                    lambda: gradient(loss, backend, X),
                    expected,
                ),
                f"gradient prepared after {what} became {scale}": (
                    lambda: gradient(loss, backend, X, prep=prepare_gradient(loss, backend, X)),
                    expected,
                ),
            },
            like=X,
            zero=zero,
        )


def _changed_global(backend, problems, zero):
    state = {"scale": 1.0}

    def loss(x):
        xp = array_namespace(x)
        return state["scale"] * xp.sum(x**2)

    _seen_fresh(backend, problems, zero, "a global", loss, lambda scale: state.update(scale=scale))


def _changed_closure_array(backend, problems, zero):
    weights = np.ones(3)

    def loss(x):
        xp = array_namespace(x)
        return xp.sum(xp.asarray(weights, dtype=x.dtype) * x**2)

    def change(scale):
        weights[...] = scale  # written in place: the closure holds the same array

    _seen_fresh(backend, problems, zero, "a closed-over array", loss, change)


class _Model:
    def __init__(self):
        self.scale = 1.0

    def loss(self, x):
        xp = array_namespace(x)
        return self.scale * xp.sum(x**2)


def _changed_model_attribute(backend, problems, zero):
    model = _Model()
    _seen_fresh(
        backend,
        problems,
        zero,
        "a model's attribute",
        model.loss,
        lambda scale: setattr(model, "scale", scale),
    )


def _branchy(x):
    xp = array_namespace(x)
    if (
        x[0] > 0
    ):  # a branch on a value of x: eager frameworks take it, tracing without values cannot
        return xp.sum(x**2)
    return xp.sum(x**3)


def _branch_on_values(backend, problems, zero):
    expected = 2 * X
    capabilities = get_adapter(backend).capabilities
    calls = (
        (
            "unprepared",
            lambda: gradient(_branchy, backend, X),
            capabilities.traces_unprepared_calls,
        ),
        (
            "prepared",
            lambda: gradient(_branchy, backend, X, prep=prepare_gradient(_branchy, backend, X)),
            capabilities.traces_without_values,
        ),
    )
    for kind, call, traced in calls:
        what = f"{kind} gradient of f branching on x[0] > 0"
        if traced:
            problems.expect_error(
                f"{what} (the backend traces without values)",
                call,
                DifferentiationError,
                r"branches on x's values",
            )
        else:
            problems.expect_result(what, call, expected, like=X, zero=zero)


def _installed_namespaces():
    """(family name, namespace) of every installed array family but numpy's (the kit's own probe covers it)."""
    found = []
    for name, family in FAMILIES.items():
        if name in (NUMBERS, "numpy") or importlib.util.find_spec(family.modules[0]) is None:
            continue
        found.append((name, family.namespace()))
    return found


def _right_or_refused(problems, what, call, refusals, zero):
    """``call()`` returns the derivative of sum(sin(x)) or raises one of ``refusals``."""
    try:
        got = call()
    except refusals:
        return
    except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
        problems.found.append(
            f"{what}: expected the derivative or f's own error; got {type(error).__name__}: "
            f"{str(error)[:300]}"
        )
        return
    problems.check_result(what, got, np.cos(X), like=X, zero=zero)


def _foreign_function_on_x(backend, problems, zero):
    for name, xp in _installed_namespaces():

        def f(x, xp=xp):
            return xp.sum(xp.sin(x))  # the functions of one framework, whatever x is

        what = f"gradient of f calling {name}'s sin and sum on x"
        try:
            f(X)
        except Exception as error:  # noqa: BLE001 - f cannot run on x itself: its own error may stand
            _right_or_refused(
                problems,
                what,
                lambda f=f: gradient(f, backend, X),
                (type(error), DifferentiationError),
                zero,
            )
            continue
        problems.expect_right_or_explained(
            what, lambda f=f: gradient(f, backend, X), np.cos(X), zero
        )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "changed_global",
            "a global f reads changed: unprepared and new preparations see it",
            _changed_global,
        ),
        BadInput(
            "changed_closure_array",
            "a closed-over array changed in place: unprepared calls see it",
            _changed_closure_array,
        ),
        BadInput(
            "changed_model_attribute",
            "a bound method's model attribute changed: unprepared calls see it",
            _changed_model_attribute,
        ),
        BadInput(
            "branch_on_values",
            "if x[0] > 0 in f: the derivative, or a refusal naming the way around",
            _branch_on_values,
        ),
        BadInput(
            "foreign_function_on_x",
            "another framework's functions on x: the derivative or a "
            "TracedArrayError naming di.array_namespace",
            _foreign_function_on_x,
        ),
    ]
