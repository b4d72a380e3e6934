"""The per-call rows of issue #38, each against its bound: interface / native, interleaved in one process.

    python -m benchmarks.bench_overhead                 # every row (a few minutes)
    python -m benchmarks.bench_overhead --quick         # fewer rounds, smaller sizes (a smoke run)
    python -m benchmarks.bench_overhead gradient sparse # some groups: gradient jacobian hvp sparse bridge
    python -m benchmarks.bench_overhead --clock cpu     # process CPU time instead of wall time

Groups and rows (float64 unless named, ``jax_enable_x64`` on as in ``python -m benchmarks``):

- ``gradient``: ``sum(x**2)`` at n = 10 against ``jax.jit(jax.grad(f))``, the
  preparation's backend stored in a variable and the selector written inline
  (``di.gradient(f, di.AutoJAX(), x, prep=prep)``, and with a keyword,
  ``di.AutoJAX(mode="reverse")``), on JAX arrays (float64, float32) and numpy
  arrays (the native result converted with ``np.asarray``);
- ``jacobian``: ``x**2`` at n = 100, ``AutoJAX(mode="forward")`` and
  ``mode="reverse"`` against the faster of ``jax.jit(jax.jacfwd(f))`` and
  ``jax.jit(jax.jacrev(f))`` (chosen by a few interleaved rounds first, then timed alone);
- ``hvp``: ``SecondOrder(AutoFiniteDiff(), AutoJAX())``'s hvp of the Rosenbrock
  function at n = 100 on numpy arrays against what a user writes, the same central
  difference of two calls of ``jax.jit(jax.grad(f))`` with numpy around them (and the
  same with two prepared ``di.gradient`` calls);
- ``sparse``: the chain-energy Hessian at N = 1e4, ``AutoSparse(AutoJAX())``
  against ``jax.jit`` of asdex's; and, to show what reading the entries with a
  two-dimensional (color, position) gather buys (``backends/jax/sparse.py``),
  the same compiled products with the flat gather it replaced;
- ``bridge``: ``jax.jit(jax.grad(x -> 2 g(x) + outer(x)))`` with ``g`` a torch
  chain energy through ``DifferentiateWith`` at N = 1e4, against the torch
  inner's prepared ``value_and_pullback`` plus the JAX outer's jitted gradient;
  and, each beside the outer's gradient, a host callback that returns a ready
  array, the part of the bridge that belongs to JAX: through ``jax.pure_callback``
  and through the bridge's own callback primitive (``backends/jax/differentiate_with.py``
  emits its callback directly, without ``pure_callback``'s conversions).

Each round times one sample of every contender of a row (a sample loops a call
for at least the sample time, 5 ms), in an order that alternates between rounds; the
ratio is the median over rounds of the per-round ratio, with its interquartile
range. As ``python -m benchmarks`` does, the script re-executes itself once
with glibc's malloc thresholds fixed (``timing.MALLOC_SETTINGS``). The header
prints the machine's load average: on a loaded machine (more runnable
processes than cores) wall-clock ratios of microsecond calls are noise.
"""

from __future__ import annotations

import argparse
import os
import statistics

import numpy as np

import diffinterface as di

from . import timing
from .nested import _outer_part
from .workloads import chain_energy_vec

#: (bound, sizes) per row name; a row reads "within" when its median ratio is at most its bound
BOUNDS = {
    "gradient stored": 1.10,
    "gradient inline": 1.15,
    "gradient inline keyword": 1.15,
    "jacobian forward": 1.05,
    "jacobian reverse": 1.05,
    "sparse hessian vs asdex": 1.10,
    "bridge": 1.2,
    "hvp SecondOrder(FD, JAX)": 1.2,
}


