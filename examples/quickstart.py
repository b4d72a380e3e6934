"""Differentiate one function with every installed backend.

Run: python examples/quickstart.py

The function is written once against the array API (``di.array_namespace``),
so the same source runs under finite differences, JAX, torch, TensorFlow,
autograd and MLX. Each backend is prepared once, then called; the results must agree.
"""

import numpy as np

import diffinterface as di


def f(x):
    xp = di.array_namespace(x)
    return xp.sum(xp.sin(x) * x**2)


def analytic_gradient(x):
    return np.cos(x) * x**2 + 2 * x * np.sin(x)


BACKENDS = [
    di.AutoFiniteDiff(),
    di.AutoJAX(),
    di.AutoTorch(),
    di.AutoTensorFlow(),
    di.AutoAutograd(),
    di.AutoMLX(),
]


def main():
    x = np.linspace(-1.0, 1.5, 6)
    expected = analytic_gradient(x)
    print(f"f(x) = sum(sin(x) * x**2) at x = {x}")
    print("analytic")
    print(f"    gradient = {np.array2string(expected, precision=6)}")
    failures = 0
    for backend in BACKENDS:
        # each backend's repr on its own line: a long one never pushes its results out of line
        print(repr(backend))
        if not di.check_available(backend):
            print("    not installed (pip install 'diffinterface[all]')")
            continue
        prep = di.prepare_gradient(f, backend, x)
        value, grad = di.value_and_gradient(f, backend, x, prep=prep)
        ok = np.allclose(grad, expected, rtol=1e-6, atol=1e-8)
        failures += not ok
        print(
            f"    gradient = {np.array2string(np.asarray(grad), precision=6)}"
            f"  value = {float(value):.6f}  {'ok' if ok else 'MISMATCH'}"
        )
    if failures:
        raise SystemExit(f"{failures} backend(s) disagree with the analytic gradient")


if __name__ == "__main__":
    main()
