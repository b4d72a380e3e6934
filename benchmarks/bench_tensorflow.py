"""AutoTensorFlow against the native TensorFlow recipe, interleaved, as the ratio of medians.

    python -m benchmarks.bench_tensorflow [--repeats N]

For each workload, size and operator the native recipe is what a TensorFlow
user writes: one ``tf.function`` around ``tf.GradientTape`` (gradient,
``tape.jacobian``), ``tf.autodiff.ForwardAccumulator`` (pushforward) or an
accumulator around a tape (hvp, Hessian), traced once before timing; a tangent is an argument of it, as for the
prepared operator. The
prepared diffinterface operator and the native function are called in
alternation on the same tf.Tensor x, so machine noise hits both alike; the
figure is median(diffinterface) / median(native). Cold start is the time from
nothing to the first result: ``prepare_op`` plus one call, against
``tf.function`` tracing plus one call, both on a fresh f.
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


def _native(tf, operator, f, t):
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


def _interleaved(a, b, x, repeats):
    times_a, times_b = [], []
    for fn in (a, b):  # warm
        fn(x)
    for _ in range(repeats):
        for fn, times in ((a, times_a), (b, times_b)):
            start = time.perf_counter()
            fn(x)
            times.append(time.perf_counter() - start)
    return statistics.median(times_a), statistics.median(times_b)


def _cold(tf, di, operator, f, backend, x, t):
    fresh = lambda z: f(z)
    start = time.perf_counter()
    _di(di, operator, fresh, backend, x, t)(x)
    ours = time.perf_counter() - start
    fresh = lambda z: f(z)
    start = time.perf_counter()
    _native(tf, operator, fresh, t)(x)
    return ours, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--sizes", default="10,1000")
    args = parser.parse_args(argv)

    import tensorflow as tf

    import diffinterface as di

    backend = di.AutoTensorFlow()
    print(f"{'workload':<11} {'n':>5} {'operator':<12} {'di (us)':>10} {'native (us)':>12} {'ratio':>6} "
          f"{'cold di (ms)':>13} {'cold native (ms)':>17}")
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
                ours, native = _interleaved(_di(di, operator, f, backend, x, t), _native(tf, operator, f, t), x,
                                            args.repeats)
                cold_ours, cold_native = _cold(tf, di, operator, f, backend, x, t)
                print(f"{name:<11} {n:>5} {operator:<12} {ours * 1e6:>10.1f} {native * 1e6:>12.1f} "
                      f"{ours / native:>6.3f} {cold_ours * 1e3:>13.1f} {cold_native * 1e3:>17.1f}", flush=True)


if __name__ == "__main__":
    main()
