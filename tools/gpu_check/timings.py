"""Prepared calls on a GPU against the native call, interleaved in one process (medians of per-round ratios).

    python -m tools.gpu_check.timings

Prints one JSON line per row: the interface's and the native call's median
seconds and the median of their per-round ratios. Every call waits for its
result (``block_until_ready``, ``torch.cuda.synchronize``), so the figures are
what a caller that reads the result sees.
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np

import diffinterface as di


def _per_call(call, loops):
    start = time.perf_counter()
    for _ in range(loops):
        call()
    return (time.perf_counter() - start) / loops


def compare(label, mine, native, rounds=41, loops=None):
    """Interleaved rounds of ``loops`` calls each; the per-round ratio mine / native."""
    for call in (mine, native):
        call()
        call()
    if loops is None:
        loops = max(1, min(1000, int(0.02 / max(_per_call(native, 3), 1e-7))))
    ratios, mine_times, native_times = [], [], []
    for i in range(rounds):
        first, second = (mine, native) if i % 2 == 0 else (native, mine)
        a, b = _per_call(first, loops), _per_call(second, loops)
        m, n = (a, b) if first is mine else (b, a)
        ratios.append(m / n)
        mine_times.append(m)
        native_times.append(n)
    q = statistics.quantiles(ratios, n=4)
    row = {
        "row": label,
        "interface_s": statistics.median(mine_times),
        "native_s": statistics.median(native_times),
        "ratio": statistics.median(ratios),
        "iqr": [q[0], q[2]],
        "loops": loops,
    }
    print(json.dumps(row), flush=True)
    return row


def jax_rows():
    import jax
    import jax.numpy as jnp

    def energy(x):
        return jnp.sum(jnp.sin(x) ** 2) + jnp.sum(x[:-1] * x[1:])

    for n, dtype in ((10, jnp.float32), (10_000, jnp.float32), (1_000_000, jnp.float32)):
        x = jax.device_put(jnp.linspace(0.1, 1.0, n, dtype=dtype), jax.devices("gpu")[0])
        backend = di.AutoJAX()
        prep = di.prepare_gradient(energy, backend, x)
        native = jax.jit(jax.grad(energy))
        assert np.allclose(
            np.asarray(di.gradient(energy, backend, x, prep=prep)), np.asarray(native(x)), rtol=1e-5
        )
        compare(
            f"jax gradient n={n} {jnp.dtype(dtype).name}, stored backend",
            lambda: di.gradient(energy, backend, x, prep=prep).block_until_ready(),
            lambda: native(x).block_until_ready(),
        )
        compare(
            f"jax gradient n={n} {jnp.dtype(dtype).name}, inline di.AutoJAX()",
            lambda: di.gradient(energy, di.AutoJAX(), x, prep=prep).block_until_ready(),
            lambda: native(x).block_until_ready(),
        )
    x = jax.device_put(jnp.linspace(0.1, 1.0, 100, dtype=jnp.float32), jax.devices("gpu")[0])
    for mode, native in (
        ("forward", jax.jit(jax.jacfwd(jnp.square))),
        ("reverse", jax.jit(jax.jacrev(jnp.square))),
    ):
        backend = di.AutoJAX(mode=mode)
        prep = di.prepare_jacobian(jnp.square, backend, x)
        compare(
            f"jax jacobian of x**2 n=100, {mode}",
            lambda: di.jacobian(jnp.square, backend, x, prep=prep).block_until_ready(),
            lambda: native(x).block_until_ready(),
        )


def torch_rows():
    import torch

    def energy(x):
        return torch.sum(torch.sin(x) ** 2) + torch.sum(x[:-1] * x[1:])

    for n in (10, 10_000, 1_000_000):
        x = torch.linspace(0.1, 1.0, n, device="cuda")
        backend = di.AutoTorch()
        prep = di.prepare_gradient(energy, backend, x)

        def native():
            leaf = x.detach().requires_grad_(True)
            return torch.autograd.grad(energy(leaf), leaf)[0]

        def mine():
            g = di.gradient(energy, backend, x, prep=prep)
            torch.cuda.synchronize()
            return g

        def hand():
            g = native()
            torch.cuda.synchronize()
            return g

        assert mine().device == x.device and torch.allclose(mine(), hand(), rtol=1e-5)
        compare(f"torch gradient n={n} float32 vs torch.autograd.grad", mine, hand)


if __name__ == "__main__":
    jax_rows()
    torch_rows()
