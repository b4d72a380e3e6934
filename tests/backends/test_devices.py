"""``AutoJAX(devices=...)`` (issue #31): sweeps split across devices, on 8 simulated host devices in a subprocess
(``XLA_FLAGS=--xla_force_host_platform_device_count=8`` must be set before JAX starts)."""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from tests.host_devices import run_on_host_devices

import jax

# Runs in a fresh process with 8 host devices; prints one JSON object of what the test asserts.
CHECK = r"""
import json
import numpy as np, jax, jax.numpy as jnp, diffinterface as di

devices = jax.devices()
def f(x):
    return jnp.sin(x) * jnp.sum(x ** 2) + jnp.cumsum(x)
def g(x):
    return jnp.sum(jnp.sin(x) * jnp.roll(x, 1)) ** 2

x = np.linspace(0.1, 1.0, 13)  # 13 seeds: not a multiple of 8 (padded)
report = {"devices": len(devices), "numpy": [], "jax": []}
for options in ({}, {"batch_size": 3}):
    for mode in (None, "forward", "reverse"):
        one, many = di.AutoJAX(mode=mode, **options), di.AutoJAX(mode=mode, devices=devices, **options)
        row = {"options": repr(options), "mode": mode}
        for name, fn in (("jacobian", f), ("hessian", g)):
            prep = getattr(di, "prepare_" + name)(fn, many, x)
            mine = getattr(di, name)(fn, many, x, prep=prep)
            row[name] = [type(mine).__name__, float(np.max(np.abs(mine - getattr(di, name)(fn, one, x))))]
        report["numpy"].append(row)
# 16 seeds: a JAX array is split evenly (13 would be padded, and the sliced result gathered)
xj = jnp.linspace(0.1, 1.0, 16, dtype=jnp.float32)
tangents = tuple(jnp.eye(16, dtype=jnp.float32)[:8])
mesh = jax.sharding.Mesh(np.array(devices).reshape(2, 4), ("a", "b"))
for label, backend, run in [
    ("jacobian", di.AutoJAX(devices=devices), lambda b: di.jacobian(f, b, xj, prep=di.prepare_jacobian(f, b, xj))),
    ("hessian", di.AutoJAX(devices=devices), lambda b: di.hessian(g, b, xj, prep=di.prepare_hessian(g, b, xj))),
    ("hessian on a 2x4 mesh", di.AutoJAX(devices=mesh), lambda b: di.hessian(g, b, xj)),
    ("pushforward", di.AutoJAX(devices=devices), lambda b: jnp.stack(di.pushforward(f, b, xj, tangents))),
    ("hvp", di.AutoJAX(devices=devices), lambda b: jnp.stack(di.hvp(g, b, xj, tangents))),
]:
    result = run(backend)
    plain = {"jacobian": lambda: jax.jacfwd(f)(xj), "pushforward": lambda: jax.vmap(lambda t: jax.jvp(f, (xj,), (t,))[1])(jnp.stack(tangents)),
             "hvp": lambda: jax.hessian(g)(xj)[:8]}.get(label.split(" ")[0], lambda: jax.hessian(g)(xj))()
    report["jax"].append({"label": label, "type": type(result).__name__, "devices": len(result.sharding.device_set),
                          "sharded": not result.sharding.is_fully_replicated,
                          "error": float(jnp.max(jnp.abs(result - plain)) / jnp.max(jnp.abs(plain)))})
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def report():
    return run_on_host_devices(CHECK, 8)


def test_the_subprocess_has_eight_host_devices(report):
    assert report["devices"] == 8


def test_jacobian_and_hessian_over_eight_devices_equal_one_devices_and_numpy_gives_numpy(report):
    assert len(report["numpy"]) == 6
    for row in report["numpy"]:
        for name in ("jacobian", "hessian"):
            kind, error = row[name]
            assert kind == "ndarray", row
            assert error <= 1e-12, row  # float64: the same products, split across devices


def test_jax_results_are_sharded_over_all_eight_devices(report):
    for row in report["jax"]:
        assert row["type"] == "ArrayImpl" and row["devices"] == 8, row
        assert row["error"] < 1e-5, row  # float32, against jax.jacfwd / jax.hessian on one device
    # a Jacobian or Hessian is split across them; batched products come as a tuple, one array per seed
    assert all(
        row["sharded"] for row in report["jax"] if row["label"].startswith(("jacobian", "hessian"))
    )


def test_devices_are_a_list_of_jax_devices_or_a_mesh_kept_hashable():
    devices = jax.devices()
    backend = di.AutoJAX(devices=list(devices))
    assert backend.devices == tuple(devices) and hash(backend) == hash(
        di.AutoJAX(devices=tuple(devices))
    )
    assert repr(di.AutoJAX()) == "AutoJAX(mode=None, jit=True)"
    mesh = jax.sharding.Mesh(np.array(devices), ("d",))
    assert di.AutoJAX(devices=mesh).devices is mesh
    x = np.linspace(0.1, 1, 5)
    f = lambda x: jax.numpy.sin(x) * x[0]
    np.testing.assert_allclose(
        di.jacobian(f, backend, x), di.jacobian(f, di.AutoJAX(), x), rtol=1e-14
    )


@pytest.mark.parametrize("value", [[], ["cpu:0"], "cpu", 8])
def test_devices_that_are_not_jax_devices_are_refused_naming_devices(value):
    with pytest.raises(
        TypeError, match=r"AutoJAX\(devices=...\) expected None.*jax.Device.*Mesh; got "
    ):
        di.AutoJAX(devices=value)
