"""``python -m benchmarks.bench_fd_in_jit``: an AutoFiniteDiff gradient inside ``jax.jit`` beside the
prepared one on the host (numpy x), n = 10 and n = 100.

The two recipes are timed interleaved in one process (rounds of repeated calls, medians); the row
also gives the largest relative difference between their results, which is ``f``'s own rounding
(XLA's against numpy's) amplified by the difference quotient's ``1 / h``. Results go to
``benchmarks/results/fd_in_jit.md`` by hand: figures live there, not here.
"""

from __future__ import annotations

import time

import numpy as np


def energy(z):
    import diffinterface as di

    xp = di.array_namespace(z)
    return xp.sum(xp.sin(z) ** 2) * xp.sum(z * z)


def _median_seconds(calls, rounds=15, repeats=20):
    """Median seconds per call of each of ``calls``, timed in interleaved rounds."""
    times = [[] for _ in calls]
    for _ in range(rounds):
        for call, samples in zip(calls, times):
            start = time.perf_counter()
            for _ in range(repeats):
                call()
            samples.append((time.perf_counter() - start) / repeats)
    return [float(np.median(samples)) for samples in times]


def row(n):
    """``(n, host seconds, inside-jit seconds, largest relative difference)``."""
    import jax
    import jax.numpy as jnp

    import diffinterface as di

    backend = di.AutoFiniteDiff()
    x = np.random.default_rng(0).normal(size=n)
    with jax.enable_x64(True):
        z = jnp.asarray(x)
        prep = di.prepare_gradient(energy, backend, x)
        jitted = jax.jit(lambda w: di.gradient(energy, backend, w))
        inside = jitted(z).block_until_ready()
        host = di.gradient(energy, backend, x, prep=prep)
        seconds = _median_seconds(
            (
                lambda: di.gradient(energy, backend, x, prep=prep),
                lambda: jitted(z).block_until_ready(),
            )
        )
    difference = float(np.max(np.abs(np.asarray(inside) - host)) / np.max(np.abs(host)))
    return n, seconds[0], seconds[1], difference


def main():
    print(
        "| n | host, prepared (µs) | inside jax.jit (µs) | jit / host | largest relative difference |"
    )
    print("|---|---|---|---|---|")
    for n in (10, 100):
        n, host, inside, difference = row(n)
        print(
            f"| {n} | {host * 1e6:.0f} | {inside * 1e6:.0f} | {inside / host:.2f} | {difference:.1e} |"
        )


if __name__ == "__main__":
    main()
