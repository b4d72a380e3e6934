"""The conformance kit can fail: wrong backends, wrong scenarios and broken operators are all caught."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import diffinterface as di
from tests.matrix import SECONDARY
from diffinterface.core import Impl, get_adapter
from diffinterface.backends.finitediff import FiniteDiffAdapter
from diffinterface.selectors import AbstractBackend
from diffinterface.testing import (
    BACKENDS,
    Scenario,
    bad_input_cases,
    nested_cases,
    benchmark_differentiation,
    build_cases,
    default_scenarios,
    default_tolerances,
    edge_scenarios,
    second_order_scenarios,
    test_differentiation,
)
from diffinterface.testing.pytest_plugin import GROUPS, select_backends
from diffinterface.testing.pytree_scenarios import pytree_scenarios
from diffinterface.testing.batch_scenarios import batch_cases
from diffinterface.testing.worker_scenarios import worker_cases
from diffinterface.testing.aux_scenarios import aux_cases
from diffinterface.testing.same_point_scenarios import same_point_cases
from diffinterface.testing.implicit_scenarios import implicit_cases
from diffinterface.testing.complex_scenarios import complex_cases

# -- a test double: complex-step differences with a deliberate relative error ---------------------


@dataclasses.dataclass(frozen=True)
class SlightlyWrong(AbstractBackend):
    """Selector of the test double: derivatives multiplied by ``1 + error``."""

    error: float = 0.0
    method: str = "complex"
    rel_step: float = None
    abs_step: float = None


class SlightlyWrongAdapter(FiniteDiffAdapter):
    """Complex-step pushforwards (exact to rounding), scaled by ``1 + error``; everything else is the core's fallback."""

    # the complex step is exact to rounding: the kit's exact tolerances, which a wrong scale fails
    capabilities = FiniteDiffAdapter.capabilities.replace(approximate=False)

    def prepare_pushforward(self, problem):
        exact = super().prepare_pushforward(problem)
        scale = 1.0 + self.backend.error

        def value_and_pushforward(x, tangents, *ctx):
            value, results = exact.value_and_pushforward(x, tangents, *ctx)
            return value, tuple((r * scale).astype(r.dtype) for r in results)

        return Impl(
            value_and_pushforward=value_and_pushforward,
            pushforward=lambda x, tangents, *ctx: value_and_pushforward(x, tangents, *ctx)[1],
        )

    # Route every operator through the (wrong) primitive.
    prepare_derivative = prepare_gradient = prepare_jacobian = lambda self, problem: None


class BakedAdapter(FiniteDiffAdapter):
    """Computes the pushforward at preparation and returns it on every call: right only at the prepared x."""

    def prepare_pushforward(self, problem):
        exact = super().prepare_pushforward(problem)
        value, results = exact.value_and_pushforward(problem.x, problem.tangents, *problem.ctx)
        return Impl(
            value_and_pushforward=lambda x, tangents, *ctx: (value, results),
            pushforward=lambda x, tangents, *ctx: results,
        )


@dataclasses.dataclass(frozen=True)
class Baked(AbstractBackend):
    """Selector of the test double that bakes the preparation's values in."""

    method: str = "complex"
    rel_step: float = None
    abs_step: float = 1e-30


di.register_backend(Baked, BakedAdapter)
di.register_backend(SlightlyWrong, SlightlyWrongAdapter)


def _excluded_for_the_complex_step_only(report):
    """The excluded cases of a complex-step test double: those writing a real Cache, and nothing else.

    The complex step evaluates f at complex points, which a real ``di.Cache``
    cannot hold; the adapter declares it (``writes_cache`` False) and the kit
    excludes those scenarios. Returns the number of cases that ran.
    """
    assert all("writes_cache is False" in r.notes[0] for r in report.excluded), str(report)
    assert all(
        any(c.kind == "Cache" for c in s.contexts)
        for s in _scenarios_named(r.scenario for r in report.excluded)
    )
    return len(report.results) - len(report.excluded)


def _scenarios_named(names):
    every = {s.name: s for s in default_scenarios() + second_order_scenarios()}
    return [every[name] for name in names]


