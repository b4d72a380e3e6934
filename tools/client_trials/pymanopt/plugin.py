"""pytest plugin for the pymanopt trial (loaded with ``-p plugin``).

It stands in for pymanopt's conftest.py, which imports TensorFlow: the same
seeds before every test, and matplotlib's Agg backend. It writes every test's
outcome to the JSON file named by ``CLIENT_TRIAL_RESULTS``. When
``CLIENT_TRIAL_VARIANT`` names one of ``shim.VARIANTS`` it routes pymanopt's
derivatives through diffinterface (``CLIENT_TRIAL_PREPARED=0`` for unprepared
calls, ``CLIENT_TRIAL_CROSS_CHECK=1`` to compare every result with pymanopt's
own, ``CLIENT_TRIAL_COMPLEX_AS_PAIRS=1`` for complex points as real pairs).

pymanopt 2.2.1 predates NumPy 2: its derivative checks (``check_gradient``,
``check_hessian``) store ``np.polyfit``'s one-element residual array into a
scalar slot, which NumPy 2 refuses. Both runs give that module a NumPy whose
``polyfit`` returns that residual as a scalar, so that those tests exercise
the derivatives instead of failing natively.
"""

from __future__ import annotations

import json
import os
import random
import types
from typing import Any

import numpy as np
import pytest

import shim

outcomes: dict = {}


class NumPyWithScalarResidual(types.ModuleType):
    """numpy, with ``polyfit(..., full=True)``'s residual as NumPy 1 let pymanopt use it."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    @staticmethod
    def polyfit(*args: Any, **kwargs: Any) -> Any:
        fit = np.polyfit(*args, **kwargs)
        if not kwargs.get("full"):
            return fit
        coefficients, residuals, *rest = fit
        return (coefficients, residuals.sum() if residuals.size == 1 else residuals, *rest)


def pytest_configure(config: pytest.Config) -> None:
    import matplotlib
    from pymanopt.tools import diagnostics

    matplotlib.use("Agg")
    diagnostics.np = NumPyWithScalarResidual("numpy")
    variant = os.environ.get("CLIENT_TRIAL_VARIANT", "native")
    if variant != "native":
        shim.install(
            variant,
            cross_check=os.environ.get("CLIENT_TRIAL_CROSS_CHECK") == "1",
            prepared=os.environ.get("CLIENT_TRIAL_PREPARED", "1") == "1",
            complex_as_pairs=os.environ.get("CLIENT_TRIAL_COMPLEX_AS_PAIRS") == "1",
        )


@pytest.fixture(autouse=True)
def initialize_test_state() -> None:
    import autograd.numpy as anp
    import torch

    random.seed(42)
    anp.random.seed(42)
    np.random.seed(42)
    torch.manual_seed(42)
    shim.complex_seen = False


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    failed_here = report.failed or (report.when == "setup" and report.skipped)
    if report.when != "call" and not failed_here:
        return
    message = ""
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = (crash.message if crash else str(report.longrepr)).strip()
        message = message.splitlines()[0][:300] if message else ""
    outcomes[report.nodeid] = {
        "outcome": "failed" if report.failed else report.outcome,
        "complex": shim.complex_seen,
        "message": message,
    }


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("CLIENT_TRIAL_RESULTS")
    if path:
        with open(path, "w") as file:
            json.dump(outcomes, file, indent=1, sort_keys=True)
