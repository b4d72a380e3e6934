"""DifferentiateWith inside ``jax.jit``: which inner operators each compiled call runs, and how many times.

The kit's probe ``differentiate_with_inside_jax_jit`` checks the results on
every backend; these tests count the inner rules a torch inner is asked for,
which results alone cannot show: a scalar ``f`` on a reverse-mode inner costs
one value-and-gradient per compiled gradient (with or without the value), a
compiled value never asks for a derivative, and a vector ``f`` pays a value and
a pullback (its cotangent may depend on the value). A program over several devices keeps ``jax.pure_callback``'s
lowering, whose sharding annotation runs the callback once.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import diffinterface as di
from tests.host_devices import run_on_host_devices
from diffinterface.testing.analytic_functions import sin_weighted as vector
from diffinterface.testing.analytic_functions import sin_weighted_sum as scalar
from diffinterface.testing.analytic_functions import sin_weighted_sum_gradient as gradient_of_scalar

import jax

jnp = jax.numpy

X = np.linspace(-1.0, 1.5, 5)
RULES = ("value", "value_and_gradient", "pushforward", "pullback", "hvp")


@pytest.fixture
def asked(monkeypatch):
    """How many times each inner rule was asked for, counted on every rules object built from now on."""
    from diffinterface.wrappers.differentiate_with._rules import OperatorRules

    counts: collections.Counter = collections.Counter()
    for name in RULES:
        original = getattr(OperatorRules, name)

        def counted(self, *args, _original=original, _name=name):
            counts[_name] += 1
            return _original(self, *args)

        monkeypatch.setattr(OperatorRules, name, counted)
    return counts


def _asked_by_second_call(counts, fn, x):
    fn(x).block_until_ready()  # compiles, prepares the inner operators
    counts.clear()
    out = fn(x)
    out.block_until_ready()
    return dict(counts), out


def test_compiled_gradient_of_a_scalar_costs_one_value_and_gradient(asked):
    g = di.DifferentiateWith(scalar, di.AutoTorch())
    with jax.enable_x64(True):
        x = jnp.asarray(X)
        counts, got = _asked_by_second_call(asked, jax.jit(jax.grad(lambda x: 3.0 * g(x))), x)
    assert counts == {"value_and_gradient": 1}
    np.testing.assert_allclose(np.asarray(got), 3 * gradient_of_scalar(X), rtol=1e-12)


def test_compiled_value_and_gradient_takes_the_value_from_the_same_call(asked):
    g = di.DifferentiateWith(scalar, di.AutoTorch())
    with jax.enable_x64(True):
        x = jnp.asarray(X)
        both = jax.jit(jax.value_and_grad(lambda x: 3.0 * g(x)))
        counts, _ = _asked_by_second_call(asked, lambda x: both(x)[1], x)
        value, gradient = both(x)
    assert counts == {"value_and_gradient": 1}
    np.testing.assert_allclose(float(value), 3 * np.sum(np.sin(X) * X**2), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gradient), 3 * gradient_of_scalar(X), rtol=1e-12)


def test_compiled_value_asks_for_no_derivative(asked):
    g = di.DifferentiateWith(scalar, di.AutoTorch())
    with jax.enable_x64(True):
        counts, got = _asked_by_second_call(asked, jax.jit(g), jnp.asarray(X))
    assert counts == {"value": 1}
    np.testing.assert_allclose(float(got), np.sum(np.sin(X) * X**2), rtol=1e-12)


def test_compiled_gradient_through_a_vector_output_pays_a_pullback(asked):
    g = di.DifferentiateWith(vector, di.AutoTorch())
    with jax.enable_x64(True):
        loss = jax.jit(jax.grad(lambda x: jnp.sum(jnp.cos(g(x)))))
        counts, got = _asked_by_second_call(asked, loss, jnp.asarray(X))
    u = np.sin(X) * X**2
    assert counts == {"value": 1, "pullback": 1}  # the cotangent, -sin(u), needs the value first
    np.testing.assert_allclose(np.asarray(got), -np.sin(u) * gradient_of_scalar(X), rtol=1e-12)


def test_a_forward_mode_inner_keeps_the_pullback_route(asked):
    g = di.DifferentiateWith(scalar, di.AutoTorch(mode="forward"))
    with jax.enable_x64(True):
        counts, got = _asked_by_second_call(asked, jax.jit(jax.grad(g)), jnp.asarray(X))
    assert (
        "value_and_gradient" not in counts
        and counts.get("pushforward", 0) + counts.get("pullback", 0) >= 1
    )
    np.testing.assert_allclose(np.asarray(got), gradient_of_scalar(X), rtol=1e-10)


SHARDED = r"""
import json
import numpy as np, jax, jax.numpy as jnp, torch, diffinterface as di
from jax.sharding import Mesh, NamedSharding, PartitionSpec
X = np.linspace(-1.0, 1.5, 8)
g = di.DifferentiateWith(lambda x: torch.sum(torch.sin(x) * x**2), di.AutoTorch())
# x64 for the whole process: the callbacks of a program over several devices run on XLA's device threads,
# which a thread-local jax.enable_x64 does not reach
jax.config.update("jax_enable_x64", True)
x = jax.device_put(jnp.asarray(X), NamedSharding(Mesh(np.array(jax.devices()), ("d",)), PartitionSpec("d")))
gradient = np.asarray(jax.jit(jax.grad(lambda x: 2.0 * g(x)))(x))
value = float(jax.jit(g)(x))
print(json.dumps([len(jax.devices()),
                  float(np.max(np.abs(gradient - 2 * (np.cos(X) * X**2 + 2 * X * np.sin(X))))),
                  float(abs(value - np.sum(np.sin(X) * X**2)))]))
"""


def test_a_program_over_two_devices_runs_the_bridge_once_with_the_right_gradient():
    devices, gradient_error, value_error = run_on_host_devices(SHARDED, 2)
    assert int(devices) == 2
    assert float(gradient_error) <= 1e-12 and float(value_error) <= 1e-12