def test_a_backend_baking_values_in_at_preparation_is_caught():
    backend = Baked()
    report = test_differentiation(
        {"baked": backend}, default_scenarios("pushforward"), raise_on_failure=False
    )
    assert len(report.failed) == _excluded_for_the_complex_step_only(report) > 0, str(report)
    for result in report.failed:
        prepared = [p for p in result.problems if p.startswith("prepared call")]
        assert prepared and all("values differ" in p for p in prepared), result.message()
        assert not any(p.startswith("unprepared:") for p in result.problems), result.message()


@pytest.fixture
def slightly_wrong():
    """``slightly_wrong(error)`` -> the registered test-double selector."""
    return SlightlyWrong


def test_the_test_double_is_right_without_its_error(slightly_wrong):
    report = test_differentiation(slightly_wrong(0.0), default_scenarios(), raise_on_failure=False)
    assert report.ok, str(report)
    assert (
        len(report.passed)
        == _excluded_for_the_complex_step_only(report)
        == len(default_scenarios()) - len(report.excluded)
    )


@pytest.mark.parametrize("error", [1e-3, -1e-4])
def test_slightly_wrong_derivatives_fail_every_case(slightly_wrong, error):
    report = test_differentiation(
        slightly_wrong(error), default_scenarios(), raise_on_failure=False
    )
    assert not report.ok
    assert len(report.failed) == _excluded_for_the_complex_step_only(report) > 0, str(report)
    for result in report.failed:
        assert any("values differ" in p for p in result.problems), result.message()
        assert not any(
            p.startswith("prepared value_and") and "value:" in p for p in result.problems
        )


def test_failures_raise_inside_pytest_with_the_table(slightly_wrong):
    with pytest.raises(AssertionError, match="values differ"):
        test_differentiation(slightly_wrong(1e-3), default_scenarios("gradient"))


def test_pytest_case_check_raises_for_a_wrong_backend(slightly_wrong):
    (case,) = build_cases(slightly_wrong(1e-3), default_scenarios("gradient")[:1])
    with pytest.raises(AssertionError, match=r"gradient-vector_to_scalar-float64-numpy: failed"):
        case.check()


# -- wrong scenarios -----------------------------------------------------------------------------


def _scaled(a, factor):
    if isinstance(a, tuple):
        return tuple(_scaled(i, factor) for i in a)
    return (np.asarray(a) * factor).astype(np.asarray(a).dtype)


@pytest.mark.parametrize("field", ["first", "value"])
def test_a_wrong_expected_value_is_caught(field):
    for scenario in default_scenarios():
        wrong = dataclasses.replace(scenario, **{field: _scaled(getattr(scenario, field), 1.05)})
        for backend_id in ("finitediff-central", "finitediff-complex"):
            report = test_differentiation(
                {backend_id: BACKENDS[backend_id]}, [wrong], raise_on_failure=False
            )
            ran = (
                _excluded_for_the_complex_step_only(report)
                if backend_id == "finitediff-complex"
                else 1
            )
            assert len(report.failed) == ran, f"{scenario.name} on {backend_id}:\n{report}"
            if not ran:
                continue
            assert "values differ" in "\n".join(report.failed[0].problems)


def test_one_percent_error_fails_finite_differences_in_float64():
    float64 = [s for s in default_scenarios() if s.dtype == "float64"]
    assert len(float64) >= 15
    for scenario in float64:
        wrong = dataclasses.replace(scenario, first=_scaled(scenario.first, 1.01))
        report = test_differentiation(
            di.AutoFiniteDiff(method="forward"), [wrong], raise_on_failure=False
        )
        assert not report.ok, scenario.name
    rtol, atol = default_tolerances(di.AutoFiniteDiff(), "float64")
    assert rtol <= 1e-4 and atol <= 1e-6


def test_tolerances_depend_on_dtype_backend_and_overrides():
    assert default_tolerances(di.AutoJAX(), "float64") < default_tolerances(di.AutoJAX(), "float32")
    assert default_tolerances(di.AutoJAX(), "float64") < default_tolerances(
        di.AutoFiniteDiff(), "float64"
    )
    scenario = default_scenarios("gradient")[1]  # float32
    assert scenario.dtype == "float32"
    loose = dataclasses.replace(scenario, first=_scaled(scenario.first, 1.02))
    backend = di.AutoFiniteDiff()
    assert not test_differentiation(backend, [loose], raise_on_failure=False).ok
    assert test_differentiation(backend, [loose], rtol={"float32": 0.05}, raise_on_failure=False).ok


# -- broken operators, inputs and preparations ---------------------------------------------------


