"""How the cost grows with the work: prepared Jacobians and Hessians against the native recipes, n = 10 to 1500.

    python -m benchmarks.bench_sizes                          # every framework, sizes 10 100 500 1500
    python -m benchmarks.bench_sizes --frameworks torch --sizes 10,100 --rounds 5 --out /tmp/sizes

The workload is the map ``y = tanh(A @ sin(x))`` (its Jacobian) and the
scalar ``sum(tanh(A @ sin(x)))`` (its Hessian), A an n x n matrix drawn once,
x float64 in each framework's own array type, written once with
``di.array_namespace`` so that both sides run the same source. Each row is
one (framework, operator, selector mode, n): the prepared operator
(``AutoTorch()``, ``AutoTorch(mode="forward")``...) against the faster of the
framework's native recipes of that mode (a mode-pinned Jacobian against the
recipe of its mode, the default mode against all; Hessians in the default
mode only, see ``_selectors``):

- torch: ``torch.func.jacfwd``, ``jacrev``; ``torch.func.hessian``, ``jacrev(jacrev)``;
- JAX: ``jax.jit`` of ``jacfwd``, ``jacrev``; of ``hessian``, ``jacrev(grad)``;
- TensorFlow: a ``tf.function`` around ``tape.jacobian`` (reverse) or a
  ``ForwardAccumulator`` vectorized over the input basis (forward); around
  forward-over-reverse vectorized over the basis, or a tape's ``jacobian`` of
  a tape's gradient (Hessian);
- autograd: ``autograd.jacobian``, ``autograd.hessian`` (up to n = 500: both
  loop over the rows in Python).

The fastest native recipe is picked from a few calls each, then the prepared
operator and that recipe run alternately, ``--rounds`` rounds (the order
flipping every round), each sample timing enough calls to last
``--sample`` seconds; the ratio is the median of the per-round ratios
(diffinterface / native), so that load from other processes hits both alike.
Writes ``sizes.md`` (the table) and ``sizes.png`` (ratio against n, one panel
per framework) into ``--out`` (``benchmarks/results/``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

import diffinterface as di

from .report import fmt_time, run_header
from .timing import interleaved, sample

RESULTS = Path(__file__).resolve().parent / "results"
SIZES = (10, 100, 500, 1500)
MODES = (None, "forward", "reverse")
OPERATORS = ("jacobian", "hessian")

#: the bounds of issue #53: from n = 100 on, and for the short calls at n = 10
BOUND, SMALL_BOUND = 1.10, 1.15


def vector_map(A):
    def f(x):
        xp = di.array_namespace(x)
        return xp.tanh(xp.matmul(A, xp.sin(x)))

    return f


def scalar_map(A):
    def f(x):
        xp = di.array_namespace(x)
        return xp.sum(xp.tanh(xp.matmul(A, xp.sin(x))))

    return f


class Framework:
    """One framework's selector, arrays and native recipes: ``recipes[operator]`` lists
    ``(name, mode, build)``, ``build(f) -> derivative_at(x)``."""

    def __init__(self, name, selector, to_array, recipes, block=lambda r: r, largest=None):
        self.name, self.selector, self.to_array = name, selector, to_array
        self.recipes, self.block, self.largest = recipes, block, largest


def _torch():
    import torch

    torch.set_num_threads(1)  # as the main harness: both sides single-threaded on a shared machine
    func = torch.func
    recipes = {
        "jacobian": [
            ("torch.func.jacfwd", "forward", func.jacfwd),
            ("torch.func.jacrev", "reverse", func.jacrev),
        ],
        "hessian": [
            ("torch.func.hessian", None, func.hessian),
            ("torch.func.jacrev(jacrev)", None, lambda f: func.jacrev(func.jacrev(f))),
        ],
    }
    return Framework("torch", di.AutoTorch, torch.from_numpy, recipes)


def _jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    recipes = {
        "jacobian": [
            ("jax.jit(jacfwd)", "forward", lambda f: jax.jit(jax.jacfwd(f))),
            ("jax.jit(jacrev)", "reverse", lambda f: jax.jit(jax.jacrev(f))),
        ],
        "hessian": [
            ("jax.jit(hessian)", None, lambda f: jax.jit(jax.hessian(f))),
            ("jax.jit(jacrev(grad))", None, lambda f: jax.jit(jax.jacrev(jax.grad(f)))),
        ],
    }
    return Framework("jax", di.AutoJAX, jax.numpy.asarray, recipes, jax.block_until_ready)


def _tensorflow():
    import tensorflow as tf

    def traced(run):
        return tf.function(run, autograph=False)

    def tape_jacobian(f):
        def run(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            return tape.jacobian(y, x)

        return traced(run)

    def forward_jacobian(f):
        def run(x):
            def column(v):
                with tf.autodiff.ForwardAccumulator(x, v) as acc:
                    y = f(x)
                return acc.jvp(y)

            return tf.transpose(tf.vectorized_map(column, tf.eye(x.shape[0], dtype=x.dtype)))

        return traced(run)

    def forward_over_reverse(f):
        def run(x):
            def column(v):
                with tf.autodiff.ForwardAccumulator(x, v) as acc:
                    with tf.GradientTape() as tape:
                        tape.watch(x)
                        y = f(x)
                    g = tape.gradient(y, x)
                return acc.jvp(g)

            return tf.vectorized_map(column, tf.eye(x.shape[0], dtype=x.dtype))

        return traced(run)

    def reverse_over_reverse(f):
        def run(x):
            with tf.GradientTape() as outer:
                outer.watch(x)
                with tf.GradientTape() as inner:
                    inner.watch(x)
                    y = f(x)
                g = inner.gradient(y, x)
            return outer.jacobian(g, x)

        return traced(run)

    recipes = {
        "jacobian": [
            ("tf.function(ForwardAccumulator, vectorized)", "forward", forward_jacobian),
            ("tf.function(tape.jacobian)", "reverse", tape_jacobian),
        ],
        "hessian": [
            ("tf.function(forward over reverse, vectorized)", None, forward_over_reverse),
            ("tf.function(tape.jacobian of tape.gradient)", None, reverse_over_reverse),
        ],
    }
    return Framework("tensorflow", di.AutoTensorFlow, tf.constant, recipes)


def _autograd():
    import autograd

    recipes = {
        "jacobian": [("autograd.jacobian", "reverse", autograd.jacobian)],
        "hessian": [("autograd.hessian", None, autograd.hessian)],
    }
    return Framework(
        "autograd", lambda mode=None: di.AutoAutograd(), np.asarray, recipes, largest=500
    )


FRAMEWORKS = {"torch": _torch, "jax": _jax, "tensorflow": _tensorflow, "autograd": _autograd}


def _selectors(framework, operator):
    """``(mode, selector)`` rows: every mode for Jacobians, the default mode for Hessians (a mode-pinned
    Hessian is another recipe: JAX's ``mode="forward"`` is forward over forward, n times the work of
    forward over reverse, and torch runs double backward in every mode); autograd has reverse mode only."""
    if framework.name == "autograd":
        return [(None, framework.selector())]
    modes = MODES if operator == "jacobian" else (None,)
    return [(mode, framework.selector(mode=mode)) for mode in modes]


def _loops(call, sample_s):
    once = sample(call, 1)
    return max(1, min(10_000, int(sample_s / max(once, 1e-9)) + 1)), once


def measure(framework, operator, mode, selector, n, rounds, sample_s, m=None, dtype="float64"):
    """One row: the prepared operator against the fastest native recipe of ``mode``, interleaved.

    ``A`` is ``m x n`` (``m``: n by default), x of length n, both of ``dtype``.
    """
    rng = np.random.default_rng(0)
    A_np = (rng.standard_normal((m or n, n)) / np.sqrt(n)).astype(dtype)
    x = framework.to_array(rng.standard_normal(n).astype(dtype))
    A = framework.to_array(A_np)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (1e-4, 1e-6)
    f = (vector_map if operator == "jacobian" else scalar_map)(A)
    prepare, run = getattr(di, "prepare_" + operator), getattr(di, operator)
    prep = prepare(f, selector, x)
    block = framework.block

    def ours():
        return block(run(f, selector, x, prep=prep))

    eligible = [
        (name, build)
        for name, recipe_mode, build in framework.recipes[operator]
        if mode is None or recipe_mode in (None, mode)
    ]
    expected = np.asarray(ours())
    natives = []
    for name, build in eligible:
        derivative_at = build(f)

        def native(derivative_at=derivative_at):
            return block(derivative_at(x))

        if not np.allclose(np.asarray(native()), expected, rtol=rtol, atol=atol):
            raise AssertionError(f"{framework.name} {operator} n={n}: {name} differs from di")
        once = sample(native, 1)
        best = min([entry[2] for entry in natives], default=once)
        if once > 3 * best:  # far behind: a second sample would not change the pick
            continue
        natives.append((name, native, min(once, sample(native, 1))))
    name, native, _ = min(natives, key=lambda entry: entry[2])
    loops_ours, once_ours = _loops(ours, sample_s)
    loops_native, once_native = _loops(native, sample_s)
    # the slow sizes get fewer rounds: a row stays within some seconds on a busy machine
    per_round = once_ours * loops_ours + once_native * loops_native
    rounds = max(3, min(rounds, int(20.0 / max(per_round, 1e-9))))
    times_ours, times_native = interleaved([(ours, loops_ours), (native, loops_native)], rounds)
    return {
        "framework": framework.name,
        "operator": operator,
        "mode": mode,
        "n": n,
        "m": m or n,
        "dtype": dtype,
        "native": name,
        "native_s": statistics.median(times_native),
        "di_s": statistics.median(times_ours),
        "ratio": statistics.median(a / b for a, b in zip(times_ours, times_native)),
        "rounds": rounds,
        "batch_size": di.batch_size(prep),
    }


def _mode_name(mode):
    return "default" if mode is None else mode


def markdown(rows, header):
    lines = [
        "# Prepared Jacobians and Hessians against the native recipes, n = 10 to 1500",
        "",
        header,
        "",
        "`y = tanh(A @ sin(x))` (Jacobian) and `sum(tanh(A @ sin(x)))` (Hessian), A n x n, float64; "
        "ratio: median over interleaved rounds of diffinterface / the fastest native recipe of that "
        f"mode (bounds: {BOUND} from n = 100 on, {SMALL_BOUND} at n = 10; **bold** above them).",
        "",
        "| framework | operator | mode | n | di | native | native recipe | ratio | rounds | batch |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r['framework']} | {r['operator']} | {_mode_name(r['mode'])} | {r['n']} "
                f"| error: {r['error']} | | | | | |"
            )
            continue
        bound = SMALL_BOUND if r["n"] < 100 else BOUND
        ratio = f"{r['ratio']:.2f}"
        lines.append(
            f"| {r['framework']} | {r['operator']} | {_mode_name(r['mode'])} | {r['n']} "
            f"| {fmt_time(r['di_s'])} | {fmt_time(r['native_s'])} | {r['native']} "
            f"| {f'**{ratio}**' if r['ratio'] > bound else ratio} | {r['rounds']} | {r['batch_size']} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows, path):
    """Ratio against n (log scale), one panel per framework, one line per operator and mode."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install 'diffinterface[plot]'): no plot written"
    frameworks = list(dict.fromkeys(r["framework"] for r in rows))
    fig, axes = plt.subplots(
        1, len(frameworks), figsize=(4.2 * len(frameworks), 3.6), squeeze=False, sharey=True
    )
    for ax, name in zip(axes[0], frameworks):
        lines: dict = {}
        for r in rows:
            if r["framework"] == name and "ratio" in r:
                key = f"{r['operator']}, {_mode_name(r['mode'])}"
                lines.setdefault(key, []).append((r["n"], r["ratio"]))
        for key, points in lines.items():
            points.sort()
            style = "-" if key.startswith("jacobian") else "--"
            ax.plot(*zip(*points), style, marker="o", label=key)
        ax.axhline(BOUND, color="grey", linewidth=0.8, linestyle=":")
        ax.axhline(1.0, color="black", linewidth=0.6)
        ax.set_xscale("log")
        ax.set_title(name)
        ax.set_xlabel("n")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("diffinterface / fastest native")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    parser.add_argument("--operators", default=",".join(OPERATORS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument(
        "--rounds", type=int, default=21, help="interleaved rounds per row, at most"
    )
    parser.add_argument(
        "--sample", type=float, default=0.01, help="seconds per timed sample, at least"
    )
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for framework_name in args.frameworks.split(","):
        try:
            framework = FRAMEWORKS[framework_name]()
        except ImportError as error:
            print(f"{framework_name}: not installed ({error})")
            continue
        # once, unrecorded: the first row of a framework would time its lazy first-use costs
        measure(framework, "jacobian", None, framework.selector(), min(sizes), 3, 0.001)
        for operator in args.operators.split(","):
            for mode, selector in _selectors(framework, operator):
                for n in sizes:
                    if framework.largest is not None and n > framework.largest:
                        continue
                    start = time.perf_counter()
                    try:
                        row = measure(
                            framework, operator, mode, selector, n, args.rounds, args.sample
                        )
                    except Exception as error:  # noqa: BLE001 - one failing row is reported, not fatal
                        row = {"framework": framework_name, "operator": operator, "mode": mode}
                        row.update(n=n, error=f"{type(error).__name__}: {error}"[:200])
                    rows.append(row)
                    print(
                        f"{framework_name} {operator} {_mode_name(mode)} n={n}: "
                        f"{row.get('ratio', row.get('error'))} ({time.perf_counter() - start:.0f} s)",
                        flush=True,
                    )
    header = run_header(
        f"python -m benchmarks.bench_sizes --rounds {args.rounds} --sample {args.sample}"
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sizes.md").write_text(markdown(rows, header))
    (out / "sizes.json").write_text(json.dumps({"header": header, "rows": rows}, indent=1))
    note = plot(rows, out / "sizes.png")
    if note:
        print(note)
    print(f"wrote {out / 'sizes.md'}")


if __name__ == "__main__":
    from .timing import with_fixed_malloc

    with_fixed_malloc("benchmarks.bench_sizes")
    main()
