"""Timing shared by the benchmarks: samples with the collector paused, loops per sample, interleaved rounds."""

from __future__ import annotations

import gc
import math
import os
import sys
import time

from .workloads import EVALUATIONS

#: The clock of the measurements: wall time by default. ``--clock cpu`` uses the process's CPU time
#: (all its threads) instead, which does not count the time other processes hold a busy machine's
#: cores, but which Linux accounts coarsely for work done on other threads (JAX computes on XLA's).
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = [CLOCKS["wall"]]


#: glibc's malloc thresholds fixed (see ``benchmarks/__main__.py``): a call's megabytes come from reused
#: heap memory whatever ran before it
MALLOC_SETTINGS = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}


def with_fixed_malloc(module):
    """Re-execute ``python -m module`` (same arguments) once with :data:`MALLOC_SETTINGS`, on Linux, unless set."""
    if sys.platform.startswith("linux") and not all(name in os.environ for name in MALLOC_SETTINGS):
        os.execve(
            sys.executable,
            [sys.executable, "-m", module, *sys.argv[1:]],
            {**MALLOC_SETTINGS, **os.environ},
        )


def use_clock(name):
    """Measure with the clock ``name`` ("wall" or "cpu") from now on."""
    _clock[0] = CLOCKS[name]


def sample(call, loops):
    """Seconds per call over ``loops`` calls, the garbage collector paused (as ``timeit`` does)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = _clock[0]()
        for _ in range(loops):
            call()
        return (_clock[0]() - start) / loops
    finally:
        if enabled:
            gc.enable()


def loops_for(call, settings):
    """``(loops, once, evaluations)``: how many calls make one sample of at least ``settings.sample_s``.

    One call decides, timed; it also counts the evaluations of f that one call makes.
    """
    before = EVALUATIONS[0]
    once = sample(call, 1)
    evaluations = EVALUATIONS[0] - before
    return max(1, min(100_000, math.ceil(settings.sample_s / max(once, 1e-9)))), once, evaluations


def interleaved(calls, rounds):
    """Medians-ready samples of each ``(call, loops)``, the order rotating every round."""
    times = [[] for _ in calls]
    order = list(range(len(calls)))
    for r in range(rounds):
        for i in order if r % 2 == 0 else reversed(order):
            call, loops = calls[i]
            times[i].append(sample(call, loops))
    return times


def rounds_within(budget_s, per_round_s, settings, most):
    return int(max(settings.min_rounds, min(most, budget_s // max(per_round_s, 1e-9))))
