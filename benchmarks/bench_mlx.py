"""AutoMLX against the native MLX recipe, interleaved, as the ratio of medians.

    python -m benchmarks.bench_mlx [--repeats N] [--blocks B] [--sizes 10,1000]

For each workload, size and operator the native recipe is what an MLX user
writes, compiled once with ``mx.compile`` before timing: ``mx.grad`` (gradient),
``mx.vmap`` of ``mx.vjp`` over the output's basis (Jacobian), ``mx.jvp``
(pushforward), ``mx.vjp`` of ``mx.grad`` (hvp) and its ``mx.vmap`` over x's
basis (Hessian). The prepared diffinterface operator and the native function
are called in alternation on the same ``mx.array`` x, each result evaluated
(``mx.eval``: MLX is lazy), so machine noise hits both alike; the figure is
median(diffinterface) / median(native), measured in ``--blocks`` blocks: the
median of the blocks' ratios and their range. Cold start is the time from
nothing to the first evaluated result: ``prepare_op`` plus one call, against
``mx.compile`` plus one call, both on a fresh f (medians of ``--cold``).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _workloads(mx):
    def rosenbrock(x):
        return mx.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def sines(x):
        return mx.sin(x) * mx.sum(x)

    return {"rosenbrock": (rosenbrock, True), "sines": (sines, False)}


def _native(mx, operator, f, t, n):
    if operator == "gradient":
        run = mx.grad(f)
    elif operator == "jacobian":
        basis = mx.eye(n, dtype=t.dtype)

        def run(x):
            return mx.vmap(lambda c: mx.vjp(f, [x], [c])[1][0])(basis)
    elif operator == "pushforward":

        def run(x):
            return mx.jvp(f, [x], [t])[1][0]
    elif operator == "hvp":

        def run(x):
            return mx.vjp(mx.grad(f), [x], [t])[1][0]
    else:
        basis = mx.eye(n, dtype=t.dtype)

        def run(x):
            return mx.vmap(lambda v: mx.vjp(mx.grad(f), [x], [v])[1][0])(basis)

    return mx.compile(run)


def _di(di, operator, f, backend, x, t):
    prepare, call = getattr(di, "prepare_" + operator), getattr(di, operator)
    if operator in ("pushforward", "hvp"):
        prep = prepare(f, backend, x, (t,))
        return lambda z: call(f, backend, z, (t,), prep=prep)
    prep = prepare(f, backend, x)
    return lambda z: call(f, backend, z, prep=prep)


def _interleaved(mx, fns, x, repeats):
    times = [[] for _ in fns]
    for fn in fns:  # warm
        mx.eval(fn(x))
    for _ in range(repeats):
        for fn, kept in zip(fns, times):
            start = time.perf_counter()
            mx.eval(fn(x))
            kept.append(time.perf_counter() - start)
    return [statistics.median(kept) for kept in times]


def _cold(mx, di, operator, f, backend, x, t, n, times):
    ours, native = [], []
    for _ in range(times):
        fresh = lambda z: f(z)  # noqa: E731 - a new function: nothing compiled for it yet
        start = time.perf_counter()
        mx.eval(_di(di, operator, fresh, backend, x, t)(x))
        ours.append(time.perf_counter() - start)
        fresh = lambda z: f(z)  # noqa: E731
        start = time.perf_counter()
        mx.eval(_native(mx, operator, fresh, t, n)(x))
        native.append(time.perf_counter() - start)
    return statistics.median(ours), statistics.median(native)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200, help="interleaved calls per block")
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--cold", type=int, default=5, help="cold starts per row")
    parser.add_argument("--sizes", default="10,1000")
    args = parser.parse_args(argv)

    import mlx.core as mx

    import diffinterface as di

    backend = di.AutoMLX()
    print(
        f"{'workload':<11} {'n':>5} {'operator':<12} {'di (us)':>8} {'native (us)':>11} {'ratio':>6} "
        f"{'range':>11} {'cold di (ms)':>12} {'cold native (ms)':>16}"
    )
    for name, (f, scalar) in _workloads(mx).items():
        for n in (int(s) for s in args.sizes.split(",")):
            operators = ("gradient", "hvp", "hessian") if scalar else ("jacobian", "pushforward")
            x = mx.array(np.linspace(0.1, 1.0, n))  # float32, MLX's default precision
            t = mx.ones((n,), dtype=x.dtype)
            for operator in operators:
                if operator in ("hessian", "jacobian") and n > 100:
                    continue
                fns = (_di(di, operator, f, backend, x, t), _native(mx, operator, f, t, n))
                blocks = [_interleaved(mx, fns, x, args.repeats) for _ in range(args.blocks)]
                ratios = sorted(b[0] / b[1] for b in blocks)
                ours, native = (statistics.median(b[i] for b in blocks) for i in range(2))
                cold_ours, cold_native = _cold(mx, di, operator, f, backend, x, t, n, args.cold)
                print(
                    f"{name:<11} {n:>5} {operator:<12} {ours * 1e6:>8.1f} {native * 1e6:>11.1f} "
                    f"{statistics.median(ratios):>6.3f} {ratios[0]:>5.2f}-{ratios[-1]:<5.2f} "
                    f"{cold_ours * 1e3:>12.1f} {cold_native * 1e3:>16.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
