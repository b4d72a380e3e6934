"""Per-sample gradients: the framework's vmap over a prepared ``di.gradient`` against vmap over its own grad.

    python -m benchmarks.bench_per_sample             # torch and JAX; prints the table
    python -m benchmarks.bench_per_sample --write     # also writes results/per_sample.md

The most common use of ``torch.func``: the gradient of a model's loss for each
sample of a batch, ``torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))``.
The interface side is the same vmap over ``di.gradient(loss, di.AutoTorch(),
params, di.Constant(sample), di.Constant(target), prep=prep)``, the gradient
prepared once at one sample (``backends/torch/nesting.py`` runs it as
torch.func's own ``grad`` under the transform). JAX: ``jax.jit(jax.vmap(...))``
of the prepared ``di.gradient`` against ``jax.jit(jax.vmap(jax.grad(loss)))``.
The model is a two-layer perceptron (``d -> h -> 1``, tanh) with a squared
error, float64; the parameters are a dict (a pytree x). Both are called
alternately within each round; the ratio is the median over rounds of
interface / native, wall time. The target of issue #47 is at most 1.10.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

import numpy as np

import diffinterface as di

from . import timing

SIZES = ((32, 10, 16), (256, 100, 64))  # (batch, features, hidden)
ROUNDS = 21
_RESULTS = Path(__file__).parent / "results" / "per_sample.md"


def _data(batch, features, hidden):
    rng = np.random.default_rng(0)
    params = {
        "w1": rng.normal(size=(features, hidden)) / np.sqrt(features),
        "b1": np.zeros(hidden),
        "w2": rng.normal(size=hidden) / np.sqrt(hidden),
    }
    return params, rng.normal(size=(batch, features)), rng.normal(size=batch)


def _torch(batch, features, hidden):
    import torch

    params, samples, targets = _data(batch, features, hidden)
    params = {k: torch.from_numpy(v) for k, v in params.items()}
    samples, targets = torch.from_numpy(samples), torch.from_numpy(targets)

    def loss(p, sample, target):
        return (torch.tanh(sample @ p["w1"] + p["b1"]) @ p["w2"] - target) ** 2

    backend = di.AutoTorch()
    prep = di.prepare_gradient(
        loss, backend, params, di.Constant(samples[0]), di.Constant(targets[0])
    )
    vmap = torch.func.vmap
    interface = vmap(
        lambda s, t: di.gradient(loss, backend, params, di.Constant(s), di.Constant(t), prep=prep)
    )
    native = vmap(torch.func.grad(loss), in_dims=(None, 0, 0))
    return (
        lambda: interface(samples, targets),
        lambda: native(params, samples, targets),
        lambda r: {k: v.numpy() for k, v in r.items()},
    )


def _jax(batch, features, hidden):
    import jax

    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    params, samples, targets = _data(batch, features, hidden)
    params = {k: jnp.asarray(v) for k, v in params.items()}
    samples, targets = jnp.asarray(samples), jnp.asarray(targets)

    def loss(p, sample, target):
        return (jnp.tanh(sample @ p["w1"] + p["b1"]) @ p["w2"] - target) ** 2

    backend = di.AutoJAX()
    prep = di.prepare_gradient(
        loss, backend, params, di.Constant(samples[0]), di.Constant(targets[0])
    )
    interface = jax.jit(
        jax.vmap(
            lambda s, t: di.gradient(
                loss, backend, params, di.Constant(s), di.Constant(t), prep=prep
            )
        )
    )
    native = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    return (
        lambda: jax.block_until_ready(interface(samples, targets)),
        lambda: jax.block_until_ready(native(params, samples, targets)),
        lambda r: {k: np.asarray(v) for k, v in r.items()},
    )


FRAMEWORKS = {"torch": _torch, "jax": _jax}


def measure(framework, size, rounds=ROUNDS):
    """``(interface s, native s, median ratio, (first, third) quartiles)``; checks both agree."""
    interface, native, as_numpy = FRAMEWORKS[framework](*size)
    got, expected = as_numpy(interface()), as_numpy(native())
    for name in expected:
        if not np.allclose(got[name], expected[name], rtol=1e-10, atol=1e-12):
            raise AssertionError(f"{framework}: per-sample gradients of {name} differ")
    loops = max(timing.loops_for(call, _Settings)[0] for call in (interface, native))
    times = timing.interleaved([(interface, loops), (native, loops)], rounds)
    ratios = [i / n for i, n in zip(*times)]
    quartiles = statistics.quantiles(ratios, n=4)
    return (
        statistics.median(times[0]),
        statistics.median(times[1]),
        statistics.median(ratios),
        (quartiles[0], quartiles[2]),
    )


class _Settings:
    sample_s = 0.02


def table(frameworks=tuple(FRAMEWORKS), sizes=SIZES, rounds=ROUNDS):
    """The markdown table of every (framework, size), one line each."""
    load = "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    lines = [
        f"Per-sample gradients, float64, median of {rounds} interleaved rounds, wall time ({load}).",
        "",
        "| framework | batch x features x hidden | interface (ms) | native (ms) "
        "| interface / native [IQR] |",
        "|---|---|---|---|---|",
    ]
    for framework in frameworks:
        for size in sizes:
            ours, native, ratio, (low, high) = measure(framework, size, rounds)
            lines.append(
                f"| {framework} | {' x '.join(map(str, size))} | {1e3 * ours:.3f} "
                f"| {1e3 * native:.3f} | {ratio:.2f} [{low:.2f}-{high:.2f}] |"
            )
    return "\n".join(lines)


def main(argv):
    frameworks = [a for a in argv if a in FRAMEWORKS] or list(FRAMEWORKS)
    text = table(frameworks)
    print(text)
    if "--write" in argv:
        _RESULTS.write_text(
            "# Per-sample gradients (`python -m benchmarks.bench_per_sample --write`)\n\n"
            + text
            + "\n"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