def test_an_operator_ignoring_out_is_caught(monkeypatch):
    original = di.gradient
    monkeypatch.setattr(
        di.operators, "gradient", lambda *args, out=None, **kwargs: original(*args, **kwargs)
    )
    report = test_differentiation(
        di.AutoFiniteDiff(), default_scenarios("gradient"), raise_on_failure=False
    )
    assert len(report.failed) == len(default_scenarios("gradient"))
    assert all(any("not the out= buffer itself" in p for p in r.problems) for r in report.failed), (
        str(report)
    )


def test_a_preparation_that_is_never_strict_is_caught(monkeypatch):
    original = di.prepare_jacobian
    monkeypatch.setattr(
        di.operators,
        "prepare_jacobian",
        lambda *args, strict=True, **kw: original(*args, strict=False, **kw),
    )
    report = test_differentiation(
        di.AutoFiniteDiff(), default_scenarios("jacobian"), raise_on_failure=False
    )
    assert report.failed and len(report.failed) == len(report.results)
    for result in report.failed:
        assert any(p.startswith("mismatch (x shape)") for p in result.problems), result.message()


def test_results_in_the_wrong_family_or_dtype_are_caught(monkeypatch):
    from diffinterface.testing.families import to_numpy

    original = di.gradient
    monkeypatch.setattr(
        di.operators, "gradient", lambda *args, **kwargs: to_numpy(original(*args, **kwargs))
    )
    report = test_differentiation(
        di.AutoTorch(), default_scenarios("gradient"), families=["torch"], raise_on_failure=False
    )
    assert len(report.failed) == len(default_scenarios("gradient"))
    assert all(
        any("expected a torch result; got numpy" in p for p in r.problems) for r in report.failed
    )

    monkeypatch.setattr(
        di.operators,
        "gradient",
        lambda *args, **kwargs: original(*args, **kwargs).astype("float64"),
    )
    report = test_differentiation(
        di.AutoFiniteDiff(), default_scenarios("gradient"), raise_on_failure=False
    )
    float32 = [r for r in report.failed if "float32" in r.scenario]
    assert float32 and all(
        any("and dtype float32; got numpy float64" in p for p in r.problems) for r in float32
    )


def test_a_function_modifying_its_inputs_is_caught():
    def f(x, w):
        w[0] += 1.0  # mutates the Constant's value
        return (w * x).sum()

    w = np.array([1.0, 2.0])
    scenario = Scenario(
        "gradient",
        f,
        np.ones(2),
        contexts=(di.Constant(w),),
        value=np.float64(3.0),
        first=np.array([1.0, 2.0]),
        name="mutating",
    )
    report = test_differentiation(di.AutoFiniteDiff(), [scenario], raise_on_failure=False)
    assert any("inputs modified: contexts[0]" in p for p in report.failed[0].problems), str(report)


def test_a_wrong_result_type_is_caught(monkeypatch):
    original = di.pushforward
    monkeypatch.setattr(
        di.operators, "pushforward", lambda *args, **kwargs: list(original(*args, **kwargs))
    )
    report = test_differentiation(
        di.AutoFiniteDiff(), default_scenarios("pushforward")[:1], raise_on_failure=False
    )
    assert any("expected a tuple of 2 results; got list" in p for p in report.failed[0].problems), (
        str(report)
    )


def test_a_missing_framework_fails_and_is_not_skipped(monkeypatch):
    @dataclasses.dataclass(frozen=True)
    class AutoNowhere(AbstractBackend):
        pass

    # registered for this test only: AutoSelect's default candidates (every registered backend) would
    # otherwise depend on whether this test ran earlier in the same process
    from diffinterface.core import registry

    monkeypatch.setattr(registry, "_REGISTRATIONS", dict(registry._REGISTRATIONS))
    monkeypatch.setattr(registry, "_ADAPTERS", dict(registry._ADAPTERS))
    di.register_backend(AutoNowhere, "no_such_framework_module:Adapter", extra="nowhere")
    cases = build_cases({"nowhere": AutoNowhere()}, default_scenarios())
    assert cases and not any(case.excluded for case in cases)
    result = cases[0].run()
    assert result.status == "failed"
    assert (
        "failed to import" in result.problems[0] and "diffinterface[nowhere]" in result.problems[0]
    )


# -- exclusions, ids, counts ---------------------------------------------------------------------


