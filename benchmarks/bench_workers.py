"""``AutoFiniteDiff(workers=...)`` against serial evaluation, for an expensive f: 50 ms per call, 12 parameters.

    python -m benchmarks.bench_workers              # every kind of workers, 5 rounds each
    python -m benchmarks.bench_workers threads 3    # one kind, 3 rounds

``f`` sleeps 50 ms (a simulation's cost, which leaves the CPU free: the
figures hold on a machine of few cores) and returns a smooth function of its
12 parameters. A central-difference gradient evaluates it 24 times, a
Jacobian of its 3 outputs 24 times. Each kind of workers is timed in rounds,
each round one prepared call with the workers and one serial prepared call
(interleaved: the machine's load changes both alike); the speed-up is the
median over rounds of serial time / time with workers. Pools and clusters
are started before the rounds (a process pool at preparation), so their
start-up is not timed. Every result is checked equal to the serial one, bit
for bit. The issue's targets (#31): at least 5x with 8 threads or a map-like
callable, 4x with ``workers=8`` processes, 3x on a Dask LocalCluster of 4
processes x 2 threads.
"""

from __future__ import annotations

import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import diffinterface as di

SECONDS_PER_CALL = 0.05
N = 12
ROUNDS = 5


def simulation(x):
    """An expensive scalar model: 50 ms, then a smooth function of the 12 parameters."""
    time.sleep(SECONDS_PER_CALL)
    return float(np.sum(np.sin(x) * np.arange(1, x.size + 1)) + np.prod(np.cos(x / 4)))


def simulation_outputs(x):
    """The same model with three outputs (for a Jacobian)."""
    time.sleep(SECONDS_PER_CALL)
    return np.array([np.sum(np.sin(x)), np.sum(x**2) / 10, np.prod(np.cos(x / 4))])


def _time(call):
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def measure(workers, operator="gradient", rounds=ROUNDS):
    """``(serial s, with workers s, median speed-up)`` of one prepared ``operator`` call; checks bit-for-bit equality."""
    f = simulation if operator == "gradient" else simulation_outputs
    x = np.linspace(0.1, 1.2, N)
    serial, parallel = di.AutoFiniteDiff(), di.AutoFiniteDiff(workers=workers)
    prepare, run = getattr(di, "prepare_" + operator), getattr(di, operator)
    serial_prep, parallel_prep = prepare(f, serial, x), prepare(f, parallel, x)
    times = {"serial": [], "workers": []}
    for _ in range(rounds):
        t_serial, expected = _time(lambda: run(f, serial, x, prep=serial_prep))
        t_workers, got = _time(lambda: run(f, parallel, x, prep=parallel_prep))
        if not np.array_equal(expected, got):
            raise AssertionError(f"{operator} with workers={workers!r} differs from the serial one")
        times["serial"].append(t_serial)
        times["workers"].append(t_workers)
    speedup = statistics.median(s / w for s, w in zip(times["serial"], times["workers"]))
    return statistics.median(times["serial"]), statistics.median(times["workers"]), speedup


def _threads(rounds):
    with ThreadPoolExecutor(8) as pool:
        yield "8-thread ThreadPoolExecutor", "gradient", measure(pool, "gradient", rounds)


def _map(rounds):
    with ThreadPoolExecutor(8) as pool:
        yield (
            "map-like callable (ThreadPoolExecutor(8).map)",
            "gradient",
            measure(pool.map, "gradient", rounds),
        )


def _processes(rounds):
    yield (
        "workers=8 (a process pool, started at preparation)",
        "gradient",
        measure(8, "gradient", rounds),
    )
    di.close_workers()


def _dask(rounds):
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=4, threads_per_worker=2, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        for operator in ("gradient", "jacobian"):
            yield (
                "Dask LocalCluster, 4 processes x 2 threads",
                operator,
                measure(client, operator, rounds),
            )


KINDS = {"threads": _threads, "map": _map, "processes": _processes, "dask": _dask}


def main(argv):
    kinds = [a for a in argv if a in KINDS] or list(KINDS)
    rounds = next((int(a) for a in argv if a.isdigit()), ROUNDS)
    lines = [
        f"f sleeps {SECONDS_PER_CALL * 1000:.0f} ms per call, {N} parameters, central differences (24 evaluations); "
        f"median of {rounds} interleaved rounds",
        "",
        "| workers | operator | serial (s) | with workers (s) | speed-up |",
        "|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for kind in kinds:
        for label, operator, (serial, parallel, speedup) in KINDS[kind](rounds):
            line = f"| {label} | {operator} | {serial:.3f} | {parallel:.3f} | {speedup:.1f}x |"
            print(line, flush=True)
            lines.append(line)
    if set(kinds) == set(KINDS):
        out = Path(__file__).parent / "results" / "workers.md"
        out.write_text("\n".join(lines) + "\n")
        print(f"written to {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
