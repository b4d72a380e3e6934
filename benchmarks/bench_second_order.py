"""Second order, interface vs native: Rosenbrock Hessian (n = 10, 100) and one hvp (n = 100).

    python -m benchmarks.bench_second_order            # every framework
    python -m benchmarks.bench_second_order torch jax  # some of them
    python -m benchmarks.bench_second_order finitediff-over-jax   # also its first hvp of a fresh f

For each (backend, operator, n) the native recipes of the framework are timed
against the prepared interface call on the framework's own arrays (JAX arrays
in and out, torch tensors, numpy for autograd and finite differences),
alternately within each round, CPU time, each sample looping the call for at
least 2 ms. The ratio printed is the median over rounds of interface / the
fastest native recipe. SecondOrder pairs are timed against the same native
recipes (they compose the first-order pieces, so they are expected to cost more).
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import diffinterface as di

SAMPLE_S = 0.002
ROUNDS = 15


def rosenbrock(x):
    xp = di.array_namespace(x)
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def arrays(x, t):
        return jnp.asarray(x), jnp.asarray(t)

    grad = jax.grad(rosenbrock)
    hessian = {
        "jax.jit(jax.hessian(f))": jax.jit(jax.hessian(rosenbrock)),
        "jax.jit(jacrev(grad))": jax.jit(jax.jacrev(grad)),
    }
    hvp = {
        "jit(jvp(grad))": jax.jit(lambda x, t: jax.jvp(grad, (x,), (t,))[1]),
        "jit(grad(grad . t))": jax.jit(lambda x, t: jax.grad(lambda z: grad(z) @ t)(x)),
    }
    backends = {
        "AutoJAX()": di.AutoJAX(),
        "SecondOrder(JAX fwd, JAX rev)": di.SecondOrder(
            di.AutoJAX(mode="forward"), di.AutoJAX(mode="reverse")
        ),
    }
    return arrays, hessian, hvp, backends, jax.block_until_ready


def _torch():
    import torch

    torch.set_num_threads(1)

    def arrays(x, t):
        return torch.from_numpy(x.copy()), torch.from_numpy(t.copy())

    def double_backward_hessian(x):
        xr = x.detach().requires_grad_()
        (g,) = torch.autograd.grad(rosenbrock(xr), xr, create_graph=True)
        eye = torch.eye(x.shape[0], dtype=x.dtype)
        return torch.autograd.grad(g, xr, eye, is_grads_batched=True)[0]

    def double_backward_hvp(x, t):
        xr = x.detach().requires_grad_()
        (g,) = torch.autograd.grad(rosenbrock(xr), xr, create_graph=True)
        return torch.autograd.grad(g, xr, t)[0]

    func_hessian = torch.func.hessian(rosenbrock)
    func_grad = torch.func.grad(rosenbrock)
    hessian = {
        "double backward, batched": double_backward_hessian,
        "torch.func.hessian": func_hessian,
    }
    hvp = {
        "double backward": double_backward_hvp,
        "torch.func.jvp(grad)": lambda x, t: torch.func.jvp(func_grad, (x,), (t,))[1],
    }
    backends = {
        "AutoTorch()": di.AutoTorch(),
        "SecondOrder(torch fwd, torch rev)": di.SecondOrder(
            di.AutoTorch(mode="forward"), di.AutoTorch(mode="reverse")
        ),
    }
    return arrays, hessian, hvp, backends, lambda r: r


def _autograd():
    import autograd

    hessian = {"autograd.hessian": autograd.hessian(rosenbrock)}
    hvp = {"autograd.hessian_tensor_product": autograd.hessian_tensor_product(rosenbrock)}
    return (lambda x, t: (x, t)), hessian, hvp, {"AutoAutograd()": di.AutoAutograd()}, lambda r: r


def _finitediff():
    def second_differences(x):
        # The same formula as the adapter (symmetric central second differences, steps eps**(1/4) * |x|).
        n = x.shape[0]
        h = np.maximum(np.finfo(x.dtype).eps ** 0.25 * np.abs(x), np.finfo(x.dtype).eps ** 0.25)
        h = (x + h) - x
        fx = rosenbrock(x)
        out = np.empty((n, n))
        for i in range(n):
            e = np.zeros(n)
            e[i] = h[i]
            out[i, i] = (rosenbrock(x + e) - 2 * fx + rosenbrock(x - e)) / h[i] ** 2
            for j in range(i + 1, n):
                d = np.zeros(n)
                d[j] = h[j]
                mixed = (
                    rosenbrock(x + e + d)
                    - rosenbrock(x + e - d)
                    - rosenbrock(x - e + d)
                    + rosenbrock(x - e - d)
                )
                out[i, j] = out[j, i] = mixed / (4 * h[i] * h[j])
        return out

    return (
        (lambda x, t: (x, t)),
        {"numpy second differences": second_differences},
        {},
        {"AutoFiniteDiff()": di.AutoFiniteDiff()},
        lambda r: r,
    )


def _finitediff_over_jax():
    """SecondOrder(AutoFiniteDiff(), AutoJAX()) on numpy arrays: the outer's central differences of
    JAX's gradient (compiled whole with it, ``backends/finitediff/batched.py``), against the same
    differences of two calls of a prepared gradient, or of ``jax.jit(jax.grad(f))``."""
    import jax

    jax.config.update("jax_enable_x64", True)
    gradient_backend = di.AutoJAX()
    rel = np.finfo(np.float64).eps ** (
        1 / 3
    )  # the adapter's central step, max(rel * max|x|, rel) / max|t|
    preps = {}

    def two_prepared_gradients(x, t):
        prep = preps.get(x.shape)
        if prep is None:
            prep = preps[x.shape] = di.prepare_gradient(rosenbrock, gradient_backend, x)
        h = max(rel * float(np.max(np.abs(x))), rel) / float(np.max(np.abs(t)))
        plus = di.gradient(rosenbrock, gradient_backend, x + h * t, prep=prep)
        minus = di.gradient(rosenbrock, gradient_backend, x - h * t, prep=prep)
        return (plus - minus) / (2 * h)

    jitted_gradient = jax.jit(jax.grad(rosenbrock))

    def two_jitted_gradients(
        x, t
    ):  # what a user writes: two calls of jax.jit(jax.grad(f)), numpy around them
        h = max(rel * float(np.max(np.abs(x))), rel) / float(np.max(np.abs(t)))
        return (np.asarray(jitted_gradient(x + h * t)) - np.asarray(jitted_gradient(x - h * t))) / (
            2 * h
        )

    jitted_hessian = jax.jit(jax.hessian(rosenbrock))
    hessian = {"jax.jit(jax.hessian(f))": lambda x: np.asarray(jitted_hessian(x))}
    hvp = {
        "two prepared JAX gradients": two_prepared_gradients,
        "two jit(grad) calls": two_jitted_gradients,
    }
    backends = {"SecondOrder(FD, JAX)": di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX())}
    return (lambda x, t: (x, t)), hessian, hvp, backends, lambda r: r


def _fresh_rosenbrock():
    """A new function object each time: nothing compiled for it before."""
    return lambda x: rosenbrock(x)


def first_hvp_against_first_gradient(n=100, rounds=7):
    """SecondOrder(AutoFiniteDiff(), AutoJAX()): ``prepare_hvp`` plus the first hvp of a fresh f, against
    ``prepare_gradient`` plus the first gradient of AutoJAX() (what a user compiles for the gradient
    alone), in alternation, wall time; (median hvp s, median gradient s, median of the ratios)."""
    second_order, gradient_backend = di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX()), di.AutoJAX()
    x, t = np.linspace(-1.0, 1.5, n), np.cos(np.arange(n, dtype=float))

    def first_hvp():
        f, start = _fresh_rosenbrock(), time.perf_counter()
        di.hvp(f, second_order, x, (t,), prep=di.prepare_hvp(f, second_order, x, (t,)))
        return time.perf_counter() - start

    def first_gradient():
        f, start = _fresh_rosenbrock(), time.perf_counter()
        di.gradient(f, gradient_backend, x, prep=di.prepare_gradient(f, gradient_backend, x))
        return time.perf_counter() - start

    first_hvp(), first_gradient()  # JAX's own start-up, paid once by either
    hvps, gradients = [], []
    for r in range(rounds):
        for call, into in ((first_hvp, hvps), (first_gradient, gradients))[:: 1 if r % 2 else -1]:
            into.append(call())
    return (
        statistics.median(hvps),
        statistics.median(gradients),
        statistics.median(h / g for h, g in zip(hvps, gradients)),
    )


FRAMEWORKS = {
    "jax": _jax,
    "torch": _torch,
    "autograd": _autograd,
    "finitediff": _finitediff,
    "finitediff-over-jax": _finitediff_over_jax,
}


def _sample(call, block):
    """Seconds per call, looping ``call`` for at least SAMPLE_S of CPU time."""
    loops, elapsed = 0, 0.0
    start = time.process_time()
    while elapsed < SAMPLE_S:
        block(call())
        loops += 1
        elapsed = time.process_time() - start
    return elapsed / loops


def compare(natives, interface, block, rounds=ROUNDS):
    """(best native name, median ratio interface / best native, native seconds) measured interleaved."""
    for call in (*natives.values(), interface):
        block(call())  # warm-up: compilation, caches
    best = min(natives, key=lambda name: min(_sample(natives[name], block) for _ in range(3)))
    ratios, native_times = [], []
    for r in range(rounds):
        if r % 2:
            own, theirs = _sample(interface, block), _sample(natives[best], block)
        else:
            theirs, own = _sample(natives[best], block), _sample(interface, block)
        ratios.append(own / theirs)
        native_times.append(theirs)
    return best, statistics.median(ratios), statistics.median(native_times)


def main(selected):
    print(f"{'backend':36} {'operator':10} {'n':>4}  {'native best':30} {'native':>10}  ratio")
    for name in selected:
        arrays, hessians, hvps, backends, block = FRAMEWORKS[name]()
        for label, backend in backends.items():
            for n in (10, 100):
                if name == "finitediff" and n == 100:
                    continue  # 20001 evaluations a call: too slow to sample repeatedly
                x0 = np.linspace(-1.0, 1.5, n)
                x, t = arrays(x0, np.cos(np.arange(n, dtype=float)))
                expected = next(iter(hessians.values()))(x)
                prep = di.prepare_hessian(rosenbrock, backend, x)
                got = di.hessian(rosenbrock, backend, x, prep=prep)
                assert np.allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-4), (
                    label
                )
                natives = {k: (lambda f=f: f(x)) for k, f in hessians.items()}
                best, ratio, seconds = compare(
                    natives, lambda: di.hessian(rosenbrock, backend, x, prep=prep), block
                )
                print(
                    f"{label:36} {'hessian':10} {n:>4}  {best:30} {seconds * 1e6:8.1f}us  {ratio:.3f}"
                )
                if hvps and n == 100:
                    prep = di.prepare_hvp(rosenbrock, backend, x, (t,))
                    natives = {k: (lambda f=f: f(x, t)) for k, f in hvps.items()}
                    best, ratio, seconds = compare(
                        natives, lambda: di.hvp(rosenbrock, backend, x, (t,), prep=prep)[0], block
                    )
                    print(
                        f"{label:36} {'hvp':10} {n:>4}  {best:30} {seconds * 1e6:8.1f}us  {ratio:.3f}"
                    )
        if name == "finitediff-over-jax":
            hvp_s, gradient_s, ratio = first_hvp_against_first_gradient()
            print(
                f"{'SecondOrder(FD, JAX), fresh f':36} {'1st hvp':10} {100:>4}  {'prepare_gradient + 1st call':30} "
                f"{gradient_s * 1e3:8.1f}ms  {ratio:.3f}  (prepare_hvp + 1st hvp {hvp_s * 1e3:.1f} ms)"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or list(FRAMEWORKS))