def _row(name, calls, rounds, sample_s, reference, results):
    """Time ``calls`` (name -> call) interleaved; print and record each one's ratio to ``reference`` (a name)."""
    loops = {label: timing.loops_for(call, _Settings(sample_s))[0] for label, call in calls.items()}
    times = dict(
        zip(
            calls,
            timing.interleaved([(call, loops[label]) for label, call in calls.items()], rounds),
        )
    )
    base = times[reference]
    for label, samples in times.items():
        if label == reference:
            continue
        ratios = [a / b for a, b in zip(samples, base)]
        q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
        ratio = statistics.median(ratios)
        key = f"{name} {label}".strip()
        bound = BOUNDS.get(key)
        verdict = (
            "" if bound is None else ("within" if ratio <= bound else "ABOVE") + f" {bound:.2f}"
        )
        print(
            f"{key:42} {statistics.median(samples) * 1e6:10.2f} us  vs {statistics.median(base) * 1e6:10.2f} us"
            f"  ratio {ratio:5.3f} [{q1:.3f}-{q3:.3f}]  {verdict}",
            flush=True,
        )
        results[key] = {
            "ratio": ratio,
            "q1": q1,
            "q3": q3,
            "us": statistics.median(samples) * 1e6,
            "reference_us": statistics.median(base) * 1e6,
            "bound": bound,
        }


class _Settings:
    def __init__(self, sample_s):
        self.sample_s = sample_s


def _jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def gradients(rounds, sample_s, results):
    jax = _jax()
    import jax.numpy as jnp

    def f(x):
        return di.array_namespace(x).sum(x**2)

    native = jax.jit(jax.grad(f))
    for label, x, convert in (
        ("JAX float64", jnp.arange(10, dtype=jnp.float64) / 10, None),
        ("JAX float32", jnp.arange(10, dtype=jnp.float32) / 10, None),
        ("numpy float64", np.arange(10, dtype=np.float64) / 10, np.asarray),
    ):
        backend = di.AutoJAX()
        prep = di.prepare_gradient(f, backend, x)
        keyword_prep = di.prepare_gradient(f, di.AutoJAX(mode="reverse"), x)
        calls = {
            "native": (lambda x=x: native(x))
            if convert is None
            else (lambda x=x: np.asarray(native(x))),
            "stored": lambda x=x, prep=prep, backend=backend: di.gradient(f, backend, x, prep=prep),
            "inline": lambda x=x, prep=prep: di.gradient(f, di.AutoJAX(), x, prep=prep),
            "inline keyword": lambda x=x, p=keyword_prep: di.gradient(
                f, di.AutoJAX(mode="reverse"), x, prep=p
            ),
        }
        print(f"-- gradient n=10, {label}")
        _row(
            "gradient" if label == "JAX float64" else f"gradient ({label})",
            calls,
            rounds,
            sample_s,
            "native",
            results,
        )


