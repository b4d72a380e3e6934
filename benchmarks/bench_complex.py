"""A prepared gradient at a complex x against the framework's own recipe, JAX and torch.

    python -m benchmarks.bench_complex              # JAX and torch, n = 10 and 1000
    python -m benchmarks.bench_complex torch 1000   # one framework, one size

diffinterface differentiates a complex x through its real view
(diffinterface/core/complex_convention.py): each prepared call turns x into
real and imaginary parts, and the gradient back into complex form. The
native recipes return the same numbers: JAX's ``jax.jit`` of
``conj(jax.grad(f))``, torch's ``backward()`` on a fresh leaf. Both are
called on the framework's own complex128 arrays, alternately within each
round; the ratio is the median over rounds of diffinterface / native, wall
time, each sample blocking on the result.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import diffinterface as di

from .report import fmt_time

ROUNDS = 41
LOOPS = 20


def loss(z):
    xp = di.array_namespace(z)
    return xp.sum(xp.real(z * z) + xp.abs(xp.sin(z)) ** 2)


def _jax(z):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)  # for the native recipe; diffinterface needs no flag
    x = jnp.asarray(z)
    native = jax.jit(lambda z: jnp.conj(jax.grad(loss)(z)))
    return di.AutoJAX(), x, native, jax.block_until_ready


def _torch(z):
    import torch

    torch.set_num_threads(1)
    x = torch.from_numpy(z)

    def native(x):
        leaf = x.detach().requires_grad_()
        loss(leaf).backward()
        return leaf.grad

    return di.AutoTorch(), x, native, lambda r: r


FRAMEWORKS = {"jax": _jax, "torch": _torch}


def measure(framework, n, rounds=ROUNDS):
    """``(native s, diffinterface s, median ratio)`` per gradient at a complex128 x of size ``n``; checks both agree."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    backend, x, native, block = FRAMEWORKS[framework](z)
    prep = di.prepare_gradient(loss, backend, x)
    if not np.allclose(
        np.asarray(native(x)), np.asarray(di.gradient(loss, backend, x, prep=prep)), rtol=1e-12
    ):
        raise AssertionError(
            f"{framework}: diffinterface's gradient differs from the native recipe's"
        )
    calls = {
        "native": lambda: block(native(x)),
        "diffinterface": lambda: block(di.gradient(loss, backend, x, prep=prep)),
    }
    times: dict = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(LOOPS):
                call()
            times[name].append((time.perf_counter() - start) / LOOPS)
    ratio = statistics.median(d / n for n, d in zip(times["native"], times["diffinterface"]))
    return statistics.median(times["native"]), statistics.median(times["diffinterface"]), ratio


def main(argv):
    frameworks = [a for a in argv if a in FRAMEWORKS] or list(FRAMEWORKS)
    sizes = [int(a) for a in argv if a.isdigit()] or [10, 1000]
    rows = [(framework, n, *measure(framework, n)) for framework in frameworks for n in sizes]
    print(
        f"gradient of sum(Re(z^2) + |sin z|^2) at complex128 z: native recipe vs prepared di.gradient "
        f"(median of {ROUNDS} rounds)\n| framework | n | native | diffinterface | diffinterface / native |\n"
        "|---|---|---|---|---|"
    )
    print(
        "\n".join(
            f"| {framework} | {n} | {fmt_time(native)} | {fmt_time(ours)} | {ratio:.2f} |"
            for framework, n, native, ours, ratio in rows
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
