"""Model training steps: value_and_gradient over a model's parameter tree vs the native recipes.

Workload: an MLP with 2 hidden layers of 256 (tanh), 64 inputs, 10 outputs,
batch 512, float32, mean squared error. Each recipe computes the loss and the
gradient of every parameter:

- torch: ``di.value_and_gradient`` (AutoTorch) over ``dict(model.named_parameters())``
  with ``di.module_function``, vs three native steps that each give the loss and
  the gradients: ``loss.backward()`` (``zero_grad(set_to_none=True)`` first, the
  gradients read from ``.grad``), ``torch.autograd.grad(loss, params)`` (what the
  interface runs for parameters that already require grad), and
  ``torch.func.grad_and_value`` over ``functional_call`` at detached parameters;
- JAX: ``di.value_and_gradient`` (AutoJAX) over a dict of jax arrays, vs
  ``jax.jit(jax.value_and_grad(loss))``;
- TensorFlow: ``di.value_and_gradient`` (AutoTensorFlow) over a dict of
  ``tf.Variable`` (a Keras model's parameters), vs a ``tf.function`` that
  records the loss on a ``tf.GradientTape`` (which watches the variables) and
  returns it with ``tape.gradient``.

Recipes run interleaved in one process (one timed step each per round, the
order reversed every other round, the garbage collector paused while timing).
Each round gives the ratio of the interface's step to each native step; the
report is the median of those ratios and their interquartile range, which a
loaded machine disturbs less than a ratio of medians. Run
``python -m benchmarks.bench_models`` (``--rounds N``, ``--clock cpu`` to count
this process's CPU time rather than wall time, ``--only torch|jax|tensorflow``).
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import diffinterface as di

from .timing import interleaved, use_clock

SIZES = (64, 256, 256, 10)
BATCH = 512


def _interleaved(recipes, rounds):
    """Seconds of each recipe's step in each round, timed interleaved: ``{name: [s, ...]}``."""
    for step in recipes.values():  # warm up
        step()
        step()
    times = interleaved([(step, 1) for step in recipes.values()], rounds)
    return dict(zip(recipes, times))


def _quartiles(values):
    q1, median, q3 = statistics.quantiles(values, n=4)
    return q1, median, q3


def torch_recipes():
    import torch

    torch.manual_seed(0)
    layers = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.Tanh()]
    model = torch.nn.Sequential(*layers[:-1])
    inputs, targets = torch.randn(BATCH, SIZES[0]), torch.randn(BATCH, SIZES[-1])

    def mse(model, inputs, targets):
        return ((model(inputs) - targets) ** 2).mean()

    f, params = di.module_function(model, mse)
    backend = di.AutoTorch()
    contexts = (di.Constant(inputs), di.Constant(targets))
    prep = di.prepare_gradient(f, backend, params, *contexts)

    def diffinterface_step():
        return di.value_and_gradient(f, backend, params, *contexts, prep=prep)

    def backward_step():
        model.zero_grad(set_to_none=True)
        loss = mse(model, inputs, targets)
        loss.backward()
        return loss.detach(), [p.grad for p in model.parameters()]

    parameters = list(model.parameters())

    def autograd_grad_step():
        loss = mse(model, inputs, targets)
        return loss.detach(), torch.autograd.grad(loss, parameters)

    detached = {k: v.detach() for k, v in params.items()}

    def functional_loss(p):
        return ((torch.func.functional_call(model, p, (inputs,)) - targets) ** 2).mean()

    grad_and_value = torch.func.grad_and_value(functional_loss)

    def func_step():
        return grad_and_value(detached)

    (value, grads), (native_value, native_grads) = diffinterface_step(), backward_step()
    torch.testing.assert_close(value, native_value)
    for g, n in zip((grads[k] for k, _ in model.named_parameters()), native_grads):
        torch.testing.assert_close(g, n)
    model.zero_grad(set_to_none=True)
    return {
        "diffinterface": diffinterface_step,
        "loss.backward()": backward_step,
        "torch.autograd.grad": autograd_grad_step,
        "torch.func.grad_and_value": func_step,
    }


