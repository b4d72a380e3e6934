"""The kit's fuzz suite on every selected backend, plus the suite's own behaviour.

One test per backend (``--di-backends`` / ``$DI_BACKENDS`` select them) runs a
bounded number of random programs, trees and sparse programs with a fixed
seed (``$DI_FUZZ_EXAMPLES`` programs per backend for a longer run; ``python
-m diffinterface.testing.fuzz --examples 10000`` for a campaign).
"""

import subprocess
import sys

import numpy as np
import diffinterface as di
from tests.matrix import SECONDARY
from diffinterface.testing.fuzz import Program, Step, fuzz_programs

# one test per selected backend, the same the kit ships for third-party backends
from diffinterface.testing.fuzz.test_fuzz_kit import (  # noqa: F401 - collected here
    pytest_generate_tests,
    test_random_programs_agree_with_the_float64_reference,
)
from diffinterface.testing.fuzz.checks import check_program, refused_function
from diffinterface.testing.fuzz.reference import array_reference


def test_importing_the_kit_does_not_import_hypothesis():
    code = "import sys, diffinterface.testing; print('hypothesis' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "False"
    )


def test_the_same_seed_draws_the_same_programs():
    sources = []
    for _ in range(2):
        report = fuzz_programs(
            di.AutoFiniteDiff(), examples=3, seed=11, kinds=("array",), progress=lambda r: None
        )
        sources.append(report.summary())
    assert sources[0] == sources[1]


def test_a_wrong_derivative_is_a_finding_with_the_program_as_source():
    program = Program((2,), (Step("xp.sin(x)"),))
    x = np.array([0.5, -0.25])
    reference = array_reference(program, x)
    reference["jacobian"] = (
        reference["jacobian"] * 2
    )  # what a backend that silently doubles would be checked against
    outcome = check_program(
        program, x, "jax", di.AutoJAX(), "numpy", reference, np.random.default_rng(0)
    )
    operators = {f.operator for f in outcome.findings}
    assert {"jacobian", "pushforward", "pullback"} <= operators
    source = outcome.findings[0].source
    assert "v1 = xp.sin(x)" in source and "x = np.asarray([0.5, -0.25], dtype=np.float64)" in source
    names = {}
    exec(source, names)  # the printed program runs as it is
    np.testing.assert_allclose(names["f"](names["x"]), np.sin(x))


def test_a_refusal_naming_the_function_is_counted_not_failed():
    source = Program((2, 2), (Step("xp.linalg.eigvalsh(x)"),)).source()
    assert (
        refused_function(
            di.UnsupportedError("AutoX cannot differentiate eigvalsh; use ..."), source
        )
        == "linalg.eigvalsh"
    )
    assert (
        refused_function(ValueError("f: torch does not support eigvalsh here; use ..."), source)
        == "linalg.eigvalsh"
    )
    assert refused_function(NotImplementedError("JVP of eigvalsh not defined"), source) is None
    refusal = NotImplementedError(
        "array_namespace(x).linalg.eigvalsh: autograd has no derivative for eigvalsh; use ..."
    )
    assert refused_function(refusal, source) == "linalg.eigvalsh"
    assert refused_function(ValueError("shapes do not match"), source) is None


@SECONDARY
def test_the_command_line_prints_the_count_tried():
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "diffinterface.testing.fuzz",
            "--examples",
            "2",
            "--backends",
            "finitediff-central",
            "--kinds",
            "array",
        ],
        capture_output=True,
        text=True,
    )
    assert "tried 2 programs" in run.stdout, run.stdout + run.stderr
    assert run.returncode == 0


def test_a_known_defect_is_reported_apart_and_printed():
    from diffinterface.testing.fuzz import KnownDefect
    from diffinterface.testing.fuzz.checks import Finding, Outcome
    from diffinterface.testing.fuzz.campaign import FuzzReport

    outcome = Outcome(checks=2)
    outcome.findings += [
        Finding("x", "numpy", "float32", "hvp", "raised KeyError: 'demo'", "def f(x): ..."),
        Finding("x", "numpy", "float32", "hvp", "raised IndexError: 3", "def f(x): ..."),
    ]
    report = FuzzReport()
    report.add(outcome, (KnownDefect("demo", "a KeyError", lambda f: "KeyError" in f.message),))
    assert [f.message for f in report.known] == ["raised KeyError: 'demo'"]
    assert [f.message for f in report.findings] == ["raised IndexError: 3"]
    assert "known defect demo (1 times)" in str(report) and "FAILURE (1 times)" in str(report)


def test_a_time_limit_ends_the_campaign_with_its_report():
    report = fuzz_programs(
        di.AutoFiniteDiff(), examples=10_000, seed=3, kinds=("array",), time_limit=2.0
    )
    assert 0 < report.programs < 10_000 and report.ok


def test_a_non_finite_torch_reference_gives_way_to_jax():
    # torch.func's nested jacrev gives NaN second derivatives of det at a matrix with a triple eigenvalue
    # (found by a campaign, as a false finding against finite differences); JAX's are finite there
    program = Program(
        (4,),
        (
            Step("xp.expand_dims(x, axis=0)"),
            Step("xp.matmul(xp.matrix_transpose(v1), xp.sin(v1))"),
            Step("xp.linalg.det(v2 @ xp.matrix_transpose(v2) + 2 * xp.eye(4, dtype=v2.dtype))"),
        ),
    )
    x = np.asarray([-0.41, -0.25, 0.22, -0.19], dtype=np.float32).astype(np.float64)
    torch_reference, jax_reference = (
        array_reference(program, x, "torch"),
        array_reference(program, x, "jax"),
    )
    assert np.all(np.isfinite(torch_reference["hessian"]))
    np.testing.assert_allclose(torch_reference["hessian"], jax_reference["hessian"], rtol=1e-12)