class _NoInplaceAdapter(FiniteDiffAdapter):
    capabilities = FiniteDiffAdapter.capabilities.replace(inplace=False)


@dataclasses.dataclass(frozen=True)
class NoInplace(AbstractBackend):
    """Complex-step finite differences that declare they cannot differentiate f(y, x)."""

    method: str = "complex"
    rel_step: float = None
    abs_step: float = None


di.register_backend(NoInplace, _NoInplaceAdapter)


def test_capabilities_turn_cases_into_refusal_checks_and_exclusions_are_reported():
    backend = NoInplace()
    scenarios = default_scenarios()
    report = test_differentiation(
        {"no-inplace": backend}, scenarios, excluded=("gradient",), raise_on_failure=False
    )
    two_argument = {s.name for s in scenarios if s.two_argument}
    gradients = {s.name for s in scenarios if s.operator == "gradient"}
    # without inplace, the scenarios writing a di.Cache are excluded too (nothing to refuse at preparation)
    cache_writers = {s.name for s in scenarios if any(c.kind == "Cache" for c in s.contexts)}
    assert {r.scenario for r in report.excluded} == gradients | cache_writers
    refused = [r for r in report.passed if r.scenario in two_argument]
    assert {r.scenario for r in refused} == two_argument
    assert all(
        "refused as declared" in r.notes[0] and "check_inplace is False" in r.notes[0]
        for r in refused
    )
    assert "excluded" in str(report) and report.ok


def test_a_declared_refusal_that_does_not_refuse_is_caught():
    backend = NoInplace(abs_step=1e-30)  # its own adapter instance, changed below
    adapter = get_adapter(backend)
    two_argument = [s for s in default_scenarios() if s.two_argument]
    cases = build_cases({"liar": backend}, two_argument)
    assert cases and all(case.refused for case in cases)
    declared = adapter.capabilities
    # the capability was read when the cases were built; now it runs instead of refusing
    adapter.capabilities = declared.replace(inplace=True)
    try:
        results = [case.run() for case in cases]
    finally:
        adapter.capabilities = declared
    assert all(r.status == "failed" for r in results)
    assert any("expected UnsupportedError" in p for r in results for p in r.problems)


def test_case_ids_are_readable_and_unique():
    cases = build_cases(BACKENDS, default_scenarios())
    ids = [case.id for case in cases]
    assert len(ids) == len(set(ids))
    assert "finitediff-central-jacobian-vector_to_vector-float64-numpy" in ids
    assert "torch-pullback-vector_to_vector-batched-float64-torch" in ids


def test_native_family_variants_follow_the_adapters_families():
    families = {case.family for case in build_cases({"torch": di.AutoTorch()}, default_scenarios())}
    assert families == set(get_adapter(di.AutoTorch()).capabilities.families) & {
        "numpy",
        "torch",
        "jax",
    }
    assert {case.family for case in build_cases(di.AutoFiniteDiff(), default_scenarios())} == {
        "numpy"
    }


def test_evaluation_counts_match_finite_difference_costs():
    # documented cost of forward differences: n + 1 evaluations per gradient; central: 2n (2n + 1 with the value)
    scenario = default_scenarios("gradient")[0]
    n = scenario.x.size
    forward = (
        test_differentiation(di.AutoFiniteDiff(method="forward"), [scenario]).results[0].counts
    )
    central = test_differentiation(di.AutoFiniteDiff(), [scenario]).results[0].counts
    assert forward["call"] == forward["call1"] == n + 1
    assert central["call"] == 2 * n and central["value_and"] == 2 * n + 1
    assert central["unprepared"] == central["prepare"] + central["call"]


def test_report_prints_a_table():
    report = test_differentiation(di.AutoFiniteDiff(), default_scenarios("derivative"))
    lines = str(report).splitlines()
    assert lines[0].split()[:4] == ["backend", "scenario", "family", "status"]
    assert len(lines) == 2 + len(report.results) + 1
    assert lines[-1] == f"{len(report.results)} passed, 0 failed, 0 excluded"


# -- scenarios -----------------------------------------------------------------------------------


