"""Smoke test of the benchmark harness (``python -m benchmarks --tiny``): it runs and reports.

Asserts that every backend that imports yields a row with finite positive
times and ratio, the same derivative as its native recipe, and that the
Markdown table is written. Never asserts anything about speed.
"""

from __future__ import annotations

import io
import math
import sys

import numpy as np
import pytest

import diffinterface as di
from tests.matrix import SECONDARY
from tests.paths import ROOT

sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402 - the repository root is on sys.path from here on

#: runs the benchmark scripts end to end: left to the rest matrix
pytestmark = SECONDARY


@pytest.fixture(scope="module")
def settings_before():
    """JAX's x64 flag and torch's thread count before the harness ran (it changes both while it runs)."""
    import jax
    import torch

    return jax.config.jax_enable_x64, torch.get_num_threads()


@pytest.fixture(scope="module")
def results(settings_before, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    log = io.StringIO()
    results = harness.run("tiny", out=out, plot=False, log=log)
    results["out"] = out
    results["log"] = log.getvalue()
    return results


def test_every_importable_backend_has_a_finite_positive_row(results):
    imported = [b for b, error in results["imports"].items() if error is None]
    assert imported, "no backend imported: " + str(results["imports"])
    ok = {row["backend"]: row for row in results["rows"] if row["status"] == "ok"}
    assert set(imported) <= set(ok), results["log"]
    for row in ok.values():
        for key in ("native_s", "prepared_s", "unprepared_s", "prepare_s", "ratio"):
            assert math.isfinite(row[key]) and row[key] > 0, (row["backend"], key, row[key])
        assert row["ratio_q1"] <= row["ratio"] <= row["ratio_q3"]


def test_interface_and_native_compute_the_same_derivative(results):
    for row in results["rows"]:
        if row["status"] == "ok":
            assert row["correct"], (row["backend"], row["max_error"])


def test_evaluations_are_counted(results):
    rows = [row for row in results["rows"] if row["status"] == "ok"]
    for row in rows:
        # sum(x**2) at n = 10: autograd and torch evaluate once, finite differences 2n or n + 1 times,
        # jitted JAX calls run compiled code and count 0
        assert row["evals_prepared"] >= 0 and row["evals_native"] >= 0
        if row["framework"] == "finitediff":
            assert row["evals_prepared"] == 20
        if row["framework"] in ("torch", "autograd"):
            assert row["evals_prepared"] == 1


def test_markdown_table_has_a_row_per_case(results):
    text = (results["out"] / "results.md").read_text()
    assert "## Ratios" in text and "## Zero-backend overhead" in text
    for row in results["rows"]:
        if row["status"] == "ok":
            assert f"| {row['backend']} | gradient | sumsq | 10 |" in text


def test_an_in_process_run_leaves_global_settings_as_they_were(settings_before, results):
    import jax
    import torch

    assert (jax.config.jax_enable_x64, torch.get_num_threads()) == settings_before


def test_zero_backend_overhead_is_measured(results):
    overhead = results["overhead"]
    assert overhead and all("error" not in o for o in overhead), overhead
    for o in overhead:
        assert o["call_s"] > 0 and o["bare_s"] > 0


def test_a_backend_that_fails_to_import_is_a_line_not_a_crash(monkeypatch, tmp_path):
    import diffinterface.core as core

    real = core.get_adapter

    def failing(backend):
        if isinstance(backend, di.AutoAutograd):
            raise di.MissingBackendError("AutoAutograd needs autograd (simulated)")
        return real(backend)

    monkeypatch.setattr(core, "get_adapter", failing)
    results = harness.run(
        "tiny",
        out=tmp_path,
        backends=("autograd", "finitediff-central"),
        plot=False,
        log=io.StringIO(),
        overhead=False,
    )
    assert results["imports"]["autograd"].startswith("MissingBackendError")
    assert [r["status"] for r in results["rows"] if r["backend"] == "autograd"] == ["unavailable"]
    assert any(r["status"] == "ok" for r in results["rows"] if r["backend"] == "finitediff-central")
    assert "adapter failed to import" in (tmp_path / "results.md").read_text()


@pytest.mark.parametrize("method", ["central", "forward"])
@pytest.mark.parametrize("x", [1.0, [0.5, 2.0]], ids=["float x", "array x"])
def test_finite_difference_recipes_evaluate_f_on_what_the_interface_evaluates_it_on(method, x):
    """A fair row: the hand-written loop and AutoFiniteDiff call f on the same kinds of point.

    f costs about twice as much on a NumPy scalar as on a Python float, so a
    recipe stepping a float x by a NumPy scalar would time a slower f.
    """
    from benchmarks import native

    x = x if isinstance(x, float) else np.asarray(x)
    seen = []

    def f(z):
        seen.append(type(z))
        return z * z

    operator = "derivative" if isinstance(x, float) else "jacobian"
    framework = "finitediff" if method == "central" else "finitediff-forward"
    recipe = native.recipes(framework, operator)[0].build(f, x)
    backend = di.AutoFiniteDiff(method=method)
    prep = getattr(di, "prepare_" + operator)(f, backend, x)
    seen.clear()
    recipe(x)
    native_kinds = set(seen)
    seen.clear()
    getattr(di, operator)(f, backend, x, prep=prep)
    assert set(seen) == native_kinds == {type(x)}


def test_the_rows_of_issue_38_run_and_check_their_results():
    """``python -m benchmarks.bench_overhead --quick``: every row prints a finite positive ratio and a bound.

    The sparse and bridge groups compare their results with asdex's and the reference's before timing
    (an assertion inside the script), so a wrong result fails here; speed is never asserted.
    """
    import re
    import subprocess

    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_overhead", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    rows = dict(
        re.findall(r"^(\S.*?)\s+[\d.]+ us  vs .* ratio ([\d.]+) ", run.stdout, flags=re.MULTILINE)
    )
    bounded = (
        "gradient stored",
        "gradient inline",
        "gradient inline keyword",
        "jacobian forward",
        "jacobian reverse",
        "sparse hessian vs asdex",
        "bridge",
        "hvp SecondOrder(FD, JAX)",
    )
    assert set(bounded) <= set(rows), run.stdout
    assert all(float(ratio) > 0 for ratio in rows.values()), run.stdout


