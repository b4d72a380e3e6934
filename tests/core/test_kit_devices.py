"""The kit's ``device=``: inputs placed on a device, every result checked to come back on it.

A GPU is the reason for it (``--di-devices=torch=cuda,jax=gpu``); here JAX's 4
simulated host devices stand in (``XLA_FLAGS`` must be set before JAX starts,
so those checks run in a subprocess): x on ``cpu:3`` must give results on
``cpu:3``, not on JAX's default device ``cpu:0``.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from tests.matrix import SECONDARY
from tests.host_devices import run_on_host_devices
from diffinterface.testing import Case, default_scenarios, test_differentiation
from diffinterface.testing.families import convert

import jax  # noqa: F401 - a missing framework fails

# Runs in a fresh process with 4 host devices; prints one JSON object of what the tests assert.
CHECK = r"""
import json
import jax
import diffinterface as di
from diffinterface.testing import Case, CaseResult, default_scenarios, second_order_scenarios, test_differentiation
from diffinterface.testing.stages import CaseRun

scenarios = default_scenarios(["jacobian", "pullback"]) + second_order_scenarios(["hvp"])
backends = {"jax": di.AutoJAX(), "jax-forward": di.AutoJAX(mode="forward"),
            "finitediff-over-jax": di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX())}
report = test_differentiation(backends, scenarios, device={"jax": "cpu:3"}, raise_on_failure=False)
ran = [r for r in report.results if r.status != "excluded"]

# a result on the default device where x was on cpu:3 is a problem, named
scenario = default_scenarios(["gradient"])[0]
case = Case("jax", di.AutoJAX(), scenario, "jax", device="cpu:3")
run = CaseRun(case, CaseResult("jax", scenario.name, "gradient", "jax", "running"))
run.compare("call", "gradient", jax.device_put(run.s.first, jax.devices()[0]), scenario.first)
print(json.dumps({"devices": len(jax.devices()), "ran": len(ran), "families": sorted({r.family for r in ran}),
                  "failed": [r.message()[:2000] for r in report.results if r.status == "failed"],
                  "placed_on": run.placed_on, "wrong device": run.result.problems}))
"""


@pytest.fixture(scope="module")
def report():
    return run_on_host_devices(CHECK, 4)


@SECONDARY
def test_every_case_on_the_fourth_device_passes_with_its_results_there(report):
    assert report["devices"] == 4
    assert report["families"] == ["jax"]  # the dict names the families tried
    assert report["ran"] > 20
    assert report["failed"] == []


def test_a_result_on_another_device_than_x_is_a_problem_naming_both(report):
    assert report["placed_on"] == "cpu:3"
    [problem] = report["wrong device"]
    assert "expected a result on x's device cpu:3; got one on cpu:0" in problem


def test_a_device_numpy_arrays_cannot_live_on_is_refused_naming_the_argument():
    with pytest.raises(
        ValueError, match=r"device: numpy arrays live on the CPU only .* got 'cuda'"
    ):
        convert(np.ones(2), "numpy", "cuda")


def test_a_device_jax_does_not_have_is_refused_naming_the_argument():
    with pytest.raises(
        ValueError, match=r"device: expected a JAX platform and an index JAX has.*got 'cpu:99'"
    ):
        convert(np.ones(2), "jax", "cpu:99")


def test_torch_inputs_placed_on_the_cpu_by_name_pass_and_stay_there():
    import torch  # noqa: F401 - a missing framework fails

    report = test_differentiation(
        {"torch": di.AutoTorch()},
        default_scenarios(["gradient"]),
        device={"torch": "cpu"},
        raise_on_failure=False,
    )
    assert report.ok and {r.family for r in report.results} == {"torch"}
    case = Case("torch", di.AutoTorch(), default_scenarios(["gradient"])[0], "torch", device="cpu")
    assert case.run().status == "passed"
