"""Prepared diffinterface calls on AutoJAX vs the native jitted JAX recipe, on the seed workloads.

Run: python benchmarks/bench_jax_overhead.py [--quick] [--no-x64-section]

Each row times the native recipe and the prepared interface call interleaved
in the same process (blocks of calls, native and interface alternately,
which one goes first alternating per round) and prints the median CPU time per
call of each, the median over rounds of the per-round ratio
interface/native, and the ratio of the minima. Targets: <= 1.05 on the seed workloads, <= 1.10 on the
10-element floor.

Two array families per row: ``jax`` (jax arrays in and out; JAX dispatches
asynchronously, so each timed block ends with ``block_until_ready`` on its
last result) and ``numpy`` (numpy in; the native
recipe is ``np.asarray(jitted(x))``, which the interface also does).

Section A runs with x64 enabled globally (what a JAX user who wants float64
does), so both sides run the same compiled code with no switching. Section B
(float64 without touching the global configuration) shows the cost of the
interface's per-call thread-local x64 switch: the native recipe runs inside
one ``with jax.enable_x64(True):`` around the whole timing loop.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import diffinterface as di


def phi1(r):
    return r**2 + r**4 + jnp.exp(-r)


def phi2(r):
    return -0.1 * r**3


def fvec(x):
    """Seed 001's Fvec."""
    return phi1(x[1] - x[0]) + jnp.sum(phi1(x[2:] - x[1:-1]) + phi2(x[2:] - x[:-2]))


def seed003(x):
    """Seed 003: sum(A.T @ (B * 1.5)), A and B 3x3 built from the scalar x."""
    a = jnp.reshape(jnp.stack([x + k for k in range(1, 10)]), (3, 3))
    b = jnp.reshape(jnp.stack([x - k for k in range(1, 10)]), (3, 3))
    return jnp.sum(a.T @ (b * 1.5))


def seed004(x):
    return x**2


def sumsq(x):
    return jnp.sum(x**2)


# -- native recipes: (x, tangents) -> derivative, jitted --------------------------------------------


def native_gradient(f):
    g = jax.jit(jax.grad(f))
    return lambda x, t: g(x)


def native_derivative_forward(f):
    g = jax.jit(lambda x: jax.jvp(f, (x,), (jnp.ones_like(x),))[1])
    return lambda x, t: g(x)


def native_jacobian(transform):
    def build(f):
        g = jax.jit(transform(f))
        return lambda x, t: g(x)

    return build


def native_pushforward(f):
    g = jax.jit(lambda x, t: jax.jvp(f, (x,), (t,))[1])
    return lambda x, t: g(x, t[0])


def native_pullback(f):
    g = jax.jit(lambda x, c: jax.vjp(f, x)[1](c)[0])
    return lambda x, t: g(x, t[0])


# -- interface calls ---------------------------------------------------------------------------------


def interface(operator, f, backend, x, tangents):
    prepare = getattr(di, "prepare_" + operator)
    call = getattr(di, operator)
    if tangents is None:
        prep = prepare(f, backend, x)
        return lambda x, t: call(f, backend, x, prep=prep)
    prep = prepare(f, backend, x, tangents)
    return lambda x, t: call(f, backend, x, t, prep=prep)


# -- timing ---------------------------------------------------------------------------------------------


CLOCK = time.process_time  # CPU time of this process: a shared machine's load hits it less than wall time


def _loops(fn, target_s):
    t0 = time.perf_counter()
    fn()
    elapsed = max(time.perf_counter() - t0, 1e-7)
    return max(1, int(target_s / elapsed))