@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_per_sample_rows_check_their_results(framework):
    """``benchmarks.bench_per_sample``: vmap over a prepared gradient agrees with vmap over the native
    grad (an assertion inside ``measure``) and gives a finite positive ratio; speed is never asserted."""
    from benchmarks import bench_per_sample

    ours, native, ratio, (low, high) = bench_per_sample.measure(framework, (4, 3, 5), rounds=3)
    assert ours > 0 and native > 0 and math.isfinite(ratio) and 0 < low <= high


def test_the_size_sweep_runs_and_writes_its_table_and_plot(tmp_path):
    """``python -m benchmarks.bench_sizes`` at one small size: every row has a finite positive ratio
    (each row compares the prepared result with the native recipe's before timing it, an assertion in
    the script: a wrong derivative becomes an error row, which fails here); speed is never asserted."""
    import json
    import subprocess

    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_sizes",
            "--frameworks",
            "torch,autograd",
            "--sizes",
            "10",
            "--rounds",
            "3",
            "--sample",
            "0.0005",
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    rows = json.loads((tmp_path / "sizes.json").read_text())["rows"]
    # torch: the jacobian in three modes and the hessian; autograd: both in its one mode
    assert len(rows) == 6, rows
    for row in rows:
        assert "error" not in row, row
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0, row
    table = (tmp_path / "sizes.md").read_text()
    assert "| torch | jacobian | forward | 10 |" in table
    assert (tmp_path / "sizes.png").stat().st_size > 0
