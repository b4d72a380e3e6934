"""AutoTensorFlow: every operator on numpy and tf inputs, float32 and float64, both modes; traces reused."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing import CountingFunction
from diffinterface.testing.aux_scenarios import aux_cases

import tensorflow as tf

BACKENDS = [
    di.AutoTensorFlow(),
    di.AutoTensorFlow(mode="forward"),
    di.AutoTensorFlow(mode="reverse"),
]
IDS = ["default", "forward", "reverse"]
X = np.array([0.3, -1.2, 0.7])


def _scalar(x):
    xp = di.array_namespace(x)
    return xp.sum(xp.sin(x) * x)


def _vector(x):
    xp = di.array_namespace(x)
    return xp.concat([xp.sin(x), x[:2] * x[1:]])


def _gradient(x):
    return np.sin(x) + x * np.cos(x)


def _hessian(x):
    return np.diag(2 * np.cos(x) - x * np.sin(x))


def _jacobian(x):
    top = np.diag(np.cos(x))
    bottom = np.array([[x[1], x[0], 0.0], [0.0, x[2], x[1]]])
    return np.concatenate([top, bottom])


def _in(family, a, dtype):
    a = np.asarray(a, dtype=dtype)
    return tf.constant(a) if family == "tensorflow" else a


def _check(result, expected, family, dtype):
    if family == "tensorflow":
        assert isinstance(result, tf.Tensor), type(result)
        values = result.numpy()
    else:
        assert isinstance(result, np.ndarray), type(result)
        values = result
    assert values.dtype == np.dtype(dtype), (values.dtype, dtype)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(values, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("family", ["numpy", "tensorflow"])
@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_every_operator_gives_the_analytic_result_in_x_family_and_dtype(backend, family, dtype):
    x = _in(family, X, dtype)
    t = _in(family, [1.0, 0.5, -2.0], dtype)
    c = _in(family, [1.0, -1.0, 0.5, 2.0, 0.25], dtype)
    _check(di.gradient(_scalar, backend, x), _gradient(X), family, dtype)
    _check(di.jacobian(_vector, backend, x), _jacobian(X), family, dtype)
    _check(
        di.pushforward(_vector, backend, x, (t,))[0], _jacobian(X) @ np.asarray(t), family, dtype
    )
    (p1, p2) = di.pullback(_vector, backend, x, (c, c * 2))
    _check(p1, np.asarray(c) @ _jacobian(X), family, dtype)
    _check(p2, 2 * np.asarray(c) @ _jacobian(X), family, dtype)
    _check(di.hessian(_scalar, backend, x), _hessian(X), family, dtype)
    _check(di.hvp(_scalar, backend, x, (t,))[0], _hessian(X) @ np.asarray(t), family, dtype)
    s = _in(family, 0.7, dtype)
    _check(
        di.derivative(lambda z: di.array_namespace(z).sin(z) * z, backend, s),
        np.sin(0.7) + 0.7 * np.cos(0.7),
        family,
        dtype,
    )
    _check(
        di.second_derivative(lambda z: di.array_namespace(z).sin(z) * z, backend, s),
        2 * np.cos(0.7) - 0.7 * np.sin(0.7),
        family,
        dtype,
    )


OPERATORS = {
    "gradient": (di.prepare_gradient, di.gradient, _scalar, ()),
    "jacobian": (di.prepare_jacobian, di.jacobian, _vector, ()),
    "hessian": (di.prepare_hessian, di.hessian, _scalar, ()),
    "hvp": (di.prepare_hvp, di.hvp, _scalar, ((np.ones(3), np.arange(3.0)),)),
    "pushforward": (
        di.prepare_pushforward,
        di.pushforward,
        _vector,
        ((np.ones(3), np.arange(3.0)),),
    ),
    "pullback": (di.prepare_pullback, di.pullback, _vector, ((np.ones(5), np.arange(5.0)),)),
}


@pytest.mark.parametrize("family", ["numpy", "tensorflow"])
@pytest.mark.parametrize("operator", list(OPERATORS))
def test_prepared_calls_reuse_the_trace_and_another_shape_is_refused(operator, family):
    prepare, call, f, seeds = OPERATORS[operator]
    backend = di.AutoTensorFlow()
    convert = (lambda a: tf.constant(a)) if family == "tensorflow" else (lambda a: a)
    seeds = tuple(tuple(convert(s) for s in batch) for batch in seeds)
    # f counting its Python evaluations: a traced function runs f's Python code only while traced
    counted = CountingFunction(f)
    prep = prepare(counted, backend, convert(X), *seeds)
    traced = counted.count
    assert traced >= 1
    first = call(counted, backend, convert(X), *seeds, prep=prep)
    second = call(counted, backend, convert(X * 2.0), *seeds, prep=prep)
    # f's Python code did not run again: the calls reused the trace made at preparation
    assert counted.count == traced
    expected = call(f, backend, convert(X * 2.0), *seeds)
    np.testing.assert_allclose(
        np.asarray(second if not isinstance(second, tuple) else second[0]),
        np.asarray(expected if not isinstance(expected, tuple) else expected[0]),
    )
    assert not np.allclose(
        np.asarray(first if not isinstance(first, tuple) else first[0]),
        np.asarray(second if not isinstance(second, tuple) else second[0]),
    )
    with pytest.raises(di.PreparationMismatchError):
        call(counted, backend, convert(np.ones(4)), *seeds, prep=prep)
    assert counted.count == traced


def test_contexts_reuse_the_trace_at_new_values():
    def f(x, w):
        return di.array_namespace(x).sum(x**2 * w)

    backend = di.AutoTensorFlow()
    g = CountingFunction(f)
    prep = di.prepare_gradient(g, backend, X, di.Constant(np.ones(3)))
    traced = g.count
    result = di.gradient(g, backend, X, di.Constant(np.full(3, 3.0)), prep=prep)
    np.testing.assert_allclose(result, 6 * X)
    assert g.count == traced


def test_a_variable_x_and_a_variable_buffer():
    x = tf.Variable(X)
    out = tf.Variable(np.zeros(3))
    result = di.gradient(_scalar, di.AutoTensorFlow(), x, out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), _gradient(X))
    np.testing.assert_allclose(x.numpy(), X)  # x untouched
    with pytest.raises(ValueError, match="tf.Variable"):
        di.gradient(_scalar, di.AutoTensorFlow(), x, out=tf.zeros(3, dtype=tf.float64))


def test_a_gradient_over_a_dict_of_variables_reuses_its_trace_for_variables_and_tensors():
    def loss(p, inputs):
        return tf.reduce_sum(tf.tanh(inputs @ p["w"] + p["b"]) ** 2)

    rng = np.random.default_rng(0)
    inputs = tf.constant(rng.normal(size=(4, 3)), tf.float32)
    params = {
        "w": tf.Variable(rng.normal(size=(3, 2)), dtype=tf.float32),
        "b": tf.Variable(tf.zeros(2)),
    }

    def native(p):
        with tf.GradientTape() as tape:
            tape.watch(p)
            value = loss(p, inputs)
        return value, tape.gradient(value, p)

    backend, counted = di.AutoTensorFlow(), CountingFunction(loss)
    prep = di.prepare_gradient(counted, backend, params, di.Constant(inputs))
    traced = counted.count
    doubled = {k: 2.0 * tf.convert_to_tensor(v) for k, v in params.items()}
    for p in (params, params, doubled):  # tensors where variables were prepared: one more trace
        value, g = di.value_and_gradient(counted, backend, p, di.Constant(inputs), prep=prep)
        expected_value, expected = native(p)
        np.testing.assert_allclose(value.numpy(), expected_value.numpy(), rtol=1e-6)
        for k in p:
            assert g[k].dtype == tf.float32
            np.testing.assert_allclose(g[k].numpy(), expected[k].numpy(), rtol=1e-5, atol=1e-6)
    assert counted.count == traced + 1
    with pytest.raises(di.PreparationMismatchError):
        wider = {"w": tf.Variable(tf.zeros((3, 3))), "b": tf.Variable(tf.zeros(3))}
        di.gradient(counted, backend, wider, di.Constant(inputs), prep=prep)
    np.testing.assert_array_equal(params["b"].numpy(), np.zeros(2))  # x untouched


def test_one_variable_at_two_places_of_x_gets_its_partial_derivative_at_each():
    v = tf.Variable([1.0, 2.0])

    def f(t):
        return tf.reduce_sum(t[0] * t[1] ** 2)

    backend = di.AutoTensorFlow()
    for prepared_at in ((v, v), (v, tf.Variable([3.0, 4.0]))):
        prep = di.prepare_gradient(f, backend, prepared_at)
        first, second = di.gradient(f, backend, (v, v), prep=prep)
        np.testing.assert_allclose(first.numpy(), [1.0, 4.0])  # d/dt0 t0 t1^2 = t1^2
        np.testing.assert_allclose(second.numpy(), [2.0, 8.0])  # d/dt1 = 2 t0 t1


def test_a_branch_on_values_is_refused_when_traced_and_taken_eagerly():
    def branchy(x):
        xp = di.array_namespace(x)
        return xp.sum(x**2) if x[0] > 0 else xp.sum(x**3)

    x = np.array([1.0, 2.0])
    with pytest.raises(di.TracedArrayError, match=r"AutoTensorFlow\(jit=False\)"):
        di.prepare_gradient(branchy, di.AutoTensorFlow(), x)
    eager = di.AutoTensorFlow(jit=False)
    np.testing.assert_allclose(
        di.gradient(branchy, eager, x, prep=di.prepare_gradient(branchy, eager, x)), 2 * x
    )


def test_mixed_float32_and_float64_promote_as_numpy_does():
    def f(x):
        xp = di.array_namespace(x)
        return xp.sum(x**2 * xp.asarray(np.array([1.0, 2.0, 3.0]), dtype=xp.float64))

    x = X.astype(np.float32)
    result = di.gradient(f, di.AutoTensorFlow(), x)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, 2 * x * np.array([1.0, 2.0, 3.0]), rtol=1e-5)


def test_import_diffinterface_imports_no_tensorflow_and_families_detect_tensors():
    code = (
        "import sys, diffinterface; print('tensorflow' in sys.modules); import tensorflow as tf; "
        "from diffinterface.families import family_of; print(family_of(tf.ones(2)), family_of(tf.Variable(1.0)))"
    )
    lines = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert lines == ["False", "tensorflow", "tensorflow"]


# -- across frameworks ---------------------------------------------------------------------------


def _sum_sin_times(z):
    xp = di.array_namespace(z)
    return xp.sum(xp.sin(z) * z)


HESSIAN = _hessian(X)


@pytest.mark.parametrize(
    "pair",
    [
        ("tensorflow-reverse", "jax"),
        ("tensorflow-reverse", "torch"),
        ("torch", "tensorflow"),
        ("jax", "tensorflow"),
        ("tensorflow-reverse", "finitediff"),
        ("finitediff", "tensorflow"),
    ],
    ids="-over-".join,
)
def test_second_order_with_tensorflow_as_outer_and_as_inner(pair):
    make = {
        "tensorflow": di.AutoTensorFlow,
        "tensorflow-reverse": lambda: di.AutoTensorFlow(mode="reverse"),
        "jax": di.AutoJAX,
        "torch": di.AutoTorch,
        "finitediff": di.AutoFiniteDiff,
    }
    backend = di.SecondOrder(make[pair[0]](), make[pair[1]]())
    tolerance = 1e-5 if "finitediff" in pair else 1e-10
    np.testing.assert_allclose(
        di.hessian(_sum_sin_times, backend, X), HESSIAN, rtol=tolerance, atol=tolerance
    )


def _weighted_sin(z, w):
    xp = di.array_namespace(z)
    return xp.sum(xp.sin(z) * w)


@pytest.mark.parametrize("inner", ["jax", "torch", "autograd", "finitediff"])
def test_a_constant_reaches_the_inner_from_inside_tf_function(inner):
    # inside tf.function a Constant is a symbolic tensor: it reaches the inner through tf.py_function
    make = {
        "jax": di.AutoJAX,
        "torch": di.AutoTorch,
        "autograd": di.AutoAutograd,
        "finitediff": di.AutoFiniteDiff,
    }
    w = np.array([1.0, 2.0, 3.0])
    tolerance = 1e-5 if inner == "finitediff" else 1e-10
    hessian = di.hessian(
        _weighted_sin, di.SecondOrder(di.AutoTensorFlow(), make[inner]()), X, di.Constant(w)
    )
    np.testing.assert_allclose(hessian, np.diag(-np.sin(X) * w), rtol=tolerance, atol=tolerance)
    g = di.DifferentiateWith(_weighted_sin, make[inner]())

    @tf.function
    def gradient(z, w):
        with tf.GradientTape() as tape:
            tape.watch(z)
            y = g(z, di.Constant(w))
        return tape.gradient(y, z)

    np.testing.assert_allclose(
        gradient(tf.constant(X), tf.constant(w)).numpy(), np.cos(X) * w, rtol=tolerance
    )


@pytest.mark.parametrize("outer", ["jax", "torch", "autograd", "finitediff"])
def test_a_constant_reaches_a_tensorflow_inner_from_every_outer(outer):
    # torch's outer runs torch.func transforms: a Constant's values are reachable only with them disabled
    make = {
        "jax": di.AutoJAX,
        "torch": di.AutoTorch,
        "autograd": di.AutoAutograd,
        "finitediff": di.AutoFiniteDiff,
    }
    w = np.array([1.0, 2.0, 3.0])
    tolerance = 1e-5 if outer == "finitediff" else 1e-10
    hessian = di.hessian(
        _weighted_sin, di.SecondOrder(make[outer](), di.AutoTensorFlow()), X, di.Constant(w)
    )
    np.testing.assert_allclose(hessian, np.diag(-np.sin(X) * w), rtol=tolerance, atol=tolerance)


def test_a_torch_function_inside_a_gradient_tape_inside_and_outside_tf_function():
    import torch

    g = di.DifferentiateWith(lambda z: torch.sum(torch.sin(z) * z), di.AutoTorch())
    x = tf.constant(X)

    def gradient_of_twice(z):
        with tf.GradientTape() as tape:
            tape.watch(z)
            y = 2.0 * g(z)
        return tape.gradient(y, z)

    expected = 2 * _gradient(X)
    np.testing.assert_allclose(gradient_of_twice(x).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(tf.function(gradient_of_twice)(x).numpy(), expected, rtol=1e-12)
    # second order by nested tapes: the bridge's pullback is differentiable again (the inner's hvp)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = g(x)
        gradient = inner.gradient(y, x)
    np.testing.assert_allclose(
        outer.jacobian(gradient, x, experimental_use_pfor=False).numpy(), HESSIAN, rtol=1e-10
    )


def test_a_tensorflow_function_inside_jax_jit_grad_and_torch_autograd():
    import jax
    import torch

    h = di.DifferentiateWith(lambda z: tf.reduce_sum(tf.sin(z) * z), di.AutoTensorFlow())
    result = jax.jit(jax.grad(lambda z: 2.0 * h(z)))(jax.numpy.asarray(X, dtype="float32"))
    np.testing.assert_allclose(np.asarray(result), 2 * _gradient(X), rtol=1e-5)
    xt = torch.tensor(X, requires_grad=True)
    (3.0 * h(xt)).backward()
    np.testing.assert_allclose(xt.grad.numpy(), 3 * _gradient(X), rtol=1e-12)


def _bridged_sin_x_x():
    def u(x):
        xp = di.array_namespace(x)
        return xp.sin(x) * x

    return di.DifferentiateWith(u, di.AutoAutograd())


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "eager"])
@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_every_operator_through_a_differentiate_with_inside_tensorflow(backend, jit):
    # TensorFlow's forward mode does not see custom gradients: each operator must still give the right values
    # (reverse mode where a bridged function is met), never zeros
    backend = di.AutoTensorFlow(mode=backend.mode, jit=jit)
    g = _bridged_sin_x_x()

    def loss(x):
        xp = di.array_namespace(x)
        return xp.sum(xp.cos(g(x)))

    x, t, s = X, np.array([1.0, -2.0, 0.5]), np.array(0.4)
    gx, dg, d2g = np.sin(x) * x, np.cos(x) * x + np.sin(x), 2 * np.cos(x) - np.sin(x) * x
    hessian = np.diag(-np.cos(gx) * dg**2 - np.sin(gx) * d2g)
    expected = {
        "gradient": (lambda: di.gradient(loss, backend, x), -np.sin(gx) * dg),
        "hessian": (lambda: di.hessian(loss, backend, x), hessian),
        "hvp": (lambda: di.hvp(loss, backend, x, (t,))[0], hessian @ t),
        "jacobian": (lambda: di.jacobian(g, backend, x), np.diag(dg)),
        "pushforward": (lambda: di.pushforward(g, backend, x, (t,))[0], dg * t),
        "pullback": (lambda: di.pullback(g, backend, x, (t,))[0], dg * t),
        "derivative": (lambda: di.derivative(g, backend, s), np.cos(s) * s + np.sin(s)),
        "second_derivative": (
            lambda: di.second_derivative(g, backend, s),
            2 * np.cos(s) - np.sin(s) * s,
        ),
    }
    for name, (call, value) in expected.items():
        np.testing.assert_allclose(call(), value, rtol=1e-10, atol=1e-12, err_msg=name)


def _keras_model():
    import keras

    keras.utils.set_random_seed(0)
    return keras.Sequential(
        [
            keras.Input((3,)),
            keras.layers.Dense(4, activation="tanh", name="hidden"),
            keras.layers.Dense(1, name="out"),
        ],
        name="net",
    )


def test_a_keras_model_differentiates_with_respect_to_its_trainable_variables_untouched():
    import keras

    model = _keras_model()
    inputs = np.random.default_rng(0).normal(size=(5, 3)).astype("float32")
    target = np.ones((5, 1), "float32")
    before = [v.numpy().copy() for v in model.trainable_variables]
    with tf.GradientTape() as tape:  # the native recipe
        native_loss = keras.losses.MeanSquaredError()(target, model(inputs))
    native = tape.gradient(native_loss, model.trainable_variables)

    f, params = di.keras_function(model, keras.losses.MeanSquaredError())
    assert list(params) == [
        "net/hidden/kernel",
        "net/hidden/bias",
        "net/out/kernel",
        "net/out/bias",
    ]
    value, g = di.value_and_gradient(
        f, di.AutoTensorFlow(), params, di.Constant(inputs), di.Constant(target)
    )
    np.testing.assert_allclose(value.numpy(), native_loss.numpy(), rtol=1e-6)
    for expected, path in zip(native, params):
        assert g[path].dtype == tf.float32
        np.testing.assert_allclose(
            g[path].numpy(), expected.numpy(), rtol=1e-5, atol=1e-7, err_msg=path
        )
    for saved, variable in zip(before, model.trainable_variables):
        np.testing.assert_array_equal(variable.numpy(), saved)

    # the loss written as a function of the model, prepared once and called at other weights
    def loss(run, x):
        return tf.reduce_sum(run(x) ** 2)

    f2, params2 = di.keras_function(model, loss)
    prep = di.prepare_gradient(f2, di.AutoTensorFlow(), params2, di.Constant(inputs))
    doubled = {path: 2.0 * tf.convert_to_tensor(v) for path, v in params2.items()}
    g2 = di.gradient(f2, di.AutoTensorFlow(), doubled, di.Constant(inputs), prep=prep)
    for variable, value_ in zip(model.trainable_variables, doubled.values()):
        variable.assign(value_)
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(model(inputs) ** 2)
    native2 = tape.gradient(out, model.trainable_variables)
    for expected, path in zip(native2, params2):
        np.testing.assert_allclose(
            g2[path].numpy(), expected.numpy(), rtol=1e-5, atol=1e-6, err_msg=path
        )


def test_keras_function_refuses_what_is_not_a_built_keras_model_naming_the_argument():
    import keras
    import torch

    with pytest.raises(
        TypeError,
        match=r"model: expected a Keras model.*got Linear\. For a torch.nn.Module, use "
        r"di.module_function",
    ):
        di.keras_function(torch.nn.Linear(2, 1), lambda model, x: model(x))
    with pytest.raises(
        ValueError, match=r"model: expected a built Keras model with trainable variables"
    ):
        di.keras_function(
            keras.Sequential([keras.layers.Dense(2)]), keras.losses.MeanSquaredError()
        )
    with pytest.raises(TypeError, match=r"loss: expected a callable"):
        di.keras_function(_keras_model(), "mse")
    f, params = di.keras_function(_keras_model(), keras.losses.MeanSquaredError())
    with pytest.raises(
        TypeError, match=r"loss: the Keras loss MeanSquaredError takes \(y_true, y_pred\)"
    ):
        f(params, np.ones((2, 3), "float32"))


_EAGER = {
    "eager": di.AutoTensorFlow(jit=False),
    "eager-forward": di.AutoTensorFlow(mode="forward", jit=False),
    "eager-reverse": di.AutoTensorFlow(mode="reverse", jit=False),
}


@pytest.mark.parametrize("case", aux_cases(_EAGER), ids=lambda c: c.id)
def test_eager_calls_take_aux_from_their_own_evaluation_at_x(case):
    # the kit's aux case: results as without aux, aux at x, and f evaluated no more often than without aux
    # (AutoTensorFlow declares no aux_evaluated_again; the traced backends run the same case in the kit)
    case.check()


@pytest.mark.parametrize("batch_size", [None, 1, 2], ids=["whole", "one-seed-loop", "batches"])
@pytest.mark.parametrize("family", ["numpy", "tensorflow"])
def test_traced_calls_return_aux_computed_by_the_traced_function(family, batch_size):
    # aux's tensors are outputs of the one traced function, batched sweeps (loops over seeds) included: a prepared
    # call evaluates f zero times and returns the aux at its own x; non-tensor leaves are the objects f returned
    label = "at x"

    def f(x):
        xp = di.array_namespace(x)
        return xp.sum(xp.sin(x) * x), {"label": label, "norm": (xp.sum(x * x), 7), "twice": 2 * x}

    counted = CountingFunction(f)
    backend = di.AutoTensorFlow(batch_size=batch_size)
    x, x2 = _in(family, X, "float64"), _in(family, 2 * X, "float64")
    di.prepare_hessian(lambda x: counted(x)[0], backend, x)
    without_aux = counted.take()
    prep = di.prepare_hessian(counted, backend, x, has_aux=True)
    assert (
        counted.take() == without_aux <= 2
    )  # the trace (a loop over seeds traces f twice), no eager evaluation
    (_value, aux), _gradient, hessian = di.value_gradient_and_hessian(
        counted, backend, x2, prep=prep, has_aux=True
    )
    assert counted.take() == 0
    np.testing.assert_allclose(np.asarray(hessian), _hessian(2 * X), rtol=1e-12)
    assert aux["label"] is label and aux["norm"][1] == 7
    np.testing.assert_allclose(np.asarray(aux["norm"][0]), np.sum((2 * X) ** 2), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(aux["twice"]), 4 * X, rtol=1e-12)


@pytest.mark.parametrize("operator", ["gradient", "hvp", "hessian"])
def test_a_scalar_operator_refuses_an_array_output_learned_by_its_trace(operator):
    # the preparation learns f's output from its trace (no eager evaluation): an array output is still refused,
    # for hvp and hessian too (TensorFlow would differentiate the sum of the entries)
    counted = CountingFunction(lambda x: x**2)
    seeds = ((X,),) if operator == "hvp" else ()
    with pytest.raises(
        ValueError, match=f"{operator} needs f to return a scalar; it returns shape \\(3,\\)"
    ):
        getattr(di, "prepare_" + operator)(counted, di.AutoTensorFlow(), X, *seeds)
    scalar = CountingFunction(_scalar)
    getattr(di, "prepare_" + operator)(scalar, di.AutoTensorFlow(), X, *seeds)
    assert scalar.take() == 1  # the trace alone


@pytest.mark.parametrize(
    "name", ["numpy-float32-scalar", "float32-inside", "float32-tensor", "float64-only"]
)
def test_a_float64_trace_under_tensorflows_own_rules_computes_what_all_promotion_does(name):
    # a float64 x is traced under TensorFlow's own dtype rules only where they give what "all" promotion gives
    # (eager calls always promote): a float32 tensor anywhere in the graph, or a refused mix, traces again
    f = {
        "numpy-float32-scalar": lambda x: tf.reduce_sum(x * np.float32(0.1) * x),
        "float32-inside": lambda x: tf.reduce_sum(
            tf.cast(x, tf.float32) * np.float64(0.1) * tf.cast(x, tf.float32)
        ),
        "float32-tensor": lambda x: tf.reduce_sum(x * tf.constant(0.1, tf.float32) * x),
        "float64-only": lambda x: tf.reduce_sum(x * 0.1 * x),
    }[name]
    x = tf.constant(X)
    traced = di.value_and_gradient(
        f, di.AutoTensorFlow(), x, prep=di.prepare_gradient(f, di.AutoTensorFlow(), x)
    )
    eager = di.value_and_gradient(f, di.AutoTensorFlow(jit=False), x)
    for got, wanted in zip(traced, eager):
        assert got.dtype == wanted.dtype, (got.dtype, wanted.dtype)
        np.testing.assert_array_equal(got.numpy(), wanted.numpy())


def test_a_float64_trace_keeps_a_namespace_constant_in_float64():
    # under "all" promotion tf.experimental.numpy makes xp.asarray(0.1) float32 (0.10000000149...); a float64 x
    # traced under TensorFlow's own rules keeps it float64, as numpy does
    def f(x):
        xp = di.array_namespace(x)
        return xp.sum(x * xp.asarray(0.1))

    x = tf.constant(X)
    gradient = di.gradient(
        f, di.AutoTensorFlow(), x, prep=di.prepare_gradient(f, di.AutoTensorFlow(), x)
    )
    np.testing.assert_array_equal(gradient.numpy(), np.full(3, 0.1))
