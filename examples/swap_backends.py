"""Swap the backend in one line: the same code, the same answers, another library doing the work.

Run: python examples/swap_backends.py            (every backend in turn)
     python examples/swap_backends.py torch      (one: fd, jax, torch or autograd)

Everything below ``backend = ...`` is written once. The function uses
``xp = di.array_namespace(x)``, so every library can trace it, and the
preparation decides once what each call needs (on JAX it compiles).
"""

import sys

import numpy as np

import diffinterface as di

CHOICES = {
    "fd": di.AutoFiniteDiff(),
    "jax": di.AutoJAX(),
    "torch": di.AutoTorch(),
    "autograd": di.AutoAutograd(),
}


def log_likelihood(theta, data):
    """Gaussian log-likelihood of ``data`` with mean theta[0] and log-deviation theta[1]."""
    xp = di.array_namespace(theta)
    mean, log_sigma = theta[0], theta[1]
    z = (data - mean) / xp.exp(log_sigma)
    return -xp.sum(0.5 * z**2 + log_sigma)


def fit_summary(backend, data):
    """Gradient and Hessian of the log-likelihood at its maximum, the same code for any backend."""
    theta = np.array([data.mean(), np.log(data.std())])  # the maximum-likelihood estimate
    samples = di.Constant(data)
    prep = di.prepare_hessian(log_likelihood, backend, theta, samples)
    value, gradient, hessian = di.value_gradient_and_hessian(
        log_likelihood, backend, theta, samples, prep=prep
    )
    standard_errors = np.sqrt(np.diag(np.linalg.inv(-np.asarray(hessian))))
    return float(value), np.asarray(gradient), standard_errors


def main():
    data = np.random.default_rng(0).normal(1.5, 0.5, size=200)
    names = sys.argv[1:] or list(CHOICES)
    unknown = [name for name in names if name not in CHOICES]
    if unknown:
        raise SystemExit(f"backend: expected one of {', '.join(CHOICES)}; got {', '.join(unknown)}")
    answers = []
    for name in names:
        backend = CHOICES[name]  # <- the one line that chooses the library
        value, gradient, errors = fit_summary(backend, data)
        answers.append(errors)
        print(
            f"{name:<9} log-likelihood {value:.6f}  |gradient| {np.abs(gradient).max():.1e}  standard errors {errors}"
        )
    if not all(np.allclose(a, answers[0], rtol=1e-5) for a in answers):
        raise SystemExit("the backends disagree")
    print("same standard errors from every backend")


if __name__ == "__main__":
    main()
