"""Regression probes: an f that writes into its argument leaves the caller's x as it was.

f may write into the array it receives (``x += 1``, ``x[0] = 1.0``). To the
caller that is a function of x's values like any other: the derivative is
that function's, and the user's x is never changed (an input is never
mutated). ``AutoFiniteDiff`` evaluated f at the user's own array wherever it
needed ``f(x)``, so such an f changed the user's x and every later point
started from the changed values: a wrong derivative and a mutated input.

Each probe writes the way the array f receives allows, and the contract
follows from the backend's capabilities, never its name:

- an augmented assignment ``x += 1`` is written in place on a mutable array
  and is a new array on an immutable one (JAX's): every backend must give
  the right derivative or a refusal naming the in-place write (a framework
  that records x for its derivative may refuse writes into it);
- an item assignment ``x[0] = 1.0`` exists on mutable arrays only: an
  immutable one refuses it, by an error saying so.

A backend that computes on NumPy arrays alone (``Capabilities.families`` is
``("numpy",)``) hands f plain NumPy arrays, which take both writes: it must
give the right derivative. On every backend, results or refusals, the
caller's x is unchanged.

    >>> [probe.name for probe in probes()]
    ['f_writes_into_x']
"""

from __future__ import annotations

import re

import numpy as np

from ...core import get_adapter
from ...families import array_namespace
from ...operators import (
    derivative,
    gradient,
    hessian,
    jacobian,
    prepare_gradient,
    pushforward,
    value_and_gradient,
)
from ..families import CONVERTIBLE_FAMILIES, convert, to_numpy
from ..probes import BadInput

X = np.array([0.5, -0.25, 1.0])

#: what a refusal of a write into x says: the in-place write, or the array's immutability
_REFUSAL = r"in-place|in place|item assignment|immutable"


def _shifted(x):
    """``sum((x + 1)**2)``, written with ``x += 1``."""
    xp = array_namespace(x)
    x += 1
    return xp.sum(x**2)


def _shifted_vector(x):
    """``(x + 1)**2``, written with ``x += 1``."""
    x += 1
    return x * x


def _pinned(x):
    """``1 + x[1]**2 + x[2]**2``: ``sum(x**2)`` after ``x[0] = 1.0``."""
    xp = array_namespace(x)
    x[0] = 1.0
    return xp.sum(x**2)


#: what each function computes, and how it writes into x
_WRITES = {
    _shifted: "computes sum((x + 1)**2) after x += 1",
    _shifted_vector: "computes (x + 1)**2 after x += 1",
    _pinned: "computes sum(x**2) after x[0] = 1.0",
}


def _calls(backend, family):
    """``{what: (call(f, x), expected(x))}`` for each operator, f one of the writing functions, x in
    ``family``."""
    along_e1 = convert(np.eye(X.size)[1], family)
    return {
        "gradient": (
            lambda f, x: gradient(f, backend, x),
            {_shifted: lambda x: 2 * (x + 1), _pinned: lambda x: np.r_[0.0, 2 * x[1:]]},
        ),
        "value_and_gradient": (
            lambda f, x: value_and_gradient(f, backend, x)[1],
            {_shifted: lambda x: 2 * (x + 1), _pinned: lambda x: np.r_[0.0, 2 * x[1:]]},
        ),
        "prepared gradient": (
            lambda f, x: gradient(f, backend, x, prep=prepare_gradient(f, backend, x)),
            {_shifted: lambda x: 2 * (x + 1), _pinned: lambda x: np.r_[0.0, 2 * x[1:]]},
        ),
        "pushforward along e_1": (
            lambda f, x: pushforward(f, backend, x, (along_e1,))[0],
            {_shifted: lambda x: 2 * (x[1] + 1), _pinned: lambda x: 2 * x[1]},
        ),
        "jacobian": (
            lambda f, x: jacobian(f, backend, x),
            {_shifted_vector: lambda x: np.diag(2 * (x + 1))},
        ),
        "hessian": (
            lambda f, x: hessian(f, backend, x),
            {_shifted: lambda x: 2 * np.eye(x.size), _pinned: lambda x: np.diag([0.0, 2.0, 2.0])},
        ),
        "derivative at a 0-d x": (
            lambda f, x: derivative(f, backend, x),
            {_shifted_vector: lambda x: 2 * (x + 1)},
        ),
    }


def _f_writes_into_x(backend, problems, zero):
    families = get_adapter(backend).capabilities.families
    for family in families:
        if family not in CONVERTIBLE_FAMILIES:
            continue
        # f receives plain NumPy arrays, which take both writes: only the derivative will do
        must_answer = family == "numpy" and tuple(families) == ("numpy",)
        for operator, (call, expected_of) in _calls(backend, family).items():
            for f, expected in expected_of.items():
                start = np.array(0.5) if operator.startswith("derivative") else X
                x = convert(start.copy(), family)
                what = f"{operator} at a {family} x of an f that {_WRITES[f]}"
                try:
                    got = call(f, x)
                except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
                    if must_answer or not re.search(_REFUSAL, str(error)):
                        expected_answer = "the derivative" + (
                            "" if must_answer else " or a refusal naming the write"
                        )
                        problems.raised(what, error, expected_answer)
                else:
                    problems.check_result(what, got, expected(start), like=x, zero=zero)
                if not np.array_equal(to_numpy(x), start):
                    problems.found.append(
                        f"{what}: the caller's x was changed from {start!r} to {to_numpy(x)!r}"
                    )


def probes():
    """The probes of an f that writes into its argument."""
    return [
        BadInput(
            "f_writes_into_x",
            "an f that writes into its argument (x += 1, x[0] = 1.0) gets the derivative of what it "
            "computes, or a refusal naming the write where its arrays are immutable, and the "
            "caller's x is unchanged",
            _f_writes_into_x,
        ),
    ]
