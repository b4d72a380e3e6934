"""The fuzz checker allows finite differences their rounding error, which grows with |f|, not with the derivative.

The campaign's finding on ``finitediff-forward`` (a Jacobian of a determinant
of size 10 whose derivatives are 0.01 to 0.12, off by up to 2.6e-7) was the
forward difference's rounding, about ``eps * |f| / h``: scipy's
``approx_derivative`` with the same step errs the same way, and the
truncation error there (``h / 2 * |f''|``) is a hundred times smaller.
"""

from __future__ import annotations

import numpy as np

import diffinterface as di
from diffinterface.testing.fuzz.checks import Checker, Outcome, differenced_size

#: the campaign's point (seed 9091, on ab3f8ed)
X = np.asarray([[0.83, 1.28], [1.47, -1.34], [-0.11, 0.75]], dtype=np.float64)
FORWARD = di.AutoFiniteDiff(method="forward")


def f(x):
    xp = di.array_namespace(x)
    v1 = xp.linalg.solve(x @ xp.matrix_transpose(x) + 2 * xp.eye(3, dtype=x.dtype), x)
    v2 = xp.linalg.det(v1 @ xp.matrix_transpose(v1) + 2 * xp.eye(3, dtype=v1.dtype))
    return xp.broadcast_to(v2, (2,))


def _checker(outcome, reference):
    checker = Checker("finitediff-forward", FORWARD, "numpy", X, "f", False, outcome)
    checker.differenced = differenced_size(reference)
    return checker


def test_the_campaigns_forward_difference_jacobian_is_within_its_rounding_error():
    reference = {
        "value": np.asarray(f(X)),
        "jacobian": np.asarray(di.jacobian(f, di.AutoAutograd(), X)),
    }
    assert np.max(np.abs(reference["value"])) > 10 * np.max(np.abs(reference["jacobian"]))
    got = di.jacobian(f, FORWARD, X)
    assert not np.allclose(
        got, reference["jacobian"], rtol=1e-5, atol=1e-7
    )  # the campaign's finding, still there
    outcome = Outcome()
    _checker(outcome, reference).compare("jacobian", got, reference["jacobian"])
    assert outcome.findings == []


def test_a_wrong_finite_difference_jacobian_is_still_a_finding():
    reference = {
        "value": np.asarray(f(X)),
        "jacobian": np.asarray(di.jacobian(f, di.AutoAutograd(), X)),
    }
    wrong = np.array(di.jacobian(f, FORWARD, X))
    wrong[0, 1, 1] *= 1.01  # a wrong rule is off by the derivative's own size, far above rounding
    outcome = Outcome()
    _checker(outcome, reference).compare("jacobian", wrong, reference["jacobian"])
    assert len(outcome.findings) == 1
