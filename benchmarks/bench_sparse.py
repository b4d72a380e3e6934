"""AutoSparse benchmarks: sparse against dense, against asdex, against scipy's grouped differences.

    python -m benchmarks.bench_sparse            # full (a few minutes)
    python -m benchmarks.bench_sparse --quick    # small sizes, a smoke run
    python -m benchmarks.bench_sparse --colorings   # only the MixedMode, order and substitution parts

Workloads, all float64:

- chain energy (vectorized, ``workloads.chain_energy_vec``): its
  Hessian is pentadiagonal. Sparse against dense on JAX and torch at N = 3000,
  sparse alone at N = 1e4 and 1e5 (its cost should grow linearly with N);
- the 2-D Brusselator reaction-diffusion right-hand side on a 32 x 32
  periodic grid (a 2048 x 2048 Jacobian): sparse against dense on JAX, torch
  and forward finite differences, with the number of evaluations of f;
- against asdex itself on the same JAX problems (prepared calls and
  preparation: detection, coloring and compilation);
- against scipy's ``approx_derivative(..., sparsity=...)``, the grouped
  forward differences behind ``least_squares(jac_sparsity=)``;
- the arrowhead Jacobian (``y[0] = sum(sin(x))``, ``y[i] = x[i]**2 + x[0]*x[i]``)
  at N = 1e4: ``MixedMode`` (star bicoloring) against the best one-sided
  ``AutoSparse`` (which needs N colors), on JAX and torch;
- colorings alone: smallest-last (ours) against asdex's largest-first on a
  banded 1e5 x 1e5 pattern; acyclic (substitution) against star coloring on a
  banded Hessian of bandwidth 3, colors and call times.

Times are medians over interleaved rounds in one process (each round runs
every contender once), JAX results waited for with ``block_until_ready``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import warnings

import numpy as np

import diffinterface as di

from .workloads import chain_energy_vec


def brusselator(x):
    """2-D Brusselator on an N x N periodic grid, x = [u, v] flattened (one source for every backend)."""
    xp = di.array_namespace(x)
    n = int(round((x.shape[0] // 2) ** 0.5))
    u, v = xp.reshape(x[: n * n], (n, n)), xp.reshape(x[n * n :], (n, n))
    alpha = 10.0 * (n - 1) ** 2 / 100.0

    def laplacian(w):
        return (
            xp.roll(w, 1, axis=0)
            + xp.roll(w, -1, axis=0)
            + xp.roll(w, 1, axis=1)
            + xp.roll(w, -1, axis=1)
            - 4 * w
        )

    du = 1.0 + u * u * v - 4.4 * u + alpha * laplacian(u)
    dv = 3.4 * u - u * u * v + alpha * laplacian(v)
    return (
        xp.concat((xp.reshape(du, (-1,)), xp.reshape(dv, (-1,))))
        if hasattr(xp, "concat")
        else xp.concatenate((xp.reshape(du, (-1,)), xp.reshape(dv, (-1,))))
    )


def brusselator_x(n):
    grid = np.linspace(0.0, 1.0, n)
    u = 22.0 * (grid[None, :] * (1 - grid[None, :])) ** 1.5 * np.ones((n, 1))
    v = 27.0 * (grid[:, None] * (1 - grid[:, None])) ** 1.5 * np.ones((1, n))
    return np.concatenate([u.ravel(), v.ravel()])


def chain_x(n):
    return np.random.default_rng(0).uniform(0.1, 1.0, n)


def _native(x, framework):
    if framework == "jax":
        import jax

        with jax.enable_x64(True):
            return jax.numpy.asarray(x)
    if framework == "torch":
        import torch

        return torch.tensor(x, dtype=torch.float64)
    return x


def _ready(result):
    data = getattr(result, "data", result)
    if hasattr(data, "block_until_ready"):
        data.block_until_ready()
    return result


def interleaved(contenders, rounds):
    """Median seconds per call of each ``name -> call()``, the calls interleaved round by round."""
    times = {name: [] for name in contenders}
    for call in contenders.values():  # warm up
        _ready(call())
    gc.disable()
    try:
        for _ in range(rounds):
            for name, call in contenders.items():
                start = time.perf_counter()
                _ready(call())
                times[name].append(time.perf_counter() - start)
    finally:
        gc.enable()
    return {name: statistics.median(t) for name, t in times.items()}


def timed(build):
    start = time.perf_counter()
    result = build()
    return result, time.perf_counter() - start


def _ms(seconds):
    return f"{seconds * 1e3:9.3f} ms"


# -- chain energy Hessian ------------------------------------------------------------------------


def chain_hessians(n_dense, n_sparse_only, rounds):
    rows = []
    for framework, dense_backend in (("jax", di.AutoJAX()), ("torch", di.AutoTorch())):
        x = _native(chain_x(n_dense), framework)
        sparse_backend = di.AutoSparse(dense_backend)
        sparse_prep, sparse_prep_s = timed(
            lambda: di.prepare_hessian(chain_energy_vec, sparse_backend, x)
        )
        dense_prep, dense_prep_s = timed(
            lambda: di.prepare_hessian(chain_energy_vec, dense_backend, x)
        )
        t = interleaved(
            {
                "sparse": lambda: di.hessian(chain_energy_vec, sparse_backend, x, prep=sparse_prep),
                "dense": lambda: di.hessian(chain_energy_vec, dense_backend, x, prep=dense_prep),  # noqa: F821 - deleted after timing
            },
            rounds,
        )
        rows.append(
            (
                f"chain Hessian N={n_dense} {framework}",
                t["sparse"],
                t["dense"],
                t["dense"] / t["sparse"],
                di.ncolors(sparse_prep),
                sparse_prep_s,
                dense_prep_s,
            )
        )
        del dense_prep
        for n in n_sparse_only:
            x = _native(chain_x(n), framework)
            prep, prep_s = timed(lambda: di.prepare_hessian(chain_energy_vec, sparse_backend, x))
            t = interleaved(
                {"sparse": lambda: di.hessian(chain_energy_vec, sparse_backend, x, prep=prep)},
                rounds,
            )
            rows.append(
                (
                    f"chain Hessian N={n} {framework}",
                    t["sparse"],
                    None,
                    None,
                    di.ncolors(prep),
                    prep_s,
                    None,
                )
            )
    print("\n## Chain energy Hessian: sparse vs dense\n")
    print(
        f"{'workload':34} {'sparse':>12} {'dense':>12} {'speed-up':>9} {'colors':>6} {'prep sparse':>12} {'prep dense':>11}"
    )
    for name, s, d, ratio, k, ps, pd in rows:
        print(
            f"{name:34} {_ms(s)} {(_ms(d) if d else '-'):>12} {(f'{ratio:8.0f}x' if ratio else '-'):>9} {k:6d} "
            f"{ps:11.2f}s {(f'{pd:10.2f}s' if pd else '-'):>11}"
        )
    return rows


# -- Brusselator Jacobian ------------------------------------------------------------------------


def brusselator_jacobians(n, rounds):
    x0 = brusselator_x(n)
    rows = []
    for framework, dense_backend in (
        ("jax", di.AutoJAX()),
        ("torch", di.AutoTorch()),
        ("finitediff", di.AutoFiniteDiff(method="forward")),
    ):
        x = _native(x0, framework)
        sparse_backend = di.AutoSparse(dense_backend)
        counted = _Counted(brusselator)
        sparse_prep = di.prepare_jacobian(counted, sparse_backend, x)
        dense_prep = di.prepare_jacobian(counted, dense_backend, x)
        evaluations = {}
        for name, backend, prep in (
            ("sparse", sparse_backend, sparse_prep),
            ("dense", dense_backend, dense_prep),
        ):
            before = counted.count
            di.jacobian(counted, backend, x, prep=prep)
            evaluations[name] = counted.count - before
        t = interleaved(
            {
                # the function the preparations were made for (a strict preparation checks it); counting
                # costs one attribute increment per evaluation, the same on both sides
                "sparse": lambda: di.jacobian(counted, sparse_backend, x, prep=sparse_prep),
                "dense": lambda: di.jacobian(counted, dense_backend, x, prep=dense_prep),
            },
            rounds,
        )
        rows.append(
            (
                framework,
                t["sparse"],
                t["dense"],
                t["dense"] / t["sparse"],
                di.ncolors(sparse_prep),
                evaluations["sparse"],
                evaluations["dense"],
            )
        )
    size = 2 * n * n
    print(f"\n## 2-D Brusselator Jacobian, {n} x {n} grid ({size} x {size}): sparse vs dense\n")
    print(
        f"{'backend':12} {'sparse':>12} {'dense':>12} {'speed-up':>9} {'colors':>6} {'f evals sparse':>15} {'dense':>6}"
    )
    for name, s, d, ratio, k, es, ed in rows:
        evaluations = (f"{es:15d} {ed:6d}") if name == "finitediff" else f"{'(traced)':>15} {'':6}"
        print(f"{name:12} {_ms(s)} {_ms(d)} {ratio:8.0f}x {k:6d} {evaluations}")
    return rows


class _Counted:
    """f counting its Python-level calls (a jitted call counts 0: compiled code runs)."""

    def __init__(self, f):
        self.f, self.count = f, 0

    def __call__(self, x, *args):
        self.count += 1
        return self.f(x, *args)


# -- against asdex -------------------------------------------------------------------------------


def against_asdex(chain_n, bruss_n, rounds, prep_rounds=5):
    import asdex
    import jax

    print("\n## AutoSparse(AutoJAX()) against asdex (jax.jit of asdex's function, BCOO results)\n")
    print(
        f"{'workload':30} {'ours':>12} {'asdex':>12} {'ratio':>6} {'prep ours':>10} {'prep asdex':>11} {'ratio':>6} "
        f"{'colors':>6} {'asdex':>5}"
    )
    rows = []
    for name, f, x0, operator in (
        ("chain Hessian N=%d" % chain_n, chain_energy_vec, chain_x(chain_n), "hessian"),
        ("Brusselator Jacobian N=%d" % bruss_n, brusselator, brusselator_x(bruss_n), "jacobian"),
    ):
        x = _native(x0, "jax")
        backend = di.AutoSparse(di.AutoJAX())
        prepare, call = (
            (di.prepare_hessian, di.hessian)
            if operator == "hessian"
            else (di.prepare_jacobian, di.jacobian)
        )
        source = f
        # A fresh function object for each side, asdex first: neither reuses the other's traces.
        f = lambda x, source=source: source(x)  # noqa: E731

        def asdex_prepare():
            with jax.enable_x64(True):
                if operator == "hessian":
                    coloring = asdex.hessian_coloring(f, x)
                    fn = jax.jit(asdex.hessian_from_coloring(f, coloring))
                else:
                    coloring = asdex.jacobian_coloring(f, x)
                    fn = jax.jit(asdex.jacobian_from_coloring(f, coloring))
                _ready(fn(x))  # compiles
            return coloring, fn

        # Preparation is timed in alternating rounds, each side with a fresh function object (no
        # reused traces), median of the rounds: a single first round pays JAX's one-time costs
        # (primitive rules, x64 lowering) on whichever side happens to need them first.
        prep_times, asdex_times = [], []
        for _ in range(prep_rounds):
            f = lambda x, source=source: source(x)  # noqa: E731
            (coloring, fn), seconds = timed(asdex_prepare)
            asdex_times.append(seconds)
            f = lambda x, source=source: source(x)  # noqa: E731
            prep, seconds = timed(lambda: prepare(f, backend, x))
            prep_times.append(seconds)
        prep_s, asdex_prep_s = statistics.median(prep_times), statistics.median(asdex_times)

        def asdex_call():
            with jax.enable_x64(True):
                return fn(x)

        t = interleaved(
            {"ours": lambda: call(f, backend, x, prep=prep), "asdex": asdex_call}, rounds
        )
        rows.append(
            (
                name,
                t["ours"],
                t["asdex"],
                prep_s,
                asdex_prep_s,
                di.ncolors(prep),
                coloring.num_colors,
            )
        )
        print(
            f"{name:30} {_ms(t['ours'])} {_ms(t['asdex'])} {t['ours'] / t['asdex']:6.2f} {prep_s:9.2f}s "
            f"{asdex_prep_s:10.2f}s {prep_s / asdex_prep_s:6.2f} {di.ncolors(prep):6d} {coloring.num_colors:5d}"
        )
    return rows


# -- against scipy's grouped finite differences --------------------------------------------------


def against_scipy(bruss_n, rounds):
    from scipy.optimize._numdiff import approx_derivative, group_columns

    x = brusselator_x(bruss_n)
    backend = di.AutoSparse(di.AutoFiniteDiff(method="forward"))
    prep = di.prepare_jacobian(brusselator, backend, x)
    pattern = di.sparsity_pattern(prep)
    groups = group_columns(pattern)
    t = interleaved(
        {
            "ours": lambda: di.jacobian(brusselator, backend, x, prep=prep),
            "scipy": lambda: approx_derivative(
                brusselator, x, method="2-point", sparsity=(pattern, groups)
            ),
        },
        rounds,
    )
    ours = di.jacobian(brusselator, backend, x, prep=prep)
    theirs = approx_derivative(brusselator, x, method="2-point", sparsity=(pattern, groups))
    difference = abs(ours - theirs).max()
    print(
        f"\n## Forward differences, Brusselator N={bruss_n}: AutoSparse(AutoFiniteDiff('forward')) vs scipy "
        "approx_derivative(sparsity=(pattern, groups))\n"
    )
    print(
        f"ours {_ms(t['ours'])} ({di.ncolors(prep)} colors)   scipy {_ms(t['scipy'])} "
        f"({int(groups.max()) + 1} groups)   ratio {t['ours'] / t['scipy']:.2f}   max |difference| {difference:.1e}"
    )
    return t


# -- MixedMode on an arrowhead -------------------------------------------------------------------


def arrowhead(x):
    xp = di.array_namespace(x)
    return xp.concat([xp.reshape(xp.sum(xp.sin(x)), (1,)), x[1:] ** 2 + x[0] * x[1:]])


def arrowhead_mixed(sizes, rounds, one_sided_rounds):
    """The one-sided colorings are dense (N colors: an N x N product stack, several GB at N = 1e4)."""
    print(
        "\n## Arrowhead Jacobian: AutoSparse(MixedMode(b, b)) vs the best one-sided AutoSparse(b)\n"
    )
    print(
        f"{'backend':8} {'N':>6} {'mixed':>12} {'one-sided':>12} {'speed-up':>9} {'colors':>6} {'one-sided':>9} "
        f"{'prep mixed':>11}"
    )
    rows = []
    for n, framework, dense_backend in (
        (n, *pair) for n in sizes for pair in (("jax", di.AutoJAX()), ("torch", di.AutoTorch()))
    ):
        x0 = np.linspace(0.1, 1.0, n)
        x = _native(x0, framework)
        mixed, one_sided = (
            di.AutoSparse(di.MixedMode(dense_backend, dense_backend)),
            di.AutoSparse(dense_backend),
        )
        mixed_prep, prep_s = timed(lambda: di.prepare_jacobian(arrowhead, mixed, x))
        one_sided_prep = di.prepare_jacobian(arrowhead, one_sided, x)
        t = interleaved(
            {"one-sided": lambda: di.jacobian(arrowhead, one_sided, x, prep=one_sided_prep)},  # noqa: F821
            one_sided_rounds,
        )
        t.update(
            interleaved(
                {"mixed": lambda: di.jacobian(arrowhead, mixed, x, prep=mixed_prep)}, rounds
            )
        )
        rows.append(
            (
                framework,
                n,
                t["mixed"],
                t["one-sided"],
                di.ncolors(mixed_prep),
                di.ncolors(one_sided_prep),
            )
        )
        print(
            f"{framework:8} {n:6d} {_ms(t['mixed'])} {_ms(t['one-sided'])} {t['one-sided'] / t['mixed']:8.0f}x "
            f"{di.ncolors(mixed_prep):6d} {di.ncolors(one_sided_prep):9d} {prep_s:10.2f}s"
        )
        del one_sided_prep
        gc.collect()
    return rows


# -- colorings alone -----------------------------------------------------------------------------


def banded_pattern(n, diagonals):
    offsets = np.arange(diagonals) - diagonals // 2
    rows = np.repeat(np.arange(n), diagonals)
    cols = rows + np.tile(offsets, n)
    keep = (cols >= 0) & (cols < n)
    return rows[keep].astype(np.int32), cols[keep].astype(np.int32)


def coloring_speed(n, diagonals, rounds):
    import asdex

    from diffinterface.wrappers.sparse.greedy import distance2_coloring
    from diffinterface.wrappers.sparse.orders import csr, vertex_order

    rows, cols = banded_pattern(n, diagonals)

    def ours(order):
        graph = (n, *csr(cols, rows, n), *csr(rows, cols, n))
        return distance2_coloring(graph, vertex_order(order, graph))

    def theirs():
        return asdex.jacobian_coloring_from_sparsity(
            asdex.SparsityPattern.from_coo(rows, cols, (n, n)), mode="fwd"
        )

    t = interleaved(
        {
            "smallest_last": lambda: ours("smallest_last"),
            "largest_first": lambda: ours("largest_first"),
            "asdex": theirs,
        },
        rounds,
    )
    colors = {
        "smallest_last": ours("smallest_last").max() + 1,
        "largest_first": ours("largest_first").max() + 1,
        "asdex": theirs().num_colors,
    }
    print(
        f"\n## Column coloring of a banded {n} x {n} pattern ({diagonals} diagonals), CSR building included\n"
    )
    for name in t:
        print(
            f"{name:14} {_ms(t[name])} {colors[name]:3d} colors   {t[name] / t['asdex']:5.2f}x asdex's time"
        )
    return t, colors


def banded_energy(x):
    """A Hessian of bandwidth 3: entries (i, j) with |i - j| <= 3."""
    xp = di.array_namespace(x)
    return (
        xp.sum(xp.sin(x[3:] * x[:-3]))
        + xp.sum(xp.cos(x[1:] * x[:-1]))
        + xp.sum(x[2:] ** 2 * x[:-2])
    )


def substitution_hessian(n, rounds):
    x = np.linspace(0.1, 1.0, n)
    star = di.AutoSparse(di.AutoJAX())
    acyclic = di.AutoSparse(
        di.AutoJAX(), coloring_algorithm=di.GreedyColoring(decompression="substitution")
    )
    preps = {
        name: di.prepare_hessian(banded_energy, backend, x)
        for name, backend in (("star", star), ("acyclic", acyclic))
    }
    t = interleaved(
        {
            "star": lambda: di.hessian(banded_energy, star, x, prep=preps["star"]),
            "acyclic": lambda: di.hessian(banded_energy, acyclic, x, prep=preps["acyclic"]),
        },
        rounds,
    )
    difference = abs(
        di.hessian(banded_energy, star, x, prep=preps["star"])
        - di.hessian(banded_energy, acyclic, x, prep=preps["acyclic"])
    ).max()
    print(
        f"\n## Banded Hessian (bandwidth 3) N={n}, AutoJAX: star (direct) vs acyclic (substitution)\n"
    )
    for name in t:
        print(f"{name:8} {_ms(t[name])} {di.ncolors(preps[name]):3d} colors")
    print(f"max |difference| {difference:.1e}")
    return t


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, few rounds (a smoke run)"
    )
    parser.add_argument(
        "--colorings", action="store_true", help="only MixedMode, orders and substitution"
    )
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message="Coloring used")
    if args.colorings:
        arrowhead_mixed((10_000,), 31, 3)
        coloring_speed(100_000, 5, 15)
        substitution_hessian(2000, 31)
    elif args.quick:
        chain_hessians(200, (1000,), 3)
        brusselator_jacobians(8, 3)
        against_asdex(200, 8, 3, prep_rounds=1)
        against_scipy(8, 3)
        arrowhead_mixed((300,), 3, 2)
        coloring_speed(10_000, 5, 3)
        substitution_hessian(200, 3)
    else:
        chain_hessians(3000, (10_000, 100_000), 15)
        brusselator_jacobians(32, 15)
        against_asdex(3000, 32, 101)
        against_scipy(32, 31)
        arrowhead_mixed((10_000,), 31, 3)
        coloring_speed(100_000, 5, 15)
        substitution_hessian(2000, 31)


if __name__ == "__main__":
    main()
