"""The fuzz checker on one program: every operator checked against its own reference, a wrong
reference a finding of that operator only, with what a reader needs to reproduce it.

The references here are closed forms (no framework computes them), so the checker is tested, not a
reference."""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.fuzz.checks import (
    ORDERS,
    Checker,
    Finding,
    Outcome,
    check_program,
    differenced_size,
    refused_function,
)
from diffinterface.testing.fuzz.programs import Program, Step

PROGRAM = Program((3,), (Step("xp.sin(x)"),))
SCALAR_PROGRAM = Program((), (Step("xp.sin(x)"),))
X = np.array([0.4, -0.7, 1.1])
BACKEND = di.AutoFiniteDiff()


def reference(x):
    """f = sin(x), g = sum(sin(f)): values and derivatives in closed form (float64)."""
    s, c = np.sin(x), np.cos(x)
    diagonal = -np.sin(s) * c**2 - np.cos(s) * s
    result = {
        "value": s,
        "jacobian": np.diag(c) if x.ndim else c,
        "scalar": np.sum(np.sin(s)),
        "gradient": np.cos(s) * c,
        "hessian": np.diag(diagonal) if x.ndim else diagonal,
    }
    if x.ndim == 0:
        result["second_derivative"] = -s
    return result


def _check(x, reference, program=PROGRAM, **options):
    return check_program(
        program, x, "fd", BACKEND, "numpy", reference, np.random.default_rng(0), **options
    )


def test_right_references_give_no_findings_and_count_every_check():
    outcome = _check(X, reference(X))
    assert outcome.findings == [] and outcome.refusals == []
    assert outcome.checks == 6  # gradient, jacobian, pushforward, pullback, hvp, hessian
    outcome = _check(np.asarray(0.3), reference(np.asarray(0.3)), SCALAR_PROGRAM)
    assert outcome.findings == []
    assert outcome.checks == 8  # and derivative, second_derivative at a 0-d x