def compare(native, iface, rounds, target_s, wait=None):
    """(native median us, interface median us, median per-round ratio, ratio of minima).

    ``wait(result)`` (jax family) waits for the last result of each block: JAX
    dispatches asynchronously, so a block's CPU time covers all its computations.
    """
    wait = wait or (lambda result: result)
    for _ in range(50):
        wait(native())
        wait(iface())
    loops = min(_loops(lambda: wait(native()), target_s), _loops(lambda: wait(iface()), target_s))
    times = {"native": [], "iface": []}
    ratios = []
    gc.collect()
    gc.disable()  # as timeit does: a collection landing in one side's block is noise
    try:
        _rounds(native, iface, rounds, loops, wait, times, ratios)
    finally:
        gc.enable()
    return (statistics.median(times["native"]), statistics.median(times["iface"]), statistics.median(ratios),
            min(times["iface"]) / min(times["native"]))


def _rounds(native, iface, rounds, loops, wait, times, ratios):
    for r in range(rounds):
        order = (("native", native), ("iface", iface)) if r % 2 == 0 else (("iface", iface), ("native", native))
        got = {}
        for name, fn in order:
            t0 = CLOCK()
            for _ in range(loops):
                result = fn()
            wait(result)
            got[name] = (CLOCK() - t0) / loops * 1e6
            times[name].append(got[name])
        ratios.append(got["iface"] / got["native"])


def row(label, family, native, iface, x, tangents, rounds, target_s):
    if family == "jax":
        wait = jax.block_until_ready
        n_fn = lambda: native(x, tangents)  # noqa: E731
        i_fn = lambda: iface(x, tangents)  # noqa: E731
    else:
        wait = None
        n_fn = lambda: np.asarray(native(x, tangents))  # noqa: E731
        i_fn = lambda: iface(x, tangents)  # noqa: E731
    # Check both give the same numbers first.
    a, b = n_fn(), i_fn()
    b = b[0] if isinstance(b, tuple) else b
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6, atol=1e-9)
    n, i, ratio, minima = compare(n_fn, i_fn, rounds, target_s, wait)
    print(f"{label:<44} {family:<6} {n:>10.2f} {i:>10.2f} {ratio:>7.3f} {minima:>7.3f}", flush=True)
    return ratio


def workloads(dtype):
    rng = np.random.default_rng(0)
    x4 = rng.random(10_000).astype(dtype)
    x100 = rng.random(100).astype(dtype)
    x1000 = rng.random(1000).astype(dtype)
    t4 = (rng.random(10_000).astype(dtype),)
    c4 = (np.asarray(1.0, dtype=dtype),)
    t100 = (rng.random(100).astype(dtype),)
    return [
        # label, operator, f, backend, native builder, x, tangents
        ("seed001 Fvec N=1e4 gradient", "gradient", fvec, di.AutoJAX(), native_gradient, x4, None),
        ("seed001 Fvec N=1e4 pushforward", "pushforward", fvec, di.AutoJAX(), native_pushforward, x4, t4),
        ("seed001 Fvec N=1e4 pullback", "pullback", fvec, di.AutoJAX(), native_pullback, x4, c4),
        ("seed003 derivative forward", "derivative", seed003, di.AutoJAX(mode="forward"),
         native_derivative_forward, np.asarray(1.0, dtype=dtype), None),
        ("seed003 derivative reverse", "derivative", seed003, di.AutoJAX(mode="reverse"), native_gradient,
         np.asarray(1.0, dtype=dtype), None),
        ("seed004 x**2 jacobian n=100 (jacfwd)", "jacobian", seed004, di.AutoJAX(), native_jacobian(jax.jacfwd),
         x100, None),
        ("seed004 x**2 jacobian n=100 reverse", "jacobian", seed004, di.AutoJAX(mode="reverse"),
         native_jacobian(jax.jacrev), x100, None),
        ("seed004 x**2 jacobian n=1000 (jacfwd)", "jacobian", seed004, di.AutoJAX(),
         native_jacobian(jax.jacfwd), x1000, None),
        ("seed004 x**2 jacobian n=1000 reverse", "jacobian", seed004, di.AutoJAX(mode="reverse"),
         native_jacobian(jax.jacrev), x1000, None),
        ("seed004 x**2 n=100 pushforward", "pushforward", seed004, di.AutoJAX(), native_pushforward, x100, t100),
        ("seed004 x**2 n=100 pullback", "pullback", seed004, di.AutoJAX(), native_pullback, x100, t100),
    ]


