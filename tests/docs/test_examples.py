"""Every script in examples/ runs in a fresh interpreter, exits 0 and prints what it claims.

The scripts import this checkout's diffinterface (the repository root is put
first on the path), and a script whose backend reports "not installed" fails
here: a framework that does not import is a failure, never a skip.
"""

import os
import subprocess
import sys

import pytest

from tests.matrix import quick_cases
from tests.paths import ROOT

EXAMPLES = ROOT / "examples"

#: script -> the line it prints when its claim holds
CLAIMS = {
    "quickstart.py": "AutoAutograd()",
    "backend_agnostic.py": "AutoAutograd",
    "rosenbrock_scipy.py": "every backend reached the minimum at (1, ..., 1)",
    "stiff_ode.py": "the exact Jacobians reproduce the solution",
    "swap_backends.py": "same standard errors from every backend",
    "custom_backend.py": "the complex-step backend passes all",
    "sparse_scipy.py": "solve_ivp BDF, Brusselator 32 x 32",
    "torch_inside_jax.py": "gradient float64",
    "simulator_inside_torch.py": "fitted k, c: [4.  0.3]",
    "train_torch_model.py": "diffinterface never touched the model's .grad",
    "train_jax_model.py": "gradients shaped like the parameter tree",
    "fit_oscillator_scipy.py": "every backend recovered k, c and x0 within 5%",
    "auto_select.py": "different backends won: AutoFiniteDiff",
    "newton_cg_same_point.py": "Newton-CG reached the same minimum with each recipe",
    "least_squares_lsmr.py": "every backend fitted a, k and c with the Jacobian as a LinearOperator",
    "complex_least_squares.py": "every backend: one gradient, z - lr * g descends to z_true",
    "implicit_ridge_tuning.py": "the hypergradient through scipy's solver lowered the validation error",
    "train_keras_model.py": "Keras model trained with di.value_and_gradient",
    "dask_cluster.py": "the Dask cluster's gradient equals the serial one bit for bit",
    "batch_sizes.py": "the same 100 x 100 Jacobian from every batch size",
}


def test_every_example_has_a_claim():
    assert sorted(CLAIMS) == sorted(p.name for p in EXAMPLES.glob("*.py"))


@pytest.mark.parametrize(
    "script",
    quick_cases(
        sorted(CLAIMS),
        quick={"quickstart.py"},
        ids=[name.removesuffix(".py") for name in sorted(CLAIMS)],
    ),
)
def test_example_runs(script):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert CLAIMS[script] in done.stdout, done.stdout
    assert "not installed" not in done.stdout, done.stdout
    assert "MISMATCH" not in done.stdout, done.stdout