def _mlp_arrays():
    """The MLP's parameters (a dict of float32 numpy arrays), a batch of inputs and its targets."""
    rng = np.random.default_rng(0)
    params = {}
    for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        params[f"w{i}"] = (rng.normal(size=(a, b)) / np.sqrt(a)).astype(np.float32)
        params[f"b{i}"] = np.zeros(b, dtype=np.float32)
    inputs = rng.normal(size=(BATCH, SIZES[0])).astype(np.float32)
    targets = rng.normal(size=(BATCH, SIZES[-1])).astype(np.float32)
    return params, inputs, targets


def _mlp_loss(tanh, mean):
    """The MLP's mean squared error ``loss(params, inputs, targets)`` with a framework's tanh and mean."""
    n_layers = len(SIZES) - 1

    def loss(p, inputs, targets):
        h = inputs
        for i in range(n_layers):
            h = h @ p[f"w{i}"] + p[f"b{i}"]
            if i < n_layers - 1:
                h = tanh(h)
        return mean((h - targets) ** 2)

    return loss


def _agree(ours, native):
    """Both steps' ``(loss, gradients)`` agree (float32: to a few units in the last place)."""
    (value, grads), (native_value, native_grads) = ours, native
    np.testing.assert_allclose(value, native_value, rtol=1e-6)
    for k in grads:
        np.testing.assert_allclose(grads[k], native_grads[k], rtol=1e-5, atol=1e-7)


def jax_recipes():
    import jax
    import jax.numpy as jnp

    arrays, inputs, targets = _mlp_arrays()
    params = {k: jnp.asarray(v) for k, v in arrays.items()}
    inputs, targets = jnp.asarray(inputs), jnp.asarray(targets)
    loss = _mlp_loss(jnp.tanh, jnp.mean)

    backend = di.AutoJAX()
    contexts = (di.Constant(inputs), di.Constant(targets))
    prep = di.prepare_gradient(loss, backend, params, *contexts)
    native = jax.jit(jax.value_and_grad(loss))

    def diffinterface_step():
        value, grads = di.value_and_gradient(loss, backend, params, *contexts, prep=prep)
        return jax.block_until_ready((value, grads))

    def native_step():
        return jax.block_until_ready(native(params, inputs, targets))

    _agree(diffinterface_step(), native_step())
    return {"diffinterface": diffinterface_step, "jax.jit(value_and_grad)": native_step}


def tensorflow_recipes():
    import tensorflow as tf

    arrays, inputs, targets = _mlp_arrays()
    params = {k: tf.Variable(v) for k, v in arrays.items()}
    inputs, targets = tf.constant(inputs), tf.constant(targets)
    loss = _mlp_loss(tf.tanh, tf.reduce_mean)

    backend = di.AutoTensorFlow()
    contexts = (di.Constant(inputs), di.Constant(targets))
    prep = di.prepare_gradient(loss, backend, params, *contexts)

    @tf.function
    def native(inputs, targets):
        with tf.GradientTape() as tape:
            value = loss(params, inputs, targets)
        return value, tape.gradient(value, params)

    def diffinterface_step():
        return di.value_and_gradient(loss, backend, params, *contexts, prep=prep)

    def native_step():
        return native(inputs, targets)

    _agree(diffinterface_step(), native_step())
    return {"diffinterface": diffinterface_step, "tf.function(GradientTape)": native_step}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--only", choices=("torch", "jax", "tensorflow"))
    args = parser.parse_args(argv)
    use_clock(args.clock)
    print(
        f"MLP {SIZES}, batch {BATCH}, float32; {args.rounds} interleaved rounds, {args.clock} clock; "
        "ratio = diffinterface / native, median of the rounds' ratios [interquartile range]"
    )
    recipes = (("torch", torch_recipes), ("jax", jax_recipes), ("tensorflow", tensorflow_recipes))
    for framework, build in recipes:
        if args.only not in (None, framework):
            continue
        times = _interleaved(build(), args.rounds)
        ours = times["diffinterface"]
        for name, seconds in times.items():
            line = f"{framework:10s} {name:28s} {statistics.median(seconds) * 1e3:8.3f} ms"
            if name != "diffinterface":
                q1, median, q3 = _quartiles([a / b for a, b in zip(ours, seconds)])
                line += f"  ratio {median:.3f} [{q1:.3f}, {q3:.3f}]"
            print(line)


if __name__ == "__main__":
    main()
