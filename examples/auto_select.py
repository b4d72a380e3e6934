"""Let the preparation choose the backend: ``di.AutoSelect`` on two functions where different backends win.

Run: python examples/auto_select.py

``AutoSelect()`` prepares every installed backend (each mode of those that have
one), drops those that cannot run the function or disagree with the others,
times the rest and keeps the fastest. ``di.explain(prep)`` prints what it tried.

1. A log-partition function written with numpy and scipy: no AD library can
   trace it, finite differences can, and are chosen.
2. A torch function from R^2000 to R^3: the numpy-only backends cannot take a
   torch tensor, torch's two modes agree, and reverse mode (3 pullbacks)
   beats forward mode (2000 pushforwards).
"""

import numpy as np
import scipy.special
import torch

import diffinterface as di


def log_partition(theta):
    """log sum_k exp(k sin(theta_k)): numpy and scipy code, which only finite differences can evaluate."""
    return scipy.special.logsumexp(np.arange(theta.size) * np.sin(theta))


def moments(x):
    """Three moments of a long torch vector: R^2000 -> R^3."""
    return torch.stack([x.mean(), (x**2).mean(), torch.tanh(x).mean()])


def main():
    backend = di.AutoSelect(time_budget=0.5)

    theta = np.linspace(0.0, 1.0, 8)
    prep = di.prepare_gradient(log_partition, backend, theta)
    print(di.explain(prep), end="\n\n")
    weights = np.arange(8) * np.sin(theta)
    expected = scipy.special.softmax(weights) * np.arange(8) * np.cos(theta)
    assert np.allclose(di.gradient(log_partition, backend, theta, prep=prep), expected, atol=1e-8)
    first = di.selected_backend(prep)

    x = torch.linspace(-1.0, 1.0, 2000, dtype=torch.float64)
    prep = di.prepare_jacobian(moments, backend, x)
    print(di.explain(prep), end="\n\n")
    jacobian = di.jacobian(moments, backend, x, prep=prep)
    expected = torch.stack([torch.ones_like(x), 2 * x, 1 - torch.tanh(x) ** 2]) / x.numel()
    torch.testing.assert_close(jacobian, expected)
    second = di.selected_backend(prep)

    assert isinstance(first, di.AutoFiniteDiff) and isinstance(second, di.AutoTorch), (
        first,
        second,
    )
    print(f"different backends won: {first!r} for log_partition, {second!r} for moments")


if __name__ == "__main__":
    main()
