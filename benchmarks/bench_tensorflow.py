"""AutoTensorFlow against the native TensorFlow recipe, interleaved, as the ratio of medians.

    python -m benchmarks.bench_tensorflow [--repeats N]

For each workload, size and operator the native recipe is what a TensorFlow
user writes: one ``tf.function`` around ``tf.GradientTape`` (gradient,
``tape.jacobian``), ``tf.autodiff.ForwardAccumulator`` (pushforward) or an
accumulator around a tape (hvp, Hessian), traced once before timing; a tangent is an argument of it, as for the
prepared operator. The
prepared diffinterface operator and the native function are called in
alternation on the same tf.Tensor x, so machine noise hits both alike; the
figure is median(diffinterface) / median(native), measured in ``--blocks``
blocks: the median of the blocks' ratios and their range (the spread on a
loaded machine). A second native column calls the traced function's
``ConcreteFunction`` directly, as the prepared operator does (it skips
``tf.function``'s look-up of the trace by its arguments). Cold start is the
time from nothing to the first result: ``prepare_op`` plus one call, against
``tf.function`` tracing plus one call, both on a fresh f, ``--cold`` times in
alternation (medians).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _workloads(tf):
    def rosenbrock(x):
        return tf.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def sines(x):
        return tf.sin(x) * tf.reduce_sum(x)

    return {"rosenbrock": (rosenbrock, True), "sines": (sines, False)}


def _native(tf, operator, f, t, x=None, concrete=False):
    if operator == "gradient":

        def run(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            return tape.gradient(y, x)
    elif operator == "jacobian":

        def run(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            return tape.jacobian(y, x)
    elif operator == "pushforward":

        def run(x, t):
            with tf.autodiff.ForwardAccumulator(x, t) as acc:
                y = f(x)
            return acc.jvp(y)
    elif operator == "hvp":

        def run(x, t):
            with tf.autodiff.ForwardAccumulator(x, t) as acc:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = f(x)
                g = tape.gradient(y, x)
            return acc.jvp(g)
    else:  # hessian: forward over reverse, vectorized over the basis

        def run(x):
            def column(v):
                with tf.autodiff.ForwardAccumulator(x, v) as acc:
                    with tf.GradientTape() as tape:
                        tape.watch(x)
                        y = f(x)
                    g = tape.gradient(y, x)
                return acc.jvp(g)

            return tf.vectorized_map(column, tf.eye(x.shape[0], dtype=x.dtype))

    traced = tf.function(run, autograph=False)
    if concrete:
        traced = (
            traced.get_concrete_function(x, t)
            if operator in ("pushforward", "hvp")
            else traced.get_concrete_function(x)
        )
    if operator in ("pushforward", "hvp"):  # the tangent is an argument, as it is for diffinterface
        return lambda x: traced(x, t)
    return traced


def _di(di, operator, f, backend, x, t):
    if operator in ("pushforward", "hvp"):
        prepare, call = getattr(di, "prepare_" + operator), getattr(di, operator)
        prep = prepare(f, backend, x, (t,))
        return lambda z: call(f, backend, z, (t,), prep=prep)
    prepare, call = getattr(di, "prepare_" + operator), getattr(di, operator)
    prep = prepare(f, backend, x)
    return lambda z: call(f, backend, z, prep=prep)


def _interleaved(fns, x, repeats):
    times = [[] for _ in fns]
    for fn in fns:  # warm
        fn(x)
    for _ in range(repeats):
        for fn, kept in zip(fns, times):
            start = time.perf_counter()
            fn(x)
            kept.append(time.perf_counter() - start)
    return [statistics.median(kept) for kept in times]


def _cold(tf, di, operator, f, backend, x, t, times):
    ours, native = [], []
    for _ in range(times):
        fresh = lambda z: f(z)  # noqa: E731 - a new function: nothing traced for it yet
        start = time.perf_counter()
        _di(di, operator, fresh, backend, x, t)(x)
        ours.append(time.perf_counter() - start)
        fresh = lambda z: f(z)  # noqa: E731
        start = time.perf_counter()
        _native(tf, operator, fresh, t)(x)
        native.append(time.perf_counter() - start)
    return statistics.median(ours), statistics.median(native)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200, help="interleaved calls per block")
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--cold", type=int, default=5, help="cold starts per row")
    parser.add_argument("--sizes", default="10,1000")
    args = parser.parse_args(argv)

    import tensorflow as tf

    import diffinterface as di

    backend = di.AutoTensorFlow()
    print(
        f"{'workload':<11} {'n':>5} {'operator':<12} {'di (us)':>8} {'native (us)':>11} {'ratio':>6} "
        f"{'range':>11} {'concrete (us)':>13} {'ratio':>6} {'cold di (ms)':>12} {'cold native (ms)':>16}"
    )
    for name, (f, scalar) in _workloads(tf).items():
        operators = ("gradient", "hvp", "hessian") if scalar else ("jacobian", "pushforward")
        for n in (int(s) for s in args.sizes.split(",")):
            if n > 100 and operators != ("gradient", "hvp", "hessian") and "jacobian" in operators:
                operators = ("pushforward",)
            x = tf.constant(np.linspace(0.1, 1.0, n))
            t = tf.constant(np.ones(n))
            for operator in operators:
                if operator == "hessian" and n > 100:
                    continue
                fns = (
                    _di(di, operator, f, backend, x, t),
                    _native(tf, operator, f, t),
                    _native(tf, operator, f, t, x, concrete=True),
                )
                blocks = [_interleaved(fns, x, args.repeats) for _ in range(args.blocks)]
                ratios = sorted(b[0] / b[1] for b in blocks)
                ours, native, concrete = (statistics.median(b[i] for b in blocks) for i in range(3))
                to_concrete = statistics.median(b[0] / b[2] for b in blocks)
                cold_ours, cold_native = _cold(tf, di, operator, f, backend, x, t, args.cold)
                print(
                    f"{name:<11} {n:>5} {operator:<12} {ours * 1e6:>8.1f} {native * 1e6:>11.1f} "
                    f"{statistics.median(ratios):>6.3f} {ratios[0]:>5.2f}-{ratios[-1]:<5.2f} "
                    f"{concrete * 1e6:>13.1f} {to_concrete:>6.3f} {cold_ours * 1e3:>12.1f} "
                    f"{cold_native * 1e3:>16.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