def test_scenario_sets_cover_the_issue():
    first = default_scenarios()
    assert {s.operator for s in first} == {
        "pushforward",
        "pullback",
        "derivative",
        "gradient",
        "jacobian",
    }
    assert {s.dtype for s in first} == {"float32", "float64"}
    assert any(s.two_argument for s in first) and any(s.contexts for s in first)
    assert any(s.tangents and len(s.tangents) == 2 for s in first)
    assert {len(s.x_shape) for s in first} == {0, 1, 2}
    assert {np.ndim(s.value) for s in first} == {0, 1, 2}
    second = second_order_scenarios()
    assert {s.operator for s in second} == {"second_derivative", "hvp", "hessian"}
    assert all(s.second is not None and s.first is not None for s in second)
    hessians = second_order_scenarios("hessian")
    assert hessians and all(s.operator == "hessian" for s in hessians)
    with pytest.raises(ValueError, match="operators: expected names among"):
        default_scenarios("hessian")


def test_expected_values_agree_with_central_differences_of_the_function_itself():
    # An independent check of the hand-written derivatives: numpy central differences on f.
    for s in default_scenarios() + second_order_scenarios():
        if s.y is not None:
            continue
        # a Cache of the scenario's dtype would round f's float64 values: give it a float64 one
        ctx = [
            np.asarray(c.value, np.float64) if c.kind == "Cache" else c.value for c in s.contexts
        ]
        f = lambda x: np.asarray(s.f(x, *ctx), dtype=np.float64)  # noqa: E731
        x = np.asarray(s.x, dtype=np.float64)
        np.testing.assert_allclose(f(x), s.value, rtol=1e-5, err_msg=s.name)
        h = 1e-6
        columns = []
        for i in range(x.size):
            e = np.zeros(x.size)
            e[i] = h
            columns.append((f(x + e.reshape(x.shape)) - f(x - e.reshape(x.shape))) / (2 * h))
        jac = np.stack(columns, axis=-1).reshape(np.shape(s.value) + x.shape)
        if s.operator == "pushforward":
            flat = jac.reshape(np.size(s.value), x.size)
            for t, result in zip(s.tangents, s.first):
                np.testing.assert_allclose(
                    np.reshape(result, -1), flat @ np.reshape(t, -1), rtol=1e-4, atol=1e-6
                )
        elif s.operator == "pullback":
            flat = jac.reshape(np.size(s.value), x.size)
            for c, result in zip(s.tangents, s.first):
                np.testing.assert_allclose(
                    np.reshape(result, -1), np.reshape(c, -1) @ flat, rtol=1e-4, atol=1e-6
                )
        else:
            np.testing.assert_allclose(
                np.reshape(s.first, jac.shape), jac, rtol=1e-4, atol=1e-6, err_msg=s.name
            )


def _second_differences(f, x, h=1e-4):
    """f's second derivatives at x (float64), ``y.shape + x.shape + x.shape``, by central second differences."""
    n = x.size
    step = np.eye(n).reshape((n, *x.shape)) * h

    def entry(i, j):
        corners = (
            f(x + step[i] + step[j]),
            -f(x + step[i] - step[j]),
            -f(x - step[i] + step[j]),
            f(x - step[i] - step[j]),
        )
        return sum(corners) / (4 * h**2)

    rows = [np.stack([entry(i, j) for j in range(n)], axis=-1) for i in range(n)]
    return np.stack(rows, axis=-2).reshape(np.shape(f(x)) + x.shape + x.shape)


def test_second_order_expected_values_agree_with_second_differences_of_the_function_itself():
    # An independent check of the hand-written second derivatives: numpy second differences on f in
    # float64, whose error (truncation of order h**2, rounding of order eps |f| / h**2) is near 1e-8.
    scenarios = second_order_scenarios()
    for s in scenarios:
        assert s.y is None, f"{s.name}: a two-argument second-order scenario needs its own check"
        ctx = [
            np.asarray(c.value, np.float64) if c.kind == "Cache" else c.value for c in s.contexts
        ]
        f = lambda x: np.asarray(s.f(x, *ctx), dtype=np.float64)  # noqa: E731
        x = np.asarray(s.x, dtype=np.float64)
        hessian = _second_differences(f, x)
        if s.operator == "hvp":
            flat = hessian.reshape(x.size, x.size)
            for t, result in zip(s.tangents, s.second):
                np.testing.assert_allclose(
                    np.reshape(result, -1),
                    flat @ np.reshape(t, -1),
                    rtol=1e-5,
                    atol=1e-6,
                    err_msg=s.name,
                )
        else:
            np.testing.assert_allclose(
                np.reshape(s.second, hessian.shape), hessian, rtol=1e-5, atol=1e-6, err_msg=s.name
            )
    assert {s.operator for s in scenarios} == {"second_derivative", "hvp", "hessian"}


