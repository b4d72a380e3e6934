"""Dense Jacobians at scale: ``tanh(A @ sin(x))`` with A 1500 x 2000, every framework and mode.

    python -m benchmarks.bench_dense_jacobians            # writes results/dense_jacobians.md
    python -m benchmarks.bench_dense_jacobians --rounds 3 --out /tmp/dense

The rectangle of the performance issue of this wave: 2000 inputs, 1500
outputs, float64 (and float32 on JAX), the prepared Jacobian of each
selector mode (``AutoTorch()``, ``AutoTorch(mode="forward")``...) against the
fastest native recipe of that mode (the default mode against all), as in
:mod:`benchmarks.bench_sizes`, whose rows and recipes this reuses: the
recipe picked from a few calls each, then both run alternately, the ratio the
median of the per-round ratios. autograd is left out: ``autograd.jacobian``
runs one backward pass per output row in Python, seconds per call at this
size on both sides.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .bench_sizes import BOUND, FRAMEWORKS, MODES, measure
from .report import fmt_time, run_header

RESULTS = Path(__file__).resolve().parent / "results"
ROWS, COLUMNS = 1500, 2000
#: (framework, dtype): float32 on JAX as well, the issue's JAX row
CASES = (("torch", "float64"), ("jax", "float64"), ("jax", "float32"), ("tensorflow", "float64"))


def markdown(rows, header):
    lines = [
        f"# Dense Jacobians, A {ROWS} x {COLUMNS}",
        "",
        header,
        "",
        f"`y = tanh(A @ sin(x))`, x of length {COLUMNS}, y of length {ROWS}; ratio: median over "
        "interleaved rounds of diffinterface / the fastest native recipe of that mode (bound "
        f"{BOUND}; **bold** above it).",
        "",
        "| framework | dtype | mode | di | native | native recipe | ratio | rounds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mode = r["mode"] or "default"
        if "error" in r:
            lines.append(
                f"| {r['framework']} | {r['dtype']} | {mode} | error: {r['error']} | | | | |"
            )
            continue
        ratio = f"{r['ratio']:.2f}"
        lines.append(
            f"| {r['framework']} | {r['dtype']} | {mode} | {fmt_time(r['di_s'])} "
            f"| {fmt_time(r['native_s'])} | {r['native']} "
            f"| {f'**{ratio}**' if r['ratio'] > BOUND else ratio} | {r['rounds']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sample", type=float, default=0.005)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    rows = []
    for name, dtype in CASES:
        framework = FRAMEWORKS[name]()
        for mode in MODES:
            try:
                row = measure(
                    framework,
                    "jacobian",
                    mode,
                    framework.selector(mode=mode),
                    COLUMNS,
                    args.rounds,
                    args.sample,
                    m=ROWS,
                    dtype=dtype,
                )
            except Exception as error:  # noqa: BLE001 - one failing row is reported, not fatal
                row = {"framework": name, "dtype": dtype, "mode": mode}
                row["error"] = f"{type(error).__name__}: {error}"[:200]
            rows.append(row)
            print(row, flush=True)
    header = run_header(f"python -m benchmarks.bench_dense_jacobians --rounds {args.rounds}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "dense_jacobians.md").write_text(markdown(rows, header))
    print(f"wrote {out / 'dense_jacobians.md'}")


if __name__ == "__main__":
    main()