def jacobians(rounds, sample_s, results):
    jax = _jax()
    import jax.numpy as jnp

    def f(x):
        return x**2

    x = jnp.arange(100, dtype=jnp.float64) / 100
    jacfwd, jacrev = jax.jit(jax.jacfwd(f)), jax.jit(jax.jacrev(f))
    natives = {
        "jit(jacfwd)": lambda: jacfwd(x).block_until_ready(),
        "jit(jacrev)": lambda: jacrev(x).block_until_ready(),
    }
    # the faster recipe is chosen first, then timed alone: the faster of two samples in every round would
    # be a biased reference (on a noisy machine, the least of two draws is low more often than one draw)
    loops = [timing.loops_for(call, _Settings(sample_s))[0] for call in natives.values()]
    selection = timing.interleaved(list(zip(natives.values(), loops)), max(3, rounds // 6))
    name = min(natives, key=lambda n: statistics.median(selection[list(natives).index(n)]))
    calls = {name: natives[name]}
    for mode in ("forward", "reverse"):
        backend = di.AutoJAX(mode=mode)
        prep = di.prepare_jacobian(f, backend, x)
        calls[mode] = lambda backend=backend, prep=prep: di.jacobian(
            f, backend, x, prep=prep
        ).block_until_ready()
    print(f"-- jacobian of x**2, n=100, against the faster of jit(jacfwd) and jit(jacrev): {name}")
    _row("jacobian", calls, rounds, sample_s, name, results)


def hvps(rounds, sample_s, results):
    """SecondOrder(AutoFiniteDiff(), AutoJAX()) hvp of the Rosenbrock function at n = 100, numpy arrays, against
    what a user writes: the same central difference of two calls of ``jax.jit(jax.grad(f))``, numpy around them."""
    _jax()
    from .bench_second_order import _finitediff_over_jax, rosenbrock

    n = 100
    x, t = np.linspace(-1.0, 1.5, n), np.cos(np.arange(n, dtype=float))
    _, _, natives, backends, _ = _finitediff_over_jax()
    backend = backends["SecondOrder(FD, JAX)"]
    prep = di.prepare_hvp(rosenbrock, backend, x, (t,))
    native, prepared_gradients = (
        natives["two jit(grad) calls"],
        natives["two prepared JAX gradients"],
    )
    # the same differences: equal up to the gradients' rounding, amplified by 1 / (2 h)
    assert np.allclose(
        di.hvp(rosenbrock, backend, x, (t,), prep=prep)[0], native(x, t), rtol=1e-9, atol=1e-6
    )
    calls = {
        "native": lambda: native(x, t),
        "SecondOrder(FD, JAX)": lambda: di.hvp(rosenbrock, backend, x, (t,), prep=prep),
        "two prepared gradients": lambda: prepared_gradients(x, t),
    }
    print(
        f"-- hvp, n={n}, numpy: against the central difference of two calls of jax.jit(jax.grad(f))"
    )
    _row("hvp", calls, rounds, sample_s, "native", results)


def _flat_gather_hessian(f, x, prep):
    """The compiled sparse Hessian as it was before the two-dimensional gather: the same products, the
    entries gathered by flat position out of the products reshaped to one dimension."""
    import jax
    import jax.numpy as jnp
    from jax.experimental.sparse import BCOO

    structure = prep.impl.sparse.compression  # the pattern and colors the preparation chose
    seeds = jnp.asarray(structure.seeds, dtype=x.dtype)
    gather = np.asarray(structure.gather, dtype=np.int32)
    indices = np.stack([structure.rows, structure.cols], axis=1)
    gradient = jax.grad(f)

    def hessian(x):
        products = jax.vmap(lambda s: jax.jvp(gradient, (x,), (s,))[1])(seeds)
        return BCOO(
            (products.reshape(-1)[gather], indices),
            shape=structure.shape,
            indices_sorted=True,
            unique_indices=True,
        )

    return jax.jit(hessian)


def _csr(matrix):
    """A BCOO matrix as scipy CSR, compared entry by entry (a dense N = 1e4 Hessian would take 800 MB)."""
    import scipy.sparse

    rows, cols = np.asarray(matrix.indices).T
    return scipy.sparse.coo_matrix(
        (np.asarray(matrix.data), (rows, cols)), shape=matrix.shape
    ).tocsr()


def sparse(rounds, sample_s, results, n):
    jax = _jax()
    import asdex

    x = jax.numpy.asarray(np.random.default_rng(0).uniform(0.1, 1.0, n))

    def ours(x):
        return chain_energy_vec(x)

    def theirs(x):  # a function object of its own: neither side reuses the other's traces
        return chain_energy_vec(x)

    coloring = asdex.hessian_coloring(theirs, x)
    reference = jax.jit(asdex.hessian_from_coloring(theirs, coloring))
    backend = di.AutoSparse(di.AutoJAX())
    prep = di.prepare_hessian(ours, backend, x)
    flat = _flat_gather_hessian(chain_energy_vec, x, prep)
    want = _csr(reference(x))
    for result in (di.hessian(ours, backend, x, prep=prep), flat(x)):
        assert abs(_csr(result) - want).max() <= 1e-10 * abs(want).max()
    calls = {
        "asdex": lambda: reference(x).data.block_until_ready(),
        "vs asdex": lambda: di.hessian(ours, backend, x, prep=prep).data.block_until_ready(),
        "flat gather (before)": lambda: flat(x).data.block_until_ready(),
    }
    print(
        f"-- AutoSparse(AutoJAX()) chain-energy Hessian, N={n}, {di.ncolors(prep)} colors (asdex "
        f"{coloring.num_colors}), against jax.jit of asdex's"
    )
    _row("sparse hessian", calls, rounds, sample_s, "asdex", results)


def bridge(rounds, sample_s, results, n):
    jax = _jax()
    import jax.numpy as jnp
    import torch

    torch.set_num_threads(1)
    x_np = np.random.default_rng(0).uniform(0.1, 1.0, n)
    x_jax, x_torch = jnp.asarray(x_np), torch.tensor(x_np)
    inner = di.AutoTorch()
    g = di.DifferentiateWith(chain_energy_vec, inner)
    bridged = jax.jit(jax.grad(lambda x: 2.0 * g(x) + _outer_part(x)))
    prep = di.prepare_pullback(
        chain_energy_vec, inner, x_torch, (torch.tensor(1.0, dtype=torch.float64),)
    )
    two = (torch.tensor(2.0, dtype=torch.float64),)
    outer = jax.jit(jax.grad(_outer_part))
    ready = np.asarray(x_np)
    callback = jax.jit(
        lambda x: (
            jax.pure_callback(lambda x: ready, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
            + jax.grad(_outer_part)(x)
        )
    )
    from diffinterface.backends.jax.differentiate_with import _host_p

    def ready_host(x):
        return (ready,)

    emitted = jax.jit(
        lambda x: (
            _host_p.bind(x, host=ready_host, outs=((x.shape, x.dtype),), nlevels=0)[0]
            + jax.grad(_outer_part)(x)
        )
    )
    assert np.array_equal(np.asarray(emitted(x_jax)), np.asarray(callback(x_jax)))
    _, (want,) = di.value_and_pullback(chain_energy_vec, inner, x_torch, two, prep=prep)
    assert np.allclose(
        np.asarray(bridged(x_jax)) - np.asarray(outer(x_jax)), want.numpy(), rtol=1e-10, atol=1e-12
    )

    def reference():
        di.value_and_pullback(chain_energy_vec, inner, x_torch, two, prep=prep)
        return outer(x_jax).block_until_ready()

    calls = {
        "reference": reference,
        "": lambda: bridged(x_jax).block_until_ready(),
        "outer alone": lambda: outer(x_jax).block_until_ready(),
        "pure_callback + outer": lambda: callback(x_jax).block_until_ready(),
        "emitted callback + outer": lambda: emitted(x_jax).block_until_ready(),
    }
    print(
        f"-- jax.jit(jax.grad) around a torch function through DifferentiateWith, N={n}: against the torch "
        "inner's prepared value_and_pullback plus the outer's jitted gradient"
    )
    _row("bridge", calls, rounds, sample_s, "reference", results)


GROUPS = {
    "gradient": gradients,
    "jacobian": jacobians,
    "hvp": hvps,
    "sparse": sparse,
    "bridge": bridge,
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "groups", nargs="*", help=f"groups to run, of {', '.join(GROUPS)} (default: all)"
    )
    parser.add_argument("--quick", action="store_true", help="few rounds, N = 1e3 (a smoke run)")
    parser.add_argument("--clock", choices=sorted(timing.CLOCKS), default="wall")
    args = parser.parse_args(argv)
    unknown = set(args.groups) - set(GROUPS)
    if unknown:
        parser.error(f"unknown groups {sorted(unknown)}; choose among {', '.join(GROUPS)}")
    timing.use_clock(args.clock)
    rounds, sample_s, n = (5, 0.001, 1000) if args.quick else (61, 0.005, 10_000)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"# issue #38 rows: clock {args.clock}, {rounds} rounds, load average {load:.1f} on {os.cpu_count()} "
        "cores"
        + (
            " (loaded: ratios of microsecond calls are noise)"
            if load > (os.cpu_count() or 1)
            else ""
        )
    )
    results: dict = {}
    for name in args.groups or GROUPS:
        group = GROUPS[name]
        if name in ("sparse", "bridge"):
            group(rounds, sample_s, results, n)
        else:
            group(rounds, sample_s, results)
    return results


if __name__ == "__main__":
    timing.with_fixed_malloc(
        "benchmarks.bench_overhead"
    )  # as python -m benchmarks: no page faults timed
    main()
