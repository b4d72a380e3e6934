"""Keras models as functions of their trainable variables: a model and a loss as ``(f, params)``.

The TensorFlow counterpart of :func:`diffinterface.module_function` (torch
modules). Importing this module imports neither Keras nor TensorFlow; Keras
is imported at the first call.
"""

from __future__ import annotations

import importlib


def keras_function(model, loss):
    """``(f, params)`` for differentiating ``loss`` with respect to a Keras model's trainable variables.

    ``f`` runs the model through Keras's own ``model.stateless_call`` with the
    variables given to it, so the model's variables are never modified, and
    its non-trainable state (batch-norm statistics...) is read, not updated.

    Parameters
    ----------
    model : keras.Model or keras.Layer
        A built model (call it once, or give it an ``Input``, so that its
        variables exist), on Keras's TensorFlow backend.
    loss : callable
        ``loss(model, *contexts) -> scalar``, where ``model(*inputs)`` runs
        the model with the variables being differentiated. Or a
        ``keras.losses.Loss`` (``keras.losses.MeanSquaredError()``), whose
        signature is ``(y_true, y_pred)``: then the contexts are the model's
        inputs followed by the target, and
        ``f(params, *inputs, target) = loss(target, model(*inputs))``.

    Returns
    -------
    f : callable
        ``f(params, *contexts) = loss(model, *contexts)``: pass it to any
        operator of ``di.AutoTensorFlow()`` with ``params`` as ``x`` and the
        batch as ``di.Constant`` contexts.
    params : dict
        The model's trainable variables by path (``"model/dense/kernel"``), as its
        own ``tf.Variable`` storage (``assign_sub`` to train them).

    Examples
    --------
    >>> import numpy as np, keras, diffinterface as di
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="dense")], name="model")
    >>> f, params = di.keras_function(model, keras.losses.MeanSquaredError())
    >>> inputs, target = np.ones((4, 3), "float32"), np.zeros((4, 2), "float32")
    >>> g = di.gradient(f, di.AutoTensorFlow(), params, di.Constant(inputs), di.Constant(target))
    >>> sorted(g), tuple(g["model/dense/kernel"].shape)
    (['model/dense/bias', 'model/dense/kernel'], (3, 2))
    """
    if not callable(loss):
        raise TypeError(
            f"loss: expected a callable loss(model, *contexts) or a keras.losses.Loss; got "
            f"{type(loss).__name__}"
        )
    if not callable(getattr(model, "stateless_call", None)) or not hasattr(
        model, "trainable_variables"
    ):
        raise TypeError(
            f"model: expected a Keras model or layer (keras.Model, keras.Layer); got {type(model).__name__}"
            + (
                ". For a torch.nn.Module, use di.module_function"
                if hasattr(model, "named_parameters")
                else ""
            )
        )
    from .numpy_rules import not_promoting  # imports TensorFlow, which installs Keras

    keras = importlib.import_module("keras")  # Keras ships no type information

    trainable = list(model.trainable_variables)
    if not trainable:
        raise ValueError(
            f"model: expected a built Keras model with trainable variables; {type(model).__name__} has none. Build "
            "it first (call it once on a batch, or start a Sequential with keras.Input(shape)), and pass a "
            "keras.losses.Loss second, as the loss"
        )
    paths = [variable.path for variable in trainable]
    if isinstance(loss, keras.losses.Loss):
        loss = _applied_to_outputs(loss)

    def f(params, *contexts):
        values = [params[path] for path in paths]
        # read at each call: a training loop may have assigned new statistics since
        state = [variable.value for variable in model.non_trainable_variables]

        def run(*inputs, **options):
            return model.stateless_call(values, state, *inputs, **options)[0]

        with (
            not_promoting()
        ):  # Keras casts for itself, and its layers fail under TensorFlow's "all" promotion
            return loss(run, *contexts)

    return f, {path: variable.value for path, variable in zip(paths, trainable)}


def _applied_to_outputs(criterion):
    """``loss(model, *inputs, target) = criterion(target, model(*inputs))`` (Keras's losses take y_true first)."""

    def loss(model, *contexts):
        if len(contexts) < 2:
            raise _no_target(criterion, contexts)
        *inputs, target = contexts
        return criterion(target, model(*inputs))

    return loss


def _no_target(criterion, contexts):
    plural = "s" if len(contexts) != 1 else ""
    return TypeError(
        f"loss: the Keras loss {type(criterion).__name__} takes (y_true, y_pred): pass the model's inputs and then "
        f"the target as contexts, f(params, di.Constant(inputs), di.Constant(target)); got {len(contexts)} "
        f"context{plural}"
    )