def test_scenario_validates_its_arguments():
    with pytest.raises(ValueError, match="operator: expected one of"):
        Scenario("curl", np.sin, np.ones(2), first=np.ones(2))
    with pytest.raises(TypeError, match="tangents: pushforward scenarios need a non-empty tuple"):
        Scenario("pushforward", np.sin, np.ones(2), first=(np.ones(2),))
    with pytest.raises(ValueError, match="y: gradient has no two-argument form"):
        Scenario("gradient", np.sin, np.ones(2), y=np.ones(2), first=np.ones(2))
    with pytest.raises(ValueError, match="first: a jacobian scenario needs its expected result"):
        Scenario("jacobian", np.sin, np.ones(2))


# -- the pytest plugin and the benchmark ---------------------------------------------------------


def test_backend_selection():
    assert set(select_backends("finitediff")) == {
        "finitediff-central",
        "finitediff-forward",
        "finitediff-complex",
    }
    assert list(select_backends("jax,zero-forward")) == ["jax", "zero-forward"]
    assert set(select_backends("diffinterface.testing.backends:ZERO_BACKENDS")) == {
        "zero-forward",
        "zero-reverse",
    }
    with pytest.raises(pytest.UsageError, match="unknown backend id 'mxnet'"):
        select_backends("mxnet")


def test_backend_selection_reads_the_environment_when_the_option_is_absent(monkeypatch):
    from diffinterface.testing.pytest_plugin import selected_backends

    class Config:  # what selected_backends reads from pytest's config
        def getoption(self, name, default=None):
            return default

    monkeypatch.setenv("DI_BACKENDS", "autograd,zero-reverse")
    assert list(selected_backends(Config())) == ["autograd", "zero-reverse"]
    monkeypatch.delenv("DI_BACKENDS")
    assert set(selected_backends(Config())) == set(BACKENDS) | {"zero-forward", "zero-reverse"}


def test_plugin_gives_one_test_per_case_and_fails_a_wrong_backend(pytester):
    pytester.makeconftest('pytest_plugins = ["diffinterface.testing.pytest_plugin"]')
    pytester.makepyfile(
        wrong_backend=textwrap.dedent(
            """
            import dataclasses
            from diffinterface.selectors import AutoFiniteDiff

            WRONG = AutoFiniteDiff(method="forward", rel_step=0.3)  # a huge step: forward differences far off
            """
        ),
        test_it="def test_first_order(di_case):\n    di_case.check()\n",
    )
    result = pytester.runpytest_subprocess(
        "--di-backends=finitediff-central", "-q", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=len(default_scenarios()))
    result = pytester.runpytest_subprocess(
        "--di-backends=wrong_backend:WRONG", "-q", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=len(default_scenarios()))
    result.stdout.fnmatch_lines(
        ["*WRONG-jacobian-vector_to_vector-float64-numpy: failed*", "*values differ*"]
    )


def test_benchmark_rows_and_table():
    rows = benchmark_differentiation(
        {"fd": di.AutoFiniteDiff(method="forward")}, default_scenarios("gradient")[:1], repeats=2
    )
    n = default_scenarios("gradient")[0].x.size
    assert [(r["prepared"], r["evaluations"]) for r in rows] == [(True, n + 1), (False, n + 2)]
    assert all(r["median_time_s"] >= 0 for r in rows)
    assert rows[0]["preparation_time_s"] >= 0 and rows[1]["preparation_time_s"] is None
    assert str(rows).splitlines()[0].split()[:4] == ["backend", "scenario", "family", "operator"]
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            rows.dataframe()
    else:
        assert list(rows.dataframe()["evaluations"]) == [n + 1, n + 2]


