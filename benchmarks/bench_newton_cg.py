"""A whole ``scipy.optimize.minimize(method="Newton-CG")`` run through ``diffinterface.scipy.objective``
against the same run on JAX's own compiled functions: the Rosenbrock function, n = 200.

    python -m benchmarks.bench_newton_cg            # 31 rounds
    python -m benchmarks.bench_newton_cg 5          # 5 rounds

Newton-CG asks, at each iterate, for ``fun`` and ``jac`` and then for
Hessian-vector products (``hessp``) until its conjugate gradients converge:
hundreds of iterates, each with a new point. The native run gives scipy
``jax.jit(jax.grad(f))`` for ``jac`` (``fun`` from ``jax.jit(f)``) and
``jax.jit(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1])`` for ``hessp``,
fed scipy's numpy arrays, results back as numpy arrays; the interface run
gives it ``objective(f, di.AutoJAX(), x0)``'s ``fun``, ``jac`` and
``hessp`` (a same-point hvp preparation per iterate, moved from the last
one). Each side's functions are built once and compiled by a first run, not
timed (compilation is a cost of its own, paid once per process); each round
then runs both whole, alternately; the ratio is the median over rounds of
interface / native, wall time. Both runs must take the same iterations and
reach the same x. The header gives the load average. The bound of issue #51
is 1.3.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np
import scipy.optimize

import diffinterface as di
from diffinterface.scipy import objective

from .workloads import rosenbrock

N = 200
ROUNDS = 31


def _start():
    return np.linspace(-1.2, 1.0, N)


def native_functions():
    """``(fun, jac, hessp)`` for scipy on ``jax.jit`` of JAX's own transforms, fed numpy, results as numpy."""
    import jax

    value = jax.jit(rosenbrock)
    gradient = jax.jit(jax.grad(rosenbrock))
    product = jax.jit(lambda x, v: jax.jvp(jax.grad(rosenbrock), (x,), (v,))[1])
    return (
        lambda x: float(value(x)),
        lambda x: np.array(gradient(x)),
        lambda x, p: np.array(product(x, p)),
    )


def interface_functions():
    """``(fun, jac, hessp)`` of :func:`diffinterface.scipy.objective`."""
    problem = objective(rosenbrock, di.AutoJAX(), _start())
    return problem.fun, problem.jac, problem.hessp


def run(functions):
    fun, jac, hessp = functions
    return scipy.optimize.minimize(fun, _start(), jac=jac, hessp=hessp, method="Newton-CG")


def measure(rounds=ROUNDS):
    """``(native s, diffinterface s, median ratio, iterations)`` per whole run; checks both runs agree."""
    import jax

    jax.config.update("jax_enable_x64", True)  # scipy's float64 iterates, on both sides
    recipes = {"native": native_functions(), "diffinterface": interface_functions()}
    results = {name: run(functions) for name, functions in recipes.items()}  # compiles
    native, ours = results["native"], results["diffinterface"]
    if native.nit != ours.nit or not np.allclose(native.x, ours.x, rtol=1e-10, atol=1e-12):
        raise AssertionError(
            f"the runs differ: {native.nit} and {ours.nit} iterations, "
            f"largest difference in x {np.abs(native.x - ours.x).max():.2e}"
        )
    times: dict = {name: [] for name in recipes}
    for _ in range(rounds):
        for name, functions in recipes.items():
            start = time.perf_counter()
            run(functions)
            times[name].append(time.perf_counter() - start)
    ratio = statistics.median(d / n for n, d in zip(times["native"], times["diffinterface"]))
    return (
        statistics.median(times["native"]),
        statistics.median(times["diffinterface"]),
        ratio,
        ours.nit,
    )


def main(argv):
    rounds = next((int(a) for a in argv if a.isdigit()), ROUNDS)
    load = (
        ", load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
        if hasattr(os, "getloadavg")
        else ""
    )
    native, ours, ratio, iterations = measure(rounds)
    print(
        f"minimize(method='Newton-CG') of the Rosenbrock function, n = {N}, {iterations} iterations: "
        f"jax.jit recipes vs objective(f, AutoJAX(), x0) (median of {rounds} rounds{load})\n"
        "| native (ms) | diffinterface (ms) | diffinterface / native |\n|---|---|---|\n"
        f"| {native * 1e3:.1f} | {ours * 1e3:.1f} | {ratio:.2f} |"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
