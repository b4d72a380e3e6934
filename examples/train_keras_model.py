"""Train a Keras model with gradients from diffinterface, and check them against Keras's tape.

Run: python examples/train_keras_model.py

``di.keras_function(model, loss)`` gives ``(f, params)``: ``params`` is a dict
of the model's trainable variables by path, ``f(params, inputs, targets)`` runs
the model through Keras's ``stateless_call`` with the values it is given. The
gradient is prepared once (one ``tf.function``) and called at every step; the
update is ours, applied to the model's own variables, so the model itself is
trained and is then called as usual. Keras runs on its TensorFlow backend (its
default; ``KERAS_BACKEND=tensorflow``).
"""

import keras
import numpy as np
import tensorflow as tf

import diffinterface as di


def main():
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input((3,)),
            keras.layers.Dense(16, activation="tanh", name="hidden"),
            keras.layers.Dense(1, name="out"),
        ],
        name="net",
    )
    loss = keras.losses.MeanSquaredError()
    f, params = di.keras_function(model, loss)
    print("parameters:", ", ".join(f"{path} {tuple(v.shape)}" for path, v in params.items()))

    rng = np.random.default_rng(0)
    inputs = rng.normal(size=(64, 3)).astype("float32")
    targets = np.sin(inputs.sum(axis=1, keepdims=True)).astype("float32")
    data = (di.Constant(inputs), di.Constant(targets))
    backend = di.AutoTensorFlow()
    prep = di.prepare_gradient(f, backend, params, *data)

    # the first gradient against the one Keras's own tape gives
    with tf.GradientTape() as tape:
        native_loss = loss(targets, model(inputs))
    native = tape.gradient(native_loss, model.trainable_variables)
    grad = di.gradient(f, backend, params, *data, prep=prep)
    same = all(
        np.allclose(grad[v.path], g, rtol=1e-5, atol=1e-7)
        for v, g in zip(model.trainable_variables, native)
    )
    print(f"gradient equals Keras's GradientTape: {same}")

    for step in range(201):
        value, grad = di.value_and_gradient(f, backend, params, *data, prep=prep)
        if step % 50 == 0:
            print(f"step {step:3d}  loss {float(value):.5f}")
        for path, variable in params.items():
            variable.assign_sub(0.2 * grad[path])

    trained = float(loss(targets, model(inputs)))  # the model itself, called as usual
    print(f"the trained model's own loss: {trained:.5f}")
    if not same or trained > 0.1:
        raise SystemExit(
            "MISMATCH: the gradient differs from Keras's, or training did not converge"
        )
    print("Keras model trained with di.value_and_gradient, its variables updated in place")


if __name__ == "__main__":
    main()
