"""The fuzz checker's slack for finite differences is the error of the step taken, capped below 1 %:
on curvy programs (``exp(3x)``, ``5 sin(4x)``) finite differences pass against the exact derivatives,
and a reference off by 1 % is a finding, in float32 and float64, at first and second order.

Before, the slack was the kit's finite-difference table multiplied by the curvature: a 20 % wrong
float32 gradient of ``exp(3x)`` passed."""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.fuzz.checks import Checker, Outcome

X = np.array([0.3, -0.2, 0.5, 0.1])


def _exp3(x):
    xp = di.array_namespace(x)
    return xp.sum(xp.exp(3 * x))


def _sin4(x):
    xp = di.array_namespace(x)
    return xp.sum(5 * xp.sin(4 * x))


#: name -> (g, g, its gradient, its Hessian's diagonal), closed forms in float64
PROGRAMS = {
    "exp(3x)": (_exp3, np.sum(np.exp(3 * X)), 3 * np.exp(3 * X), 9 * np.exp(3 * X)),
    "5 sin(4x)": (_sin4, np.sum(5 * np.sin(4 * X)), 20 * np.cos(4 * X), -80 * np.sin(4 * X)),
}
BACKENDS = {
    "central": di.AutoFiniteDiff(),
    "forward": di.AutoFiniteDiff(method="forward"),
}


def _checker(backend, x, value, gradient, hessian, outcome):
    checker = Checker("fd", backend, "numpy", x, "g", False, outcome)
    checker.curvature = max(1.0, float(np.max(np.abs(hessian))))
    checker.differenced = max(abs(value), float(np.max(np.abs(gradient))))
    checker.scale = max(1.0, float(np.max(np.abs(X))))
    return checker


@pytest.mark.parametrize("operator", ["gradient", "hessian"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("method", list(BACKENDS))
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_finite_differences_pass_and_one_percent_off_is_a_finding(program, method, dtype, operator):
    g, value, gradient, diagonal = PROGRAMS[program]
    hessian = np.diag(diagonal)
    backend, x = BACKENDS[method], X.astype(dtype)
    assert di.core.get_adapter(backend).capabilities.approximate
    got = getattr(di, operator)(g, backend, x)
    exact = gradient if operator == "gradient" else hessian
    outcome = Outcome()
    checker = _checker(backend, x, value, gradient, hessian, outcome)
    checker.compare(operator, got, exact)
    assert outcome.findings == [], [f.message for f in outcome.findings]
    # float32 second differences are a few percent off on curvy programs (SECOND_DIFFERENCES_FLOAT32_CAP)
    off = 1.05 if operator == "hessian" and dtype == np.float32 else 1.01
    checker.compare(operator, got, exact * off)
    assert len(outcome.findings) == 1, (
        f"a reference {off - 1:.0%} off passed for {operator} of {program}"
    )


def test_an_exact_backend_gets_no_finite_difference_slack():
    backend = di.AutoAutograd()
    assert not di.core.get_adapter(backend).capabilities.approximate
    g, value, gradient, diagonal = PROGRAMS["exp(3x)"]
    got = di.gradient(g, backend, X)
    outcome = Outcome()
    checker = _checker(backend, X, value, gradient, np.diag(diagonal), outcome)
    checker.compare("gradient", got, gradient)
    assert outcome.findings == []
    # within what a finite-difference rule may err (a step's rounding), far beyond exact rounding
    checker.compare("gradient", got, gradient * (1 + 1e-8))
    assert len(outcome.findings) == 1
