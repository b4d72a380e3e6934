"""Write a function once, differentiate it with every backend.

Run: python examples/backend_agnostic.py

The rule: inside ``f``, get the array namespace from the input,
``xp = di.array_namespace(x)``, and call array functions through ``xp``
(``xp.sin``, ``xp.sum``, ``xp.stack``...). Operators (``+``, ``*``, ``**``,
``@``, indexing) work as they are. ``xp`` is then whatever the backend traces
with:

- ``numpy`` for plain numpy arrays (finite differences, or calling f yourself),
- ``autograd.numpy`` for autograd's boxed arrays (reverse and forward mode),
- ``jax.numpy`` for JAX arrays and tracers,
- the array-API torch namespace (array-api-compat) for torch tensors.

Calling ``np.sin`` directly would break autograd (it cannot see through plain
numpy), JAX (tracers are not numpy arrays) and torch (no gradient flows).
"""

import numpy as np

import diffinterface as di


def energy(x):
    """A scalar of a vector: the gradient's test function."""
    xp = di.array_namespace(x)
    return xp.sum(xp.sin(x) * x**2)


def field(x):
    """A vector of a vector with a dense Jacobian."""
    xp = di.array_namespace(x)
    return xp.sin(x) * xp.sum(x**2)


def curve(t):
    """A vector of a scalar: the derivative's test function."""
    xp = di.array_namespace(t)
    return xp.stack([xp.cos(t), xp.sin(t), t**2])


BACKENDS = [di.AutoFiniteDiff(), di.AutoJAX(), di.AutoTorch(), di.AutoAutograd()]


def main():
    x = np.array([0.3, -1.2, 2.0])
    t = np.array(0.5)
    expected = {
        "gradient": np.cos(x) * x**2 + 2 * x * np.sin(x),
        "jacobian": np.diag(np.cos(x) * np.sum(x**2)) + 2 * np.outer(np.sin(x), x),
        "derivative": np.array([-np.sin(t), np.cos(t), 2 * t]),
    }
    failures = 0
    for backend in BACKENDS:
        name = type(backend).__name__
        if not di.check_available(backend):
            print(f"{name:<16} not installed (pip install 'diffinterface[all]')")
            continue
        results = {
            "gradient": di.gradient(energy, backend, x),
            "jacobian": di.jacobian(field, backend, x),
            "derivative": di.derivative(curve, backend, t),
        }
        errors = {
            name: float(np.max(np.abs(np.asarray(results[name]) - expected[name])))
            for name in results
        }
        ok = all(e < 1e-6 for e in errors.values())
        failures += not ok
        summary = "  ".join(f"{name} err {err:.1e}" for name, err in errors.items())
        print(f"{name:<16} {summary}  {'ok' if ok else 'MISMATCH'}")
    if failures:
        raise SystemExit(f"{failures} backend(s) disagree with the analytic derivatives")


if __name__ == "__main__":
    main()