#: the reference entry -> the operators whose expected values are built from it
BUILT_FROM = {
    "value": {"value"},
    "scalar": {"value"},
    "jacobian": {"jacobian", "pushforward", "pullback"},
    "gradient": {"gradient"},
    "hessian": {"hvp", "hessian"},
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("entry", list(BUILT_FROM))
def test_a_reference_a_few_percent_off_is_a_finding_of_the_operators_built_from_it(entry, dtype):
    x = X.astype(dtype)
    wrong = reference(X)
    # float32: the rounding slack, 4 sqrt(eps) of f's size, is a tenth of a percent and the cap 0.7 %
    # of the largest entry; second differences may be a few percent off (SECOND_DIFFERENCES_FLOAT32_CAP)
    off = {"float64": 1.01, "float32": 1.05 if entry == "hessian" else 1.02}[dtype]
    wrong[entry] = wrong[entry] * off
    outcome = _check(x, wrong)
    assert {finding.operator for finding in outcome.findings} == BUILT_FROM[entry]
    finding = outcome.findings[0]
    assert (finding.backend_id, finding.family, finding.dtype) == ("fd", "numpy", dtype)
    assert finding.backend is BACKEND and finding.known is None
    assert "v1 = xp.sin(x)" in finding.source and "np.asarray([0.4, -0.7, 1.1" in finding.source
    assert str(finding).startswith(f"fd / {finding.operator} / x numpy {dtype}: ")
    # the message without the operator's name, which the finding holds apart
    assert finding.message.startswith("wrong values without an error: got array(")


#: operator -> the function of diffinterface check_program calls for it
CALLED = {
    "gradient": "value_and_gradient",
    "jacobian": "value_and_jacobian",
    "pushforward": "pushforward",
    "pullback": "pullback",
    "hvp": "hvp",
    "hessian": "hessian",
    "derivative": "derivative",
    "second_derivative": "second_derivative",
}


@pytest.mark.parametrize("operator", list(CALLED))
def test_an_error_is_a_finding_of_the_operator_that_raised_it(operator, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("broken")

    monkeypatch.setattr(di, CALLED[operator], broken)
    x = np.asarray(0.3)
    outcome = _check(x, reference(x), SCALAR_PROGRAM)
    assert [(f.operator, f.message) for f in outcome.findings] == [
        (operator, "raised KeyError: 'broken'")
    ]
    assert outcome.checks == 8


@pytest.mark.parametrize("entry", ["jacobian", "second_derivative"])
def test_at_a_zero_d_x_the_derivatives_are_checked_too(entry):
    x = np.asarray(0.3)
    wrong = reference(x)
    wrong[entry] = wrong[entry] * 1.01
    operators = {finding.operator for finding in _check(x, wrong, SCALAR_PROGRAM).findings}
    assert ("derivative" if entry == "jacobian" else "second_derivative") in operators


def test_only_the_operators_asked_for_are_called():
    wrong = {name: value * 2 for name, value in reference(X).items()}
    for operator in ORDERS:
        outcome = _check(X, wrong, operators=(operator,))
        assert outcome.checks == (0 if operator.endswith("derivative") else 1), operator
        assert {finding.operator for finding in outcome.findings} <= {operator, "value"}


def _finding(message, operator="hvp", source="def f(x):\n    return x"):
    return Finding("fd", "numpy", "float64", operator, message, source)


def test_findings_of_one_defect_share_a_signature_whatever_their_numbers_arrays_and_paths():
    one = _finding("leaf ['a'][0]: wrong values: got array([1.5, -2e-3]), expected 1.25e+00 at 3")
    other = _finding("leaf ['b'][12]: wrong values: got array([7.]), expected -4 at 10")
    assert one.signature() == other.signature() == ("fd", "hvp", "leaf []: wrong values: got ")
    assert _finding("raised KeyError: 3").signature() == ("fd", "hvp", "raised KeyError: #")
    assert _finding("off by 2.5e-03").signature() == _finding("off by 0.25").signature()
    assert one.signature() != _finding(one.message, "hessian").signature()
    assert one.signature() != _finding("leaf ['a'][0]: expected an array").signature()
    # a long message's first words decide (its tail holds the program's numbers)
    words = "the result has shape # where the reference has another " * 4
    assert _finding(words).signature()[2] == words[:120]


def test_a_finding_prints_where_it_was_found_and_the_program_indented():
    assert str(_finding("raised KeyError: 3")) == (
        "fd / hvp / x numpy float64: raised KeyError: 3\n    def f(x):\n        return x"
    )


def _checker(outcome, source="def f(x):\n    return xp.linalg.eigvalsh(x)"):
    return Checker("fd", BACKEND, "numpy", X, source, False, outcome)


def test_a_refusal_is_counted_with_the_function_it_names_and_is_no_finding():
    outcome = Outcome()
    checker = _checker(outcome)

    def refuse():
        raise di.UnsupportedError("AutoX cannot differentiate eigvalsh; use AutoJAX")

    assert checker.call("hessian", refuse) is None
    assert outcome.refusals == [("fd", "linalg.eigvalsh")] and outcome.findings == []
    assert outcome.checks == 1
    assert refused_function(di.UnsupportedError("no second order here"), checker.source) == (
        "(unnamed)"
    )


def test_an_error_is_a_finding_with_its_type_and_first_400_characters():
    outcome = Outcome()
    checker = _checker(outcome)

    def fail():
        raise ValueError("shapes do not match " + "x" * 500)

    assert checker.call("gradient", fail) is None
    assert checker.call("gradient", lambda: "a result") == "a result"
    assert outcome.checks == 2 and outcome.refusals == []
    [finding] = outcome.findings
    assert finding.operator == "gradient"
    assert finding.message == "raised ValueError: " + ("shapes do not match " + "x" * 500)[:400]


def test_a_complex_step_backend_is_not_checked_on_a_program_that_is_not_complex_analytic():
    complex_step = di.AutoFiniteDiff(method="complex")
    kinked = Program((3,), (Step("xp.abs(x)"),))
    outcome = check_program(
        kinked, X, "fd", complex_step, "numpy", reference(X), np.random.default_rng(0)
    )
    assert outcome.checks == 0 and outcome.findings == []
    outcome = check_program(
        PROGRAM, X, "fd", complex_step, "numpy", reference(X), np.random.default_rng(0)
    )
    assert outcome.checks == 6 and outcome.findings == []


def test_a_zero_backend_is_checked_for_shapes_and_dtypes_not_values():
    wrong = {name: value * 2 for name, value in reference(X).items()}
    assert _check(X, wrong, zero=True).findings == []
    assert _check(X, wrong).findings != []


def _linear(divisor):
    """g = sum(sin(f)) with f = x / divisor, and its reference: nearly linear where |x| / divisor is
    small, so central differences of it are right to far below the slack, and |g''| < 1."""
    program = Program((3,), (Step(f"x / {divisor}"),))

    def reference(x):
        s = x / divisor
        return {
            "value": s,
            "jacobian": np.eye(3) / divisor,
            "scalar": np.sum(np.sin(s)),
            "gradient": np.cos(s) / divisor,
            "hessian": np.diag(-np.sin(s) / divisor**2),
        }

    return program, reference


@pytest.mark.parametrize("size, divisor", [(0.5, 1000), (100.0, 10)])
def test_a_gradients_slack_is_the_truncation_of_the_step_taken(size, divisor):
    """``h |g''| / 2``, with h = sqrt(eps) max(|x|, 1) and |g''| taken as at least 1: a reference off
    by 1.25 times that is a finding, 0.8 times is not (below the cap, 1e-4 of the gradient, and with
    f, g and the gradient small enough that the rounding slack is at most a hundredth of it)."""
    program, exact = _linear(divisor)
    x = size * np.array([1.0, -0.5, 0.25])
    truncation = float(np.sqrt(np.finfo(np.float64).eps)) * max(size, 1.0) / 2
    found = []
    for factor in (0.8, 1.25):
        wrong = exact(x)
        wrong["gradient"] = wrong["gradient"] + factor * truncation
        outcome = check_program(
            program, x, "fd", BACKEND, "numpy", wrong, np.random.default_rng(0), ("gradient",)
        )
        found.append([finding.operator for finding in outcome.findings])
    assert found == [[], ["gradient"]]


@pytest.mark.parametrize("largest", ["value", "scalar", "gradient"])
def test_the_differenced_size_is_the_largest_value_or_gradient_entry_of_any_leaf(largest):
    """What a finite-difference rule differences (f's and g's values, and the gradient for an hvp);
    never the Jacobian's or the Hessian's entries."""
    sizes = {"value": 0.25, "scalar": 0.125, "gradient": 0.5}
    sizes[largest] = 0.75
    reference = {
        "value": np.array([sizes["value"], 0.0]),
        "scalar": np.asarray(-sizes["scalar"]),
        "gradient": {"a": np.zeros(0), "b": (np.array([0.0, -sizes["gradient"]]),)},
        "jacobian": np.full((2, 2), 9.0),
        "hessian": np.full((2, 2), 9.0),
    }
    assert differenced_size(reference) == 0.75
    assert differenced_size({"value": np.zeros(0), "hessian": np.ones(3)}) == 0.0
    assert differenced_size({}) == 0.0


EPS64, EPS32 = float(np.finfo(np.float64).eps), float(np.finfo(np.float32).eps)


@pytest.mark.parametrize(
    "precision, order, curvature, expected",
    [
        # h = sqrt(eps) scale: truncation h |g''| / 2 below the cap 1e-4 size, rounding 4 eps |f| / h
        (
            "float64",
            1,
            3.0,
            EPS64**0.5 * 4 * 3 / 2 + 4 * EPS64 * 10 / (EPS64**0.5 * 4),
        ),
        # a curvature whose truncation passes the cap: the cap
        ("float64", 1, 1e12, 1e-4 * 2 + 4 * EPS64 * 10 / (EPS64**0.5 * 4)),
        # second order, h = eps**(1/4) scale: the cap, and the rounding over h**2
        ("float64", 2, None, 1e-4 * 2 + 4 * EPS64 * 10 / (EPS64**0.25 * 4) ** 2),
        ("float32", 1, None, 7e-3 * 2 + 4 * EPS32 * 10 / (EPS32**0.5 * 4)),
        ("float32", 2, None, 3e-2 * 2 + 4 * EPS32 * 10 / (EPS32**0.25 * 4) ** 2),
        # a precision with no table of its own gets float32's
        ("float16", 1, None, 7e-3 * 2 + 4 * EPS32 * 10 / (EPS32**0.5 * 4)),
        ("float16", 2, None, 3e-2 * 2 + 4 * EPS32 * 10 / (EPS32**0.25 * 4) ** 2),
    ],
)
def test_the_slack_is_the_error_of_the_step_taken(precision, order, curvature, expected):
    """At max(|x|, 1) = 4, |f| = 10 and a result of largest entry 2 (docs: Checker.slack)."""
    checker = Checker("fd", BACKEND, "numpy", X, "f", False, Outcome(), precision=precision)
    checker.scale, checker.differenced = 4.0, 10.0
    assert checker.slack(order, 2.0, curvature) == pytest.approx(expected, rel=1e-12)


def test_a_checker_made_by_hand_takes_unit_curvature_and_scale_and_no_rounding():
    """The meta-tests make Checkers by hand and set only what their case needs."""
    checker = Checker("fd", BACKEND, "numpy", X, "f", False, Outcome())
    assert checker.slack(1, 2.0, checker.curvature) == pytest.approx(EPS64**0.5 / 2, rel=1e-12)


def test_a_torch_x_is_checked_in_its_own_dtype():
    import torch

    like = torch.zeros(3, dtype=torch.float32)
    checker = Checker("fd", BACKEND, "torch", like, "f", False, Outcome())
    assert (checker.dtype, checker.precision) == ("float32", "float32")


def test_a_precision_with_no_table_of_its_own_is_checked_with_float32s():
    outcome = Outcome()
    checker = Checker("fd", BACKEND, "numpy", X, "f", False, outcome, precision="float16")
    checker.compare("jacobian", X * (1 + 1e-3), X)  # within float32's chain tolerance and slack
    assert outcome.findings == []
    checker.compare("jacobian", X * 1.02, X)
    assert [finding.operator for finding in outcome.findings] == ["jacobian"]


def _found(backend, operator, got, expected, precision="float64"):
    outcome, got = Outcome(), np.asarray(got)
    checker = Checker("fd", backend, "numpy", got, "f", False, outcome, precision=precision)
    checker.compare(operator, got, np.asarray(expected))
    return [finding.operator for finding in outcome.findings]


EXACT = di.AutoAutograd()


def test_an_exact_results_absolute_tolerance_scales_with_its_largest_entry_above_one():
    # float64 exact tables: atol 1e-11 times max(1, largest entry), on every entry
    assert _found(EXACT, "jacobian", [1000.0, 5e-9], [1000.0, 0.0]) == []
    assert _found(EXACT, "jacobian", [0.5, 1.5e-11], [0.5, 0.0]) == ["jacobian"]
    assert _found(EXACT, "jacobian", np.zeros((0, 3)), np.zeros((0, 3))) == []


def test_float32_results_get_the_chain_tolerance_plus_the_slack():
    # exact: rtol and atol 5e-4 each (a chain of float32 operations), far above float32's tables
    ones = np.ones(3, dtype=np.float32)
    assert _found(EXACT, "gradient", ones * np.float32(1 + 8e-4), np.ones(3), "float32") == []
    assert _found(EXACT, "gradient", ones * np.float32(1.002), np.ones(3), "float32") != []
    # approximate: and the slack, here the truncation sqrt(eps) / 2 of a gradient at unit curvature
    assert _found(BACKEND, "gradient", ones * np.float32(1 + 1.1e-3), np.ones(3), "float32") == []
    assert _found(BACKEND, "gradient", ones * np.float32(1.0013), np.ones(3), "float32") != []


def test_only_a_gradient_is_held_to_the_truncation_elsewhere_the_cap_of_the_largest_entry():
    # float64 cap: 1e-4 of the largest entry (the reference holds no curvature of f)
    tiny = X * 1e-3
    assert _found(BACKEND, "jacobian", X * (1 + 5e-5), X) == []
    assert _found(BACKEND, "jacobian", tiny * 1.01, tiny) == ["jacobian"]
