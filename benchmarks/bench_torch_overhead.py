"""AutoTorch's overhead: prepared interface calls against the fastest native torch recipe.

For each workload and operator this times, interleaved in one process, every
native recipe listed below, the adapter's prepared implementation called
directly (``prep.impl``) and the public prepared call (``di.<op>(..., prep=prep)``),
and prints medians and the ratio interface / fastest native. Inputs are
float64 tensors; torch uses one thread and the timer is that thread's CPU
time, so load from other processes barely moves the ratios.

    .venv/bin/python benchmarks/bench_torch_overhead.py            # ~1 minute
    .venv/bin/python benchmarks/bench_torch_overhead.py --quick    # fewer rounds
    .venv/bin/python benchmarks/bench_torch_overhead.py --compile  # also AutoTorch(compile=True), minutes
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.autograd import forward_ad as fwAD

import diffinterface as di

torch.set_num_threads(1)
F64 = torch.float64


# -- workloads (the seeds' functions, in torch) ---------------------------------------------------------


def phi1(r):
    return r**2 + r**4 + torch.exp(-r)


def seed001_vec(x):
    return phi1(x[1] - x[0]) + torch.sum(phi1(x[2:] - x[1:-1]) + -0.1 * (x[2:] - x[:-2]) ** 3)


def seed003(x):
    a = torch.stack([x + k for k in range(1, 10)]).reshape(3, 3)
    b = torch.stack([x - k for k in range(1, 10)]).reshape(3, 3)
    return torch.sum(a.T @ (b * 1.5))


def seed004(x):
    return x**2


def sum_of_squares(x):
    return torch.sum(x**2)


# -- native recipes -----------------------------------------------------------------------------------


def native_gradient(f):
    def gradient(x):
        leaf = x.detach().requires_grad_(True)
        return torch.autograd.grad(f(leaf), leaf)[0]

    return gradient


def native_func_grad(f):
    return torch.func.grad(f)


def native_jacobian_rows(f, x):
    eye = torch.eye(f(x).numel(), dtype=F64)

    def jacobian(x):
        leaf = x.detach().requires_grad_(True)
        return torch.autograd.grad(f(leaf), leaf, eye, is_grads_batched=True)[0]

    return jacobian


def native_jacobian_functional(f):
    return lambda x: torch.autograd.functional.jacobian(f, x, vectorize=True)


def native_jacobian_functional_forward(f):
    return lambda x: torch.autograd.functional.jacobian(f, x, vectorize=True, strategy="forward-mode")


def native_jacobian_columns(f, x):
    eye = torch.eye(x.numel(), dtype=F64)
    columns = torch.func.vmap(lambda t: torch.func.jvp(f, (x,), (t,))[1], out_dims=1)
    return lambda x: columns(eye)


def native_dual(f, x):
    one = torch.ones_like(x)

    def derivative(x):
        with fwAD.dual_level():
            return fwAD.unpack_dual(f(fwAD.make_dual(x, one))).tangent

    return derivative


def native_func_jvp(f, x):
    one = torch.ones_like(x)
    return lambda x: torch.func.jvp(f, (x,), (one,))[1]


def native_pullback(f, c):
    def pullback(x):
        leaf = x.detach().requires_grad_(True)
        return torch.autograd.grad(f(leaf), leaf, c)[0]

    return pullback


def native_pushforward(f, t):
    def pushforward(x):
        with fwAD.dual_level():
            return fwAD.unpack_dual(f(fwAD.make_dual(x, t))).tangent

    return pushforward


def native_hessian(f, x):
    eye = torch.eye(x.numel(), dtype=F64)

    def hessian(x):
        leaf = x.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(f(leaf), leaf, create_graph=True)
        return torch.autograd.grad(g, leaf, eye, is_grads_batched=True)[0]

    return hessian


def native_hvp(f, t):
    def hvp(x):
        leaf = x.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(f(leaf), leaf, create_graph=True)
        return torch.autograd.grad(g, leaf, t)[0]

    return hvp


# -- cases ------------------------------------------------------------------------------------------------


def cases(compiled=False):
    """(label, backend, natives {name: call}, impl call, interface call)."""
    rows = []

    def add(label, backend, natives, operator, f, x, *args):
        prepare = getattr(di, "prepare_" + operator)
        prep = prepare(f, backend, x, *args)
        method = getattr(prep.impl, operator)
        public = getattr(di, operator)
        impl = (lambda: method(x, *args))
        interface = (lambda: public(f, backend, x, *args, prep=prep))
        rows.append((label, natives, impl, interface))

    auto, fwd, rev = di.AutoTorch(), di.AutoTorch(mode="forward"), di.AutoTorch(mode="reverse")
    for label, f, n in (("seed001 Fvec n=1e4", seed001_vec, 10_000), ("sum(x**2) n=10", sum_of_squares, 10)):
        x = torch.rand(n, dtype=F64)
        g, fg = native_gradient(f), native_func_grad(f)
        add(f"{label} gradient", auto, {"autograd.grad": lambda x=x, g=g: g(x), "func.grad": lambda x=x, g=fg: g(x)},
            "gradient", f, x)
    s = torch.tensor(0.5, dtype=F64)
    dual, fjvp, grad = native_dual(seed003, s), native_func_jvp(seed003, s), native_gradient(seed003)
    add("seed003 derivative (mode=None)", auto,
        {"autograd.grad": lambda: grad(s), "dual numbers": lambda: dual(s), "func.jvp": lambda: fjvp(s)},
        "derivative", seed003, s)
    add("seed003 derivative forward", fwd,
        {"dual numbers": lambda: dual(s), "func.jvp": lambda: fjvp(s)}, "derivative", seed003, s)
    add("seed003 derivative reverse", rev, {"autograd.grad": lambda: grad(s)}, "derivative", seed003, s)
    for n in (10, 100, 1000):
        x = torch.rand(n, dtype=F64)
        rows_ = native_jacobian_rows(seed004, x)
        functional = native_jacobian_functional(seed004)
        cols = native_jacobian_columns(seed004, x)
        add(f"seed004 x**2 n={n} jacobian (mode=None)", auto,
            {"batched autograd.grad": lambda x=x, r=rows_: r(x),
             "autograd.functional.jacobian(vectorize)": lambda x=x, r=functional: r(x),
             "vmap(jvp)": lambda x=x, r=cols: r(x)}, "jacobian", seed004, x)
        forward_functional = native_jacobian_functional_forward(seed004)
        add(f"seed004 x**2 n={n} jacobian forward", fwd,
            {"vmap(jvp)": lambda x=x, r=cols: r(x),
             "autograd.functional.jacobian(forward-mode)": lambda x=x, r=forward_functional: r(x)},
            "jacobian", seed004, x)
    for n in (10, 1000):
        x = torch.rand(n, dtype=F64)
        t = torch.rand(n, dtype=F64)
        pb, pf = native_pullback(seed004, t), native_pushforward(seed004, t)
        add(f"seed004 x**2 n={n} pullback", auto, {"autograd.grad": lambda x=x, r=pb: r(x)},
            "pullback", seed004, x, (t,))
        add(f"seed004 x**2 n={n} pushforward", auto, {"dual numbers": lambda x=x, r=pf: r(x)},
            "pushforward", seed004, x, (t,))
    if compiled:
        for label, f, n in (("seed001 Fvec n=1e4", seed001_vec, 10_000), ("sum(x**2) n=10", sum_of_squares, 10)):
            x = torch.rand(n, dtype=F64)
            g = native_gradient(f)
            start = time.perf_counter()
            add(f"{label} gradient compile=True", di.AutoTorch(compile=True),
                {"autograd.grad (eager)": lambda x=x, g=g: g(x)}, "gradient", f, x)
            print(f"# {label}: AutoTorch(compile=True) prepared in {time.perf_counter() - start:.1f} s")
    x = torch.rand(10, dtype=F64)
    t = torch.rand(10, dtype=F64)
    h, hv = native_hessian(sum_of_squares, x), native_hvp(sum_of_squares, t)
    add("sum(x**2) n=10 hessian", auto, {"double backward": lambda: h(x)}, "hessian", sum_of_squares, x)
    add("sum(x**2) n=10 hvp", auto, {"double backward": lambda: hv(x)}, "hvp", sum_of_squares, x, (t,))
    return rows


def _time(call, reps):
    # CPU time of this thread (torch runs on one thread here): other processes' load barely moves it.
    start = time.thread_time()
    for _ in range(reps):
        call()
    return (time.thread_time() - start) / reps


def measure(natives, impl, interface, rounds, budget=0.01):
    """Median over rounds of each call's time relative to the fastest native in the same round."""
    calls = {**natives, "impl": impl, "interface": interface}
    for call in calls.values():
        call()
    single = _time(interface, 3)
    reps = max(3, int(budget / max(single, 1e-7)))
    times = {name: [] for name in calls}
    order = list(calls)
    for r in range(rounds):
        # Alternate the order so that neither side always runs first (warm caches, drift).
        for name in order if r % 2 else reversed(order):
            times[name].append(_time(calls[name], reps))
    best = min(natives, key=lambda name: statistics.median(times[name]))
    base = times[best]
    ratios = {name: statistics.median(t / b for t, b in zip(times[name], base)) for name in ("impl", "interface")}
    return best, statistics.median(base), ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--compile", action="store_true", help="also time AutoTorch(compile=True) gradients")
    args = parser.parse_args()
    rounds = 9 if args.quick else 31
    print(f"{'workload':42s} {'fastest native':40s} {'native us':>10s} {'impl':>7s} {'interface':>9s}")
    for label, natives, impl, interface in cases(args.compile):
        best, base, ratios = measure(natives, impl, interface, rounds)
        print(f"{label:42s} {best:40s} {base * 1e6:10.1f} {ratios['impl']:7.3f} {ratios['interface']:9.3f}")


if __name__ == "__main__":
    main()
