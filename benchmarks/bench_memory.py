"""Peak memory and time of a Jacobian swept in batches: ``batch_size`` and ``memory_budget`` (issue #30).

    python -m benchmarks.bench_memory            # the issue's figures and the sweep over batch sizes
    python -m benchmarks.bench_memory --quick    # small sizes, a smoke run (not written)

The function is the issue's: ``f(x) = sum(tanh(x[:, None] * w[None, :]) ** 2, axis=1)``
(float64, x of size n, w of size m): its forward-mode Jacobian sweeps n
columns, and each column's tangent holds an n x m intermediate, so a sweep
of all n at once needs n * n * m * 8 bytes (16 GiB at n = 1024, m = 2048).

Each configuration runs in a fresh Python process (``--child``): it
prepares the Jacobian, calls it (JAX: twice, the second timed), and reports
its peak resident set size (``ru_maxrss``: the process's high-water mark,
XLA's and torch's allocators included) with the time of the call. torch's
processes run with ``MALLOC_MMAP_THRESHOLD_`` fixed (see
:data:`TORCH_MMAP_THRESHOLD`). The baseline is the
same process's peak after importing the framework and building x.

Written: ``benchmarks/results/memory.json`` and ``memory.md``; with
matplotlib, ``docs/scale_memory.png`` (peak memory and time against the
batch size).

The torch timing row of the issue (n = 512, a 256-wide intermediate,
batches of 64 against one batch of 512) is measured in one process,
interleaved, medians.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
MIB = 2**20
#: torch on CPU allocates with glibc's malloc, whose mmap threshold rises to the size of the last large
#: block freed: the batches' 16 MiB tangents then come from the heap, which fragments and grows by about
#: 8 MiB a seed whatever the batch (1.8 GiB for batches of 2). A fixed threshold (what
#: ``MALLOC_MMAP_THRESHOLD_`` sets) returns each freed tangent to the system, so the peak follows the batch.
TORCH_MMAP_THRESHOLD = 2**20


def _peak_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def _problem(framework, n, m):
    import numpy as np

    rng = np.random.default_rng(0)
    x, w = rng.normal(size=n), rng.normal(size=m) / 4
    if framework == "jax":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        wj = jnp.asarray(w)

        def f(x):
            return jnp.sum(jnp.tanh(x[:, None] * wj[None, :]) ** 2, axis=1)

        return f, jnp.asarray(x), (lambda a: a.block_until_ready())
    import torch

    torch.set_num_threads(1)
    wt = torch.as_tensor(w)

    def f(x):
        return torch.sum(torch.tanh(x[:, None] * wt[None, :]) ** 2, dim=1)

    return f, torch.as_tensor(x), (lambda a: a)


def _selector(framework, batch_size, budget):
    import diffinterface as di

    options = {"mode": "forward", "batch_size": batch_size, "memory_budget": budget}
    return di.AutoJAX(**options) if framework == "jax" else di.AutoTorch(**options)


def child(framework, n, m, batch_size, budget):
    """One configuration, in this (fresh) process: prints one JSON line."""
    import diffinterface as di

    f, x, wait = _problem(framework, n, m)
    baseline = _peak_bytes()
    backend = _selector(framework, batch_size, budget)
    start = time.perf_counter()
    prep = di.prepare_jacobian(f, backend, x)
    prepared_s = time.perf_counter() - start
    if framework == "jax":
        wait(
            di.jacobian(f, backend, x, prep=prep)
        )  # compiled at preparation; the first call warms up
    start = time.perf_counter()
    wait(di.jacobian(f, backend, x, prep=prep))
    call_s = time.perf_counter() - start
    print(
        json.dumps(
            {
                "framework": framework,
                "n": n,
                "m": m,
                "batch_size": batch_size,
                "memory_budget": budget,
                "chosen": di.batch_size(prep),
                "baseline_mib": baseline / MIB,
                "peak_mib": _peak_bytes() / MIB,
                "preparation_s": prepared_s,
                "call_s": call_s,
                "mmap_threshold": os.environ.get("MALLOC_MMAP_THRESHOLD_"),
            }
        )
    )


def run_fresh(framework, n, m, batch_size=None, budget=None):
    """:func:`child` in a fresh interpreter; its JSON row (or the error it died of)."""
    command = [
        sys.executable,
        "-m",
        "benchmarks.bench_memory",
        "--child",
        framework,
        str(n),
        str(m),
        str(batch_size),
        str(budget),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if framework == "torch":
        env["MALLOC_MMAP_THRESHOLD_"] = str(TORCH_MMAP_THRESHOLD)
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False, env=env
    )
    if done.returncode != 0:
        return {
            "framework": framework,
            "n": n,
            "m": m,
            "batch_size": batch_size,
            "memory_budget": budget,
            "error": done.stderr.strip().splitlines()[-1]
            if done.stderr.strip()
            else f"exit {done.returncode}",
        }
    return json.loads(done.stdout.strip().splitlines()[-1])


def torch_batches_cost(n=512, m=256, rounds=15):
    """Median seconds of the torch forward Jacobian with batches of 64 and with one batch of n, interleaved."""
    import diffinterface as di

    f, x, _ = _problem("torch", n, m)
    calls = {}
    for label, size in (("batches of 64", 64), (f"one batch of {n}", n)):
        backend = di.AutoTorch(mode="forward", batch_size=size)
        prep = di.prepare_jacobian(f, backend, x)
        calls[label] = lambda backend=backend, prep=prep: di.jacobian(f, backend, x, prep=prep)
        calls[label]()
    times = {label: [] for label in calls}
    for r in range(rounds):
        for label in list(calls) if r % 2 == 0 else list(reversed(calls)):
            start = time.perf_counter()
            calls[label]()
            times[label].append(time.perf_counter() - start)
    medians = {label: statistics.median(t) for label, t in times.items()}
    labels = list(medians)
    return {"n": n, "m": m, "medians_s": medians, "ratio": medians[labels[0]] / medians[labels[1]]}


def _table(rows, timing):
    lines = [
        "| framework | n | m | batch_size | memory_budget | chosen | peak RSS (MiB) | baseline (MiB) | call (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r['framework']} | {r['n']} | {r['m']} | {r['batch_size']} | {r['memory_budget']} | "
                f"failed: {r['error']} | | | |"
            )
            continue
        budget = "" if r["memory_budget"] is None else f"{r['memory_budget'] // MIB} MiB"
        lines.append(
            f"| {r['framework']} | {r['n']} | {r['m']} | {r['batch_size']} | {budget} | {r['chosen']} | "
            f"{r['peak_mib']:.0f} | {r['baseline_mib']:.0f} | {r['call_s']:.3f} |"
        )
    if timing:
        medians = ", ".join(f"{k}: {v * 1e3:.1f} ms" for k, v in timing["medians_s"].items())
        lines += [
            "",
            f"torch, n = {timing['n']}, m = {timing['m']}: {medians}; ratio {timing['ratio']:.2f}",
        ]
    return "\n".join(lines) + "\n"


def _plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (memory, seconds) = plt.subplots(1, 2, figsize=(9, 3.6))
    for framework in ("jax", "torch"):
        # every row of the framework, at the batch it ran with (the budget's choice included)
        by_size = {r["chosen"]: r for r in rows if r["framework"] == framework and "error" not in r}
        sweep = [by_size[size] for size in sorted(by_size)]
        if not sweep:
            continue
        sizes = [r["chosen"] for r in sweep]
        memory.plot(sizes, [r["peak_mib"] for r in sweep], "o-", label=framework)
        seconds.plot(sizes, [r["call_s"] for r in sweep], "o-", label=framework)
    n, m = next(((r["n"], r["m"]) for r in rows if r.get("sweep")), (0, 0))
    for axis, label in ((memory, "peak RSS (MiB)"), (seconds, "prepared call (s)")):
        axis.set_xscale("log", base=2)
        axis.set_xlabel("batch_size (seeds per vectorized pass)")
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
        axis.legend()
    fig.suptitle(
        f"forward-mode Jacobian of sum(tanh(x[:, None] * w) ** 2, axis=1), n = {n}, w of size {m}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", nargs=5, metavar=("FRAMEWORK", "N", "M", "BATCH", "BUDGET"))
    parser.add_argument(
        "--reuse", metavar="LOG", help="an earlier run's printed output: its rows are kept"
    )
    args = parser.parse_args(argv)
    if args.child:
        framework, n, m, batch, budget = args.child
        child(
            framework,
            int(n),
            int(m),
            None if batch == "None" else int(batch),
            None if budget == "None" else int(budget),
        )
        return
    n, m = (128, 256) if args.quick else (1024, 2048)
    # torch holds every intermediate's tangent for each seed of a batch (about 48 MiB a seed here):
    # its sweep stops at 32 seeds (1.6 GiB), JAX's fused sweep needs little memory whatever the batch
    sweeps = (
        {"jax": (4, 16, 64), "torch": (4, 16)}
        if args.quick
        else {"jax": (4, 8, 16, 32, 64), "torch": (16, 32)}
    )
    measured = {}
    if args.reuse:  # rows of an earlier run's printed output, not measured again
        for line in Path(args.reuse).read_text().splitlines():
            if line.startswith("{'framework'"):
                row = ast.literal_eval(line)
                row.pop("sweep", None)
                if row["framework"] == "torch" and row.get("mmap_threshold") is None:
                    continue  # measured with glibc's moving threshold: not comparable
                measured[(row["framework"], row["batch_size"], row["memory_budget"])] = row

    def measure(framework, batch, budget):
        row = measured.get((framework, batch, budget)) or run_fresh(framework, n, m, batch, budget)
        measured[(framework, batch, budget)] = row
        return dict(row)

    rows = []
    for framework in ("jax", "torch"):
        for batch, budget in ((32, None), (None, 256 * MIB)):
            rows.append(measure(framework, batch, budget))
            print(rows[-1], flush=True)
        for batch in sweeps[framework]:
            row = measure(framework, batch, None)
            row["sweep"] = True
            rows.append(row)
            print(row, flush=True)
    timing = torch_batches_cost(*((128, 64) if args.quick else (512, 256)))
    print(timing, flush=True)
    table = _table([r for r in rows if not r.get("sweep") or r["batch_size"] != 32], timing)
    print(table)
    if args.quick:
        return
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "memory.json").write_text(
        json.dumps({"rows": rows, "torch_batches": timing}, indent=1) + "\n"
    )
    (RESULTS / "memory.md").write_text(
        "# Peak memory of a Jacobian swept in batches\n\n"
        "`python -m benchmarks.bench_memory`; see its docstring.\n\n" + table
    )
    _plot(rows, ROOT / "docs" / "scale_memory.png")


if __name__ == "__main__":
    main()
