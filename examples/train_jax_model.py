"""Train a small JAX MLP whose parameters are a pytree, with gradients from diffinterface.

Run: python examples/train_jax_model.py

The parameters are a list of ``{"w": ..., "b": ...}`` layers; ``x`` may be
such a tree, and the gradient comes back in the same structure (natively on
JAX: the tree goes to ``jax.value_and_grad``, compiled once at preparation).
The update is plain gradient descent with ``jax.tree_util``; an optimizer
library such as optax takes the same gradient tree.
"""

import jax
import jax.numpy as jnp
import numpy as np

import diffinterface as di


def init(sizes, rng):
    return [
        {
            "w": jnp.asarray(rng.normal(size=(a, b)) / np.sqrt(a), dtype=jnp.float32),
            "b": jnp.zeros(b, dtype=jnp.float32),
        }
        for a, b in zip(sizes[:-1], sizes[1:])
    ]


def mse(params, inputs, targets):
    h = inputs
    for layer in params[:-1]:
        h = jnp.tanh(h @ layer["w"] + layer["b"])
    out = h @ params[-1]["w"] + params[-1]["b"]
    return jnp.mean((out - targets) ** 2)


def main():
    rng = np.random.default_rng(0)
    inputs = jnp.asarray(rng.normal(size=(256, 4)), dtype=jnp.float32)
    targets = jnp.sin(inputs @ jnp.array([[1.0], [-2.0], [0.5], [0.0]]))
    params = init((4, 32, 1), rng)
    backend = di.AutoJAX()
    batch = (di.Constant(inputs), di.Constant(targets))
    prep = di.prepare_gradient(mse, backend, params, *batch)

    losses = []
    for step in range(150):
        loss, grads = di.value_and_gradient(mse, backend, params, *batch, prep=prep)
        params = jax.tree_util.tree_map(lambda p, g: p - 0.2 * g, params, grads)
        losses.append(float(loss))
        if step % 50 == 0:
            print(f"step {step:3d}  loss {losses[-1]:.4f}")
    print(f"step {len(losses) - 1:3d}  loss {losses[-1]:.4f}")
    if jax.tree_util.tree_structure(grads) != jax.tree_util.tree_structure(params):
        raise SystemExit("the gradient does not have the parameters' structure")
    if not losses[-1] < 0.25 * losses[0]:
        raise SystemExit(f"the loss did not fall: {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(
        f"loss fell from {losses[0]:.3f} to {losses[-1]:.3f}; gradients shaped like the parameter tree"
    )


if __name__ == "__main__":
    main()