def to_jax(a):
    if a is None:
        return None
    if isinstance(a, tuple):
        return tuple(to_jax(i) for i in a)
    with jax.enable_x64(a.dtype == np.float64):
        return jnp.asarray(a)


def fresh(f):
    """A new function object computing ``f`` (tracing only: compiled code is the same)."""
    return functools.wraps(f)(lambda *args: f(*args))


def run_rows(rows, families, rounds, target_s, native_context=None):
    ratios = {}
    for label, operator, f, backend, build, x, tangents in rows:
        for family in families:
            # A fresh function per row: the adapter caches its jitted functions per function, and
            # one jitted function serving several signatures (families, x64 settings) dispatches a
            # little slower than the native recipe's fresh one.
            f = fresh(f)
            xs, ts = (to_jax(x), to_jax(tangents)) if family == "jax" else (x, tangents)
            iface = interface(operator, f, backend, xs, ts)
            # Section B: the whole row runs inside one thread-local x64 context (the native recipe
            # needs it); the interface still switches x64 itself on every call.
            with native_context() if native_context is not None else contextlib.nullcontext():
                native = build(f)
                ratios[(label, family)] = row(label, family, native, iface, xs, ts, rounds, target_s)
    return ratios


def floor_rows(dtype):
    x10 = np.random.default_rng(1).random(10).astype(dtype)
    return [(f"sum(x**2) n=10 gradient {np.dtype(dtype).name}", "gradient", sumsq, di.AutoJAX(), native_gradient, x10, None)]


def overhead(rounds, target_s):
    """The 10-element floor, split: native, the Impl called directly, and the public call."""
    x = jnp.asarray(np.random.default_rng(1).random(10).astype(np.float32))
    backend = di.AutoJAX()
    f = fresh(sumsq)
    prep = di.prepare_gradient(f, backend, x)
    g = jax.jit(jax.grad(f))
    impl = prep.impl.gradient
    print("\n10-element floor split (float32, jax arrays): us per call, ratio vs native")
    native = lambda: g(x)  # noqa: E731
    direct = lambda: impl(x)  # noqa: E731
    public = lambda: di.gradient(f, backend, x, prep=prep)  # noqa: E731
    for label, fn in (("prep.impl.gradient(x)", direct), ("di.gradient(f, backend, x, prep=prep)", public)):
        n, i, ratio, minima = compare(native, fn, rounds, target_s, jax.block_until_ready)
        print(f"  {label:<42} native {n:7.2f}  this {i:7.2f}  ratio {ratio:.3f}  min/min {minima:.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--no-x64-section", action="store_true", help="skip section B")
    parser.add_argument("--families", default="jax,numpy")
    args = parser.parse_args()
    rounds, target_s = (15, 0.004) if args.quick else (151, 0.004)
    families = args.families.split(",")
    header = f"{'workload':<44} {'family':<6} {'native us':>10} {'iface us':>10} {'ratio':>7} {'min/min':>7}"

    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; {rounds} rounds, medians\n")
    print("Floor, float32, x64 off (JAX's defaults):")
    print(header)
    run_rows(floor_rows(np.float32), families, rounds, target_s)

    if not args.no_x64_section:
        print("\nB: float64 with x64 off globally (interface switches x64 per call; native inside enable_x64):")
        print(header)
        run_rows(floor_rows(np.float64) + workloads(np.float64)[3:5], families, rounds, target_s,
                 native_context=lambda: jax.enable_x64(True))

    jax.config.update("jax_enable_x64", True)
    print("\nA: float64 seed workloads, x64 enabled globally:")
    print(header)
    run_rows(floor_rows(np.float64) + workloads(np.float64), families, rounds, target_s)
    overhead(rounds, target_s)


if __name__ == "__main__":
    main()
