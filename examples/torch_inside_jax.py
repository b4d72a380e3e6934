"""A torch function inside a jitted JAX loss: DifferentiateWith bridges it.

    python examples/torch_inside_jax.py

The torch part (a chain energy) is differentiated by torch through
diffinterface's prepared operators; JAX sees it as a custom rule, so
``jax.jit``, ``jax.grad``, ``jax.hessian`` and ``jax.vmap`` all work.
"""

import jax
import jax.numpy as jnp
import numpy as np
import torch

import diffinterface as di


def chain_energy(x):
    """Written in torch: sum over neighbours of r^2 + r^4 + exp(-r)."""
    r = x[1:] - x[:-1]
    return torch.sum(r**2 + r**4 + torch.exp(-r))


energy = di.DifferentiateWith(chain_energy, di.AutoTorch())


def loss(x):
    return energy(x) + 0.1 * jnp.sum(x**2)  # the JAX part


with jax.enable_x64(True):  # float64 for this block only; the global setting is untouched
    x = jnp.linspace(0.0, 1.0, 6)
    gradient = jax.jit(jax.grad(loss))(x)
    hessian = jax.hessian(loss)(x)
    batch = jax.vmap(jax.grad(loss))(jnp.stack([x, 2 * x]))

    # the same loss written in JAX alone, for comparison
    def loss_in_jax(x):
        r = x[1:] - x[:-1]
        return jnp.sum(r**2 + r**4 + jnp.exp(-r)) + 0.1 * jnp.sum(x**2)

    assert np.allclose(gradient, jax.grad(loss_in_jax)(x))
    assert np.allclose(hessian, jax.hessian(loss_in_jax)(x))
    assert np.allclose(batch[1], jax.grad(loss_in_jax)(2 * x))
    print("gradient", gradient.dtype, np.round(np.asarray(gradient), 4))
