"""Bound the memory of a Jacobian: ``batch_size`` and ``memory_budget``.

Run: python examples/batch_sizes.py

A forward-mode Jacobian pushes one tangent per column of x; the backends that
vectorize (JAX, torch, TensorFlow) push a batch of them at once, and a batch
costs memory in proportion to its size. ``batch_size=k`` fixes the batch;
``memory_budget=bytes`` lets the preparation pick the largest batch whose
estimated working memory fits (``AutoTensorFlow`` takes the same two keywords).
``di.batch_size(prep)`` says what was chosen. The Jacobian is the same whatever
the batch.
"""

import numpy as np

import diffinterface as di

WEIGHTS = np.linspace(0.5, 1.5, 128)


def f(x):
    """Each output sums tanh(x_i * w_j) ** 2 over 128 weights: a 128-wide intermediate per entry."""
    xp = di.array_namespace(x)
    w = xp.asarray(WEIGHTS, dtype=x.dtype)
    return xp.sum(xp.tanh(x[:, None] * w[None, :]) ** 2, axis=1)


def main():
    x = np.linspace(-1.0, 1.0, 100)
    reference = di.jacobian(f, di.AutoJAX(mode="forward"), x)
    backends = [
        di.AutoJAX(mode="forward", batch_size=16),
        di.AutoTorch(mode="forward", batch_size=16),
        di.AutoTorch(mode="forward", memory_budget=4 * 2**20),
        di.AutoTorch(mode="forward", memory_budget=16 * 2**20),
    ]
    failures = 0
    for backend in backends:
        prep = di.prepare_jacobian(f, backend, x)
        J = di.jacobian(f, backend, x, prep=prep)
        ok = np.allclose(J, reference, rtol=1e-12, atol=1e-14)
        failures += not ok
        print(repr(backend))
        print(f"    {di.batch_size(prep):3d} columns per pass of 100  {'ok' if ok else 'MISMATCH'}")
    if failures:
        raise SystemExit(f"{failures} Jacobian(s) differ from the reference")
    print("the same 100 x 100 Jacobian from every batch size")


if __name__ == "__main__":
    main()
