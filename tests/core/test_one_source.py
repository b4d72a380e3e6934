"""One function source, written with ``di.array_namespace``, gives the same derivatives on every backend.

Gradient, Jacobian and derivative (first order), and the Hessian (second order).

Each function below is written once against the array API. Every backend in
``diffinterface.testing.backends.BACKENDS`` differentiates it from numpy
float64 input; the results must match the analytic derivatives (so they agree
with each other), come back as numpy float64, and leave x untouched. A backend
whose framework fails to import fails here.
"""

import subprocess
import sys

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.backends import BACKENDS
from diffinterface.testing.tolerances import float64_accuracy

from diffinterface.testing.analytic_functions import coupled as vector_of_vector
from diffinterface.testing.analytic_functions import coupled_jacobian as vector_of_vector_jacobian
from diffinterface.testing.analytic_functions import sin_weighted_sum as scalar_of_vector
from diffinterface.testing.analytic_functions import (
    sin_weighted_sum_gradient as scalar_of_vector_gradient,
)
from diffinterface.testing.analytic_functions import (
    sin_weighted_sum_hessian as scalar_of_vector_hessian,
)
from tests.paths import ROOT


def vector_of_scalar(x):
    xp = di.array_namespace(x)
    return xp.stack([xp.sin(x), x**2, xp.exp(-x) * x])


def vector_of_scalar_derivative(x):
    return np.array([np.cos(x), 2 * x, np.exp(-x) * (1 - x)])


X = np.array([0.3, -1.2, 2.0, 0.7])
X_SCALAR = np.array(0.7)

CASES = {
    "gradient": (di.prepare_gradient, di.gradient, scalar_of_vector, X, scalar_of_vector_gradient),
    "jacobian": (di.prepare_jacobian, di.jacobian, vector_of_vector, X, vector_of_vector_jacobian),
    "derivative": (
        di.prepare_derivative,
        di.derivative,
        vector_of_scalar,
        X_SCALAR,
        vector_of_scalar_derivative,
    ),
    "hessian": (di.prepare_hessian, di.hessian, scalar_of_vector, X, scalar_of_vector_hessian),
}


def tolerance(backend, operator):
    if isinstance(backend, di.AutoFiniteDiff):
        if operator == "hessian":  # differences of differences
            return (
                {"rtol": 1e-3, "atol": 1e-4}
                if backend.method == "forward"
                else {"rtol": 1e-5, "atol": 1e-6}
            )
        return (
            {"rtol": 1e-5, "atol": 1e-6}
            if backend.method == "forward"
            else {"rtol": 1e-7, "atol": 1e-8}
        )
    accuracy = float64_accuracy(backend)
    if accuracy is not None:  # the backend declares its float64 functions less accurate
        return {"rtol": 30 * accuracy, "atol": 3 * accuracy}
    return {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize("operator", list(CASES))
@pytest.mark.parametrize("backend", list(BACKENDS.values()), ids=list(BACKENDS))
def test_one_source_agrees_on_every_backend(backend, operator):
    prepare, call, f, x, expected = CASES[operator]
    x_before = x.copy()
    prep = prepare(f, backend, x)
    result = call(f, backend, x, prep=prep)
    assert isinstance(result, (np.ndarray, np.generic)), f"numpy in, numpy out; got {type(result)}"
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, expected(x), **tolerance(backend, operator))
    # The same preparation serves another point.
    x2 = x + 0.25
    np.testing.assert_allclose(
        call(f, backend, x2, prep=prep), expected(x2), **tolerance(backend, operator)
    )
    np.testing.assert_array_equal(x, x_before)


def test_every_listed_backend_is_covered():
    # A backend added to the list is covered by the parametrization above; an
    # uninstalled framework is a failure there, not a skip.
    assert {"finitediff-central", "jax", "torch", "autograd"} <= set(BACKENDS)


def test_backend_agnostic_example_runs_and_agrees():
    example = ROOT / "examples" / "backend_agnostic.py"
    out = subprocess.run([sys.executable, str(example)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    for name in ("AutoFiniteDiff", "AutoJAX", "AutoTorch", "AutoAutograd"):
        (line,) = [line for line in lines if line.startswith(name)]
        assert line.endswith("ok"), line