def test_importing_the_kit_imports_no_framework():
    code = (
        "import sys, diffinterface, diffinterface.testing, diffinterface.testing.pytest_plugin;"
        "print(sorted(m for m in ('jax', 'torch', 'autograd', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@SECONDARY
def test_pyargs_entry_point_runs_the_shipped_tests(tmp_path):
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--pyargs",
        "diffinterface.testing",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "diffinterface.testing.pytest_plugin",
        "--di-backends=finitediff-complex",
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    cases = build_cases(
        BACKENDS["finitediff-complex"],
        default_scenarios() + second_order_scenarios() + pytree_scenarios() + edge_scenarios(),
    )
    excluded = sum(
        case.excluded is not None for case in cases
    )  # the Cache writers (writes_cache is False)
    assert done.returncode == 0, done.stdout[-3000:]
    fuzzed = (
        1  # the fuzz suite's test for the backend (diffinterface/testing/fuzz/test_fuzz_kit.py)
    )
    batched = len(
        batch_cases({"finitediff-complex": BACKENDS["finitediff-complex"]})
    )  # batch_scenarios.py
    ran = (
        len(cases)
        - excluded
        + len(bad_input_cases(BACKENDS["finitediff-complex"]))
        + fuzzed
        + batched
    )
    ran += len(aux_cases(BACKENDS["finitediff-complex"])) + len(
        same_point_cases(BACKENDS["finitediff-complex"])
    )
    ran += len(
        worker_cases({"finitediff-complex": BACKENDS["finitediff-complex"]})
    )  # worker_scenarios.py
    ran += len(complex_cases(BACKENDS["finitediff-complex"]))  # each checks the declared refusal
    ran += len(implicit_cases(BACKENDS["finitediff-complex"]))  # implicit_scenarios.py
    ran += len(nested_cases(BACKENDS["finitediff-complex"]))  # the nesting probes
    assert f"{ran} passed, {excluded} skipped" in done.stdout, done.stdout[-3000:]


def test_both_conformance_files_run_every_group_of_the_one_list():
    from diffinterface.testing import test_kit_conformance
    from tests.core import test_conformance

    for module in (test_kit_conformance, test_conformance):
        tests = {name: test for name, test in vars(module).items() if name.startswith("test_")}
        assert list(tests) == [group.test for group in GROUPS], module.__name__
        for group in GROUPS:
            assert list(inspect.signature(tests[group.test]).parameters) == [group.fixture]


def test_counts_table_lists_each_backend_and_operator():
    report = test_differentiation({"fd": di.AutoFiniteDiff(method="forward")}, default_scenarios())
    lines = str(report.counts_table()).splitlines()
    assert lines[0].split() == ["backend", "operator", "family", "prepare", "call"]
    gradient = next(line.split() for line in lines if line.split()[1] == "gradient")
    sizes = sorted({s.x.size for s in default_scenarios("gradient")})
    assert gradient == ["fd", "gradient", "numpy", "1", f"{sizes[0] + 1}-{sizes[-1] + 1}"]


# -- bad inputs ----------------------------------------------------------------------------------


def test_a_backend_accepting_a_bare_tangent_is_caught(monkeypatch):
    import importlib

    build = importlib.import_module("diffinterface.core.build")  # where the seeds are checked
    monkeypatch.setattr(build, "check_tangents", lambda *args, **kwargs: None)
    results = {
        case.bad_input.name: case.run() for case in bad_input_cases({"fd": di.AutoFiniteDiff()})
    }
    assert results["tangents_not_a_tuple"].status == "failed"
    assert any("expected TypeError matching" in p for p in results["tangents_not_a_tuple"].problems)
    assert results["tangent_int64"].status == "failed"
    assert results["out_read_only"].status == "passed"  # only what was broken fails


class _SilentZerosAdapter(FiniteDiffAdapter):
    """Gradients of zeros whatever f computes: the silent failure a broken graph gives."""

    def prepare_gradient(self, problem):
        zeros = np.zeros(problem.x_shape, dtype=problem.x_dtype)
        return Impl(
            gradient=lambda x, *ctx: zeros.copy(),
            value_and_gradient=lambda x, *ctx: (np.asarray(problem.f(x, *ctx)), zeros.copy()),
        )


@dataclasses.dataclass(frozen=True)
class SilentZeros(AbstractBackend):
    method: str = "central"
    rel_step: float = None
    abs_step: float = None


di.register_backend(SilentZeros, _SilentZerosAdapter)


def test_a_backend_returning_silent_zeros_for_a_broken_graph_is_caught():
    results = {
        case.bad_input.name: case.run() for case in bad_input_cases({"silent": SilentZeros()})
    }
    for name in ("float_of_the_input", "numpy_on_the_input"):
        assert results[name].status == "failed", results[name].message()
        assert any("wrong derivative without an error" in p for p in results[name].problems)
    assert results["zero_through_the_graph"].status == "passed"
