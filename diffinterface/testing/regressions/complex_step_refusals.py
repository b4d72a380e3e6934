"""Regression probes: a refusal at complex-step points names the user's f.

A mutation run over the finite-difference backend found that
``AutoFiniteDiff(method="complex")``, refusing an f that returned a real value at
a complex-step point (numpy's ``.real``: the imaginary part that carries the
derivative is dropped), named the wrapper that makes the array namespace
complex-step safe (``f: AtComplexPoints returned a real float64 value ...``),
not the user's function. The probe states the contract on every backend that
evaluates f at complex points (its adapter, or a part of it, declares
``capabilities.complex_step``):

- ``complex-step-refusal-names-f``: the gradient of ``np.sum(x ** 2).real``
  is right, or refused by an error whose message names the function.

    >>> import diffinterface as di
    >>> from diffinterface.testing.probes import run_probes
    >>> run_probes(probes(), di.AutoFiniteDiff(method="complex")).found
    []
"""

from __future__ import annotations

import numpy as np

from ...core import get_adapter
from ...operators import gradient
from ..probes import BadInput

X = np.array([0.5, -1.0, 2.0])


def drops_the_imaginary_part(x):
    """``sum(x ** 2)``, its value taken apart by numpy's real part: real at a complex point."""
    return np.real(np.sum(x**2))


def _uses_complex_step(backend):
    return any(part.capabilities.complex_step for part in get_adapter(backend).parts())


def _names_f(backend, problems, zero):
    if zero or not _uses_complex_step(backend):
        return  # only the complex step evaluates f where numpy's real part drops the derivative
    what = "gradient of np.real(np.sum(x ** 2)) at complex-step points"
    try:
        got = gradient(drops_the_imaginary_part, backend, X)
    except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
        if drops_the_imaginary_part.__name__ not in str(error):
            problems.raised(what, error, "the gradient or an error naming f")
        return
    problems.check_result(what, got, 2 * X, like=X)


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "complex-step-refusal-names-f",
            "f's real value at complex-step points: the gradient, or an error naming f",
            _names_f,
        )
    ]
