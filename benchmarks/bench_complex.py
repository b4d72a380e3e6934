"""A prepared gradient at a complex x against the framework's own recipe, on every framework that takes one.

    python -m benchmarks.bench_complex                        # every framework, n = 10 and 1000, complex64 and complex128
    python -m benchmarks.bench_complex torch 1000 complex64   # one framework, one size, one dtype

diffinterface differentiates a complex x through its real view
(diffinterface/core/complex_convention.py): x as real and imaginary parts,
the gradient back into complex form; a prepared gradient at a complex array
x runs on JAX and TensorFlow at the complex x itself
(``Adapter.prepare_complex_gradient``). The native recipes return the same
numbers: JAX's ``jax.jit`` of ``conj(jax.grad(f))``, torch's ``backward()``
on a fresh leaf, TensorFlow's ``GradientTape`` traced into a
``tf.function`` (both already in diffinterface's convention), autograd's
``conj(grad(f))``. Both are called on the
framework's own arrays (numpy for autograd), alternately within each round;
the ratio is the median over rounds of diffinterface / native, wall time,
each sample blocking on the result. MLX is not measured: ``AutoMLX``
refuses a complex x (``Capabilities.complex_x_refusal``: MLX has no
complex128, and its complex64 would not keep a complex128 x's precision).
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import diffinterface as di

from .report import fmt_time

ROUNDS = 41
LOOPS = 20


def loss(z):
    xp = di.array_namespace(z)
    return xp.sum(xp.real(z * z) + xp.abs(xp.sin(z)) ** 2)


def _jax(z):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)  # for the native recipe; diffinterface needs no flag
    x = jnp.asarray(z)
    native = jax.jit(lambda z: jnp.conj(jax.grad(loss)(z)))
    return di.AutoJAX(), x, native, jax.block_until_ready


def _torch(z):
    import torch

    torch.set_num_threads(1)
    x = torch.from_numpy(z)

    def native(x):
        leaf = x.detach().requires_grad_()
        loss(leaf).backward()
        return leaf.grad

    return di.AutoTorch(), x, native, lambda r: r


def _tensorflow(z):
    import tensorflow as tf

    x = tf.constant(z)

    @tf.function
    def native(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = loss(x)
        return tape.gradient(y, x)  # TensorFlow's convention is diffinterface's

    return di.AutoTensorFlow(), x, native, lambda r: r


def _autograd(z):
    import autograd

    grad = autograd.grad(loss)
    return di.AutoAutograd(), z, lambda x: np.conj(grad(x)), lambda r: r


FRAMEWORKS = {"jax": _jax, "torch": _torch, "tensorflow": _tensorflow, "autograd": _autograd}
DTYPES = ("complex64", "complex128")


def measure(framework, n, dtype="complex128", rounds=ROUNDS):
    """``(native s, diffinterface s, median ratio)`` per gradient at a ``dtype`` x of size ``n``; checks both agree."""
    rng = np.random.default_rng(0)
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    backend, x, native, block = FRAMEWORKS[framework](z)
    prep = di.prepare_gradient(loss, backend, x)
    ours = np.asarray(di.gradient(loss, backend, x, prep=prep))
    if ours.dtype != dtype or not np.allclose(
        np.asarray(native(x)), ours, rtol=1e-12 if dtype == "complex128" else 1e-5
    ):
        raise AssertionError(
            f"{framework}: diffinterface's gradient differs from the native recipe's"
        )
    calls = {
        "native": lambda: block(native(x)),
        "diffinterface": lambda: block(di.gradient(loss, backend, x, prep=prep)),
    }
    times: dict = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(LOOPS):
                call()
            times[name].append((time.perf_counter() - start) / LOOPS)
    ratio = statistics.median(d / n for n, d in zip(times["native"], times["diffinterface"]))
    return statistics.median(times["native"]), statistics.median(times["diffinterface"]), ratio


def main(argv):
    frameworks = [a for a in argv if a in FRAMEWORKS] or list(FRAMEWORKS)
    sizes = [int(a) for a in argv if a.isdigit()] or [10, 1000]
    dtypes = [a for a in argv if a in DTYPES] or list(DTYPES)
    rows = [
        (framework, n, dtype, *measure(framework, n, dtype))
        for framework in frameworks
        for dtype in dtypes
        for n in sizes
    ]
    print(
        f"gradient of sum(Re(z^2) + |sin z|^2) at complex z: native recipe vs prepared di.gradient "
        f"(median of {ROUNDS} rounds)\n| framework | dtype | n | native | diffinterface | diffinterface / native |\n"
        "|---|---|---|---|---|---|"
    )
    print(
        "\n".join(
            f"| {framework} | {dtype} | {n} | {fmt_time(native)} | {fmt_time(ours)} | {ratio:.2f} |"
            for framework, n, dtype, native, ours, ratio in rows
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
