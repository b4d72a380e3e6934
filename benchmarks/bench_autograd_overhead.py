"""Prepared diffinterface calls on AutoAutograd vs native autograd, on the seed workloads.

Run: python benchmarks/bench_autograd_overhead.py [--quick]

Each workload times the native autograd call and the prepared interface call
interleaved in the same process (blocks of calls, alternating), and prints the
median time per call of each and their ratio interface/native (target <= 1.05),
plus the evaluations of f per call of each (they must be equal).
"""

from __future__ import annotations

import argparse
import statistics
import time

import autograd
import autograd.numpy as anp
import numpy as np
from autograd.differential_operators import make_hvp

import diffinterface as di

BACKEND = di.AutoAutograd()


def phi1(r):
    return r**2 + r**4 + anp.exp(-r)


def phi2(r):
    return -0.1 * r**3


def Fvec(x):
    """Seed 001, vectorized."""
    return phi1(x[1] - x[0]) + anp.sum(phi1(x[2:] - x[1:-1]) + phi2(x[2:] - x[:-2]))


def F(x):
    """Seed 001, one scalar at a time."""
    total = phi1(x[1] - x[0])
    for i in range(2, x.shape[0]):
        total = total + phi1(x[i] - x[i - 1]) + phi2(x[i] - x[i - 2])
    return total


def matrix_sum(x):
    """Seed 003: a 3x3 function of the scalar x, summed."""
    A = anp.array([[x + 1, x + 2, x + 3], [x + 4, x + 5, x + 6], [x + 7, x + 8, x + 9]])
    B = anp.array([[x - 1, x - 2, x - 3], [x - 4, x - 5, x - 6], [x - 7, x - 8, x - 9]])
    return anp.sum(A.T @ (B * 1.5))


def square(x):
    """Seed 004."""
    return x**2


def sum_of_squares(x):
    return anp.sum(x**2)


class Counted:
    def __init__(self, f):
        self.f, self.calls = f, 0

    def __call__(self, *args):
        self.calls += 1
        return self.f(*args)


def workloads():
    """(name, f, x, native(f) -> call, interface(f, x) -> call)."""
    rng = np.random.default_rng(0)

    def grad_pair(f, x):
        return autograd.grad(f), _prepared(di.prepare_gradient, di.gradient, f, x)

    def jac_pair(f, x):
        return autograd.jacobian(f), _prepared(di.prepare_jacobian, di.jacobian, f, x)

    def deriv_pair(f, x):
        return autograd.deriv(f), _prepared(di.prepare_derivative, di.derivative, f, x)

    def hessian_pair(f, x):
        return autograd.hessian(f), _prepared(di.prepare_hessian, di.hessian, f, x)

    def hvp_pair(f, x):
        tangents = (np.ones_like(x),)

        def native(x):
            return (make_hvp(f)(x)[0](tangents[0]),)

        prep = di.prepare_hvp(f, BACKEND, x, tangents)
        return native, lambda x: di.hvp(f, BACKEND, x, tangents, prep=prep)

    return [
        ("seed001 Fvec N=1e4 gradient", Fvec, rng.normal(size=10_000), grad_pair),
        ("seed001 F N=1e3 gradient", F, rng.normal(size=1_000), grad_pair),
        ("seed003 matrix_sum derivative (vs deriv)", matrix_sum, 0.7, deriv_pair),
        ("seed004 x**2 n=100 jacobian", square, rng.normal(size=100), jac_pair),
        ("seed004 x**2 n=1000 jacobian", square, rng.normal(size=1_000), jac_pair),
        ("sum(x**2) n=10 gradient", sum_of_squares, rng.normal(size=10), grad_pair),
        ("seed001 Fvec N=1e2 hessian", Fvec, rng.normal(size=100), hessian_pair),
        ("seed001 Fvec N=1e4 hvp (vs make_hvp)", Fvec, rng.normal(size=10_000), hvp_pair),
        ("sum(x**2) n=10 hessian", sum_of_squares, rng.normal(size=10), hessian_pair),
    ]


def _prepared(prepare, operator, f, x):
    prep = prepare(f, BACKEND, x)
    return lambda x: operator(f, BACKEND, x, prep=prep)


def _close(got, expected):
    if isinstance(got, tuple):
        return len(got) == len(expected) and all(_close(g, e) for g, e in zip(got, expected))
    return np.allclose(got, expected)


def _block_time(call, x, number):
    start = time.perf_counter()
    for _ in range(number):
        call(x)
    return (time.perf_counter() - start) / number


def measure(name, f, x, make_pair, rounds, budget_s, min_rounds):
    counted = Counted(f)
    native, interface = make_pair(counted, x)
    # Evaluations per call, after preparation.
    counted.calls = 0
    expected = native(x)
    native_evals = counted.calls
    counted.calls = 0
    got = interface(x)
    interface_evals = counted.calls
    if not _close(got, expected):
        raise SystemExit(f"{name}: interface and native results differ")
    # Calls per block, and fewer rounds for slow workloads, so that all rounds fit the budget.
    one = min(_block_time(native, x, 1), _block_time(native, x, 1))
    rounds = max(min_rounds, min(rounds, int(budget_s / (2 * one))))
    number = max(1, int(budget_s / (2 * rounds * max(one, 1e-7))))
    times_native, times_interface = [], []
    for i in range(rounds):
        # Alternate which goes first, so drift in the machine's load hits both alike.
        if i % 2:
            times_native.append(_block_time(native, x, number))
            times_interface.append(_block_time(interface, x, number))
        else:
            times_interface.append(_block_time(interface, x, number))
            times_native.append(_block_time(native, x, number))
    median_native = statistics.median(times_native)
    median_interface = statistics.median(times_interface)
    ratios = [i / n for i, n in zip(times_interface, times_native)]
    return {
        "name": name,
        "native_s": median_native,
        "interface_s": median_interface,
        "ratio": median_interface / median_native,
        "median_pair_ratio": statistics.median(ratios),
        "native_evals": native_evals,
        "interface_evals": interface_evals,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    args = parser.parse_args()
    rounds, budget, min_rounds = (5, 0.5, 3) if args.quick else (21, 3.0, 9)
    print(f"{'workload':<44}{'native':>12}{'interface':>12}{'ratio':>8}{'pair':>8}{'evals':>9}")
    for name, f, x, make_pair in workloads():
        r = measure(name, f, x, make_pair, rounds, budget, min_rounds)
        print(
            f"{r['name']:<44}{r['native_s'] * 1e6:>10.1f}us{r['interface_s'] * 1e6:>10.1f}us"
            f"{r['ratio']:>8.3f}{r['median_pair_ratio']:>8.3f}"
            f"{r['native_evals']:>5}/{r['interface_evals']:<3}"
        )


if __name__ == "__main__":
    main()
