"""Same-point hvp against the ordinary prepared hvp: chain energy (vectorized), n = 10^4, JAX and torch.

    python -m benchmarks.bench_same_point            # JAX and torch, batches of 1 and 10 tangents
    python -m benchmarks.bench_same_point torch 1    # one framework, one batch size
    python -m benchmarks.bench_same_point torch --clock cpu   # process time instead of wall time
    python -m benchmarks.bench_same_point jax --pin  # the process (and the threads it starts) on one core

A Krylov solver or Newton-CG applies the Hessian at one x to many vectors.
``prepare_hvp`` prepares for calls at any x of that shape, so each call runs
f's forward and backward passes again; ``prepare_hvp_same_point`` runs them
once and each call applies the linear map only (JAX: ``jax.linearize`` of the
gradient; torch: one backward pass through the gradient's kept graph). Both
are called on the framework's own arrays (x float64), alternately within each
round; the ratio is the median over rounds of same-point / ordinary, wall
time, each sample blocking on the result, with its interquartile range over
rounds. ``--clock cpu`` times with the process's CPU time
(``time.process_time``, all its threads) instead: on a machine shared with
other work, wall time also counts the time the process waits for a core,
which CPU time leaves out. The last column gives the median number of minor
page faults per call (ordinary / same point; Unix): freed memory the C
allocator gave back to the system and touches again (see
``results/same_point.md``). ``--pin`` keeps the process, and every thread the
frameworks start, on one core (Linux): XLA's CPU runtime hands each compiled
call, and the kernels inside it, to worker threads, and on a loaded machine a
hand-over to a thread on another core costs a wait of its own each time,
which swings JAX's ratio from run to run (``results/same_point.md``); pinned,
the ratio measures the computation. The header gives the load average. The
target of issue #32 is a ratio of at most 0.75 on JAX and torch.
Recorded runs: ``results/same_point.md``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

import diffinterface as di

from .workloads import chain_energy_vec

N = 10_000
ROUNDS = 31


def _jax(x, tangents):
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    return di.AutoJAX(), jnp.asarray(x), tuple(map(jnp.asarray, tangents)), jax.block_until_ready


def _torch(x, tangents):
    import torch

    torch.set_num_threads(1)
    return di.AutoTorch(), torch.from_numpy(x), tuple(map(torch.from_numpy, tangents)), lambda r: r


FRAMEWORKS = {"jax": _jax, "torch": _torch}


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _minor_faults():
    try:
        import resource
    except ImportError:  # not on Windows
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def measure(framework, batch, n=N, rounds=ROUNDS, clock=time.perf_counter):
    """``(ordinary s, same-point s, median ratio, (first, third) quartiles of the ratio, (ordinary, same-point)
    median minor page faults)`` for ``batch`` tangents per call, timed by ``clock``; checks both agree."""
    rng = np.random.default_rng(0)
    x = np.linspace(0.1, 1.0, n)
    tangents = tuple(rng.standard_normal(n) for _ in range(batch))
    backend, x, tangents, block = FRAMEWORKS[framework](x, tangents)
    f = chain_energy_vec
    ordinary = di.prepare_hvp(f, backend, x, tangents)
    same_point = di.prepare_hvp_same_point(f, backend, x, tangents)
    expected = di.hvp(f, backend, x, tangents, prep=ordinary)
    got = di.hvp(f, backend, x, tangents, prep=same_point)
    for e, g in zip(expected, got):
        if not np.allclose(np.asarray(e), np.asarray(g), rtol=1e-10, atol=1e-10):
            raise AssertionError(f"{framework}: the same-point hvp differs from the ordinary one")
    times: dict = {"ordinary": [], "same point": []}
    faults: dict = {"ordinary": [], "same point": []}
    for _ in range(rounds):
        for name, prep in (("ordinary", ordinary), ("same point", same_point)):
            faulted, start = _minor_faults(), clock()
            block(di.hvp(f, backend, x, tangents, prep=prep))
            times[name].append(clock() - start)
            faults[name].append(_minor_faults() - faulted)
    ratios = [s / o for o, s in zip(times["ordinary"], times["same point"])]
    quartiles = statistics.quantiles(ratios, n=4)
    return (
        statistics.median(times["ordinary"]),
        statistics.median(times["same point"]),
        statistics.median(ratios),
        (quartiles[0], quartiles[2]),
        (statistics.median(faults["ordinary"]), statistics.median(faults["same point"])),
    )


def _pin_to_one_core():
    """Keep this process, and the threads it starts from now on, on one core (Linux); the core's number."""
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return core


def main(argv):
    frameworks = [a for a in argv if a in FRAMEWORKS] or list(FRAMEWORKS)
    batches = [int(a) for a in argv if a.isdigit()] or [1, 10]
    clock = argv[argv.index("--clock") + 1] if "--clock" in argv else "wall"
    pinned = (
        f", pinned to core {_pin_to_one_core()}" if "--pin" in argv else ""
    )  # before any framework starts threads
    load = (
        ", load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
        if hasattr(os, "getloadavg")
        else ""
    )
    print(
        f"hvp of the chain energy, n = {N}: prepare_hvp vs prepare_hvp_same_point (median of {ROUNDS} rounds, "
        f"{clock} time{pinned}{load})"
    )
    print(
        "| framework | tangents per call | ordinary (ms) | same point (ms) | same point / ordinary [IQR] "
        "| page faults per call |"
    )
    print("|---|---|---|---|---|---|")
    for framework in frameworks:
        for batch in batches:
            ordinary, same_point, ratio, (low, high), (faults, faults_same) = measure(
                framework, batch, clock=CLOCKS[clock]
            )
            print(
                f"| {framework} | {batch} | {1e3 * ordinary:.3f} | {1e3 * same_point:.3f} "
                f"| {ratio:.2f} [{low:.2f}-{high:.2f}] | {faults:.0f} / {faults_same:.0f} |"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
