"""Pytree x beyond the kit's scenarios: mismatch messages, torch modules, pytree Constants."""

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import registration


def loss(params):
    xp = di.array_namespace(params["w"])
    return xp.sum(params["w"] ** 2) + xp.sum(params["b"])


@pytest.fixture
def params():
    return {"w": np.ones((2, 2)), "b": np.zeros(3)}


def test_a_different_structure_names_the_leaf(di_backend, params):
    prep = di.prepare_gradient(loss, di_backend, params)
    with pytest.raises(
        di.PreparationMismatchError,
        match=r"x: MISMATCH, leaf \['b'\]: prepared .*\(3,\), given .*\(4,\)",
    ):
        di.gradient(loss, di_backend, {"w": params["w"], "b": np.zeros(4)}, prep=prep)
    with pytest.raises(di.PreparationMismatchError, match=r"leaf \['c'\] was not prepared"):
        di.gradient(loss, di_backend, {**params, "c": np.zeros(1)}, prep=prep)


def test_leaves_must_be_float_arrays_of_one_family(di_backend):
    with pytest.raises(TypeError, match=r"x\['n'\]: expected a real floating-point array.*int64"):
        di.gradient(loss, di_backend, {"w": np.ones(2), "n": np.arange(2)})
    with pytest.raises(
        TypeError, match=r"x\['s'\]: expected a float, an array or a pytree of arrays; got str"
    ):
        di.gradient(loss, di_backend, {"w": np.ones(2), "s": "text"})


def test_flatten_round_trip_keeps_dtypes():
    tree = {"a": np.ones(2, dtype=np.float32), "b": (np.zeros((2, 1)), 3.0)}
    flat, unravel = di.flatten(tree)
    assert flat.shape == (5,) and flat.dtype == np.float64
    back = unravel(flat)
    assert (
        back["a"].dtype == np.float32
        and back["b"][0].shape == (2, 1)
        and float(back["b"][1]) == 3.0
    )


def test_torch_module_gradient_leaves_grad_untouched():
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    generator = torch.Generator().manual_seed(0)
    inputs, targets = torch.randn(6, 3, generator=generator), torch.randn(6, 1, generator=generator)

    def mse(model, inputs, targets):
        return ((model(inputs) - targets) ** 2).mean()

    f, params = di.module_function(model, mse)
    value, grads = di.value_and_gradient(
        f, di.AutoTorch(), params, di.Constant(inputs), di.Constant(targets)
    )
    mse(model, inputs, targets).backward()
    for name, p in model.named_parameters():
        torch.testing.assert_close(grads[name], p.grad)
    model.zero_grad(set_to_none=True)
    di.gradient(f, di.AutoTorch(), params, di.Constant(inputs), di.Constant(targets))
    assert all(p.grad is None for p in model.parameters())


def test_constant_holding_a_dict_with_strings(di_backend):
    def f(x, options):
        xp = di.array_namespace(x)
        y = x * options["scale"]
        return xp.sum(y) if options["mode"] == "sum" else xp.sum(y**2)

    x = np.ones(3)
    scale = 0.0 if registration(di_backend).returns_zeros else 1.0  # declared by the zero backends
    prep = di.prepare_gradient(f, di_backend, x, di.Constant({"mode": "sum", "scale": 2.0}))
    g = di.gradient(f, di_backend, x, di.Constant({"mode": "sum", "scale": 3.0}), prep=prep)
    np.testing.assert_allclose(g, scale * 3.0 * np.ones(3), rtol=1e-5)
    g = di.gradient(f, di_backend, x, di.Constant({"mode": "square", "scale": 3.0}), prep=prep)
    np.testing.assert_allclose(g, scale * 18.0 * np.ones(3), rtol=1e-5)


def test_torch_module_function_at_other_tensors_swaps_them_in():
    import torch

    model = torch.nn.Linear(3, 1)
    inputs = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    f, params = di.module_function(model, lambda model, x: (model(x) ** 2).mean())
    doubled = {name: 2 * p.detach() for name, p in params.items()}
    g = di.gradient(f, di.AutoTorch(), doubled, di.Constant(inputs))
    out = inputs @ doubled["weight"].T + doubled["bias"]
    torch.testing.assert_close(g["bias"], (2 * out).mean(0))
    torch.testing.assert_close(g["weight"], (2 * out * inputs).mean(0, keepdim=True))


def test_torch_tensor_at_two_places_of_x_gets_partial_derivatives():
    import torch

    w = torch.ones(2, requires_grad=True)

    def f(x):
        return (x["a"] * 3.0).sum() + (x["b"] ** 2).sum()

    g = di.gradient(f, di.AutoTorch(), {"a": w, "b": w})
    torch.testing.assert_close(g["a"], torch.full((2,), 3.0))
    torch.testing.assert_close(g["b"], torch.full((2,), 2.0))
    assert w.grad is None


# -- pytree outputs y ----------------------------------------------------------------------------


def dict_output(x):
    xp = di.array_namespace(x)
    return {"a": x * 2.0, "b": xp.sum(x**2)}


def test_cotangents_of_another_shape_name_the_leaf(di_backend):
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(
        ValueError, match=r"cotangents\[1\]\['a'\]: expected an array of shape \(3,\).*got .*\(2,\)"
    ):
        di.pullback(
            dict_output,
            di_backend,
            x,
            ({"a": np.ones(3), "b": np.array(1.0)}, {"a": np.ones(2), "b": np.array(1.0)}),
        )
    with pytest.raises(
        ValueError, match=r"cotangents\[0\]: expected a tree shaped like the output y = f\(x\)"
    ):
        di.pullback(dict_output, di_backend, x, ({"a": np.ones(3)},))
    with pytest.raises(TypeError, match=r"cotangents\[0\]\['b'\]: expected dtype float64.*float32"):
        di.pullback(
            dict_output, di_backend, x, ({"a": np.ones(3), "b": np.array(1.0, dtype=np.float32)},)
        )


def test_cotangent_structure_is_part_of_the_preparation():
    x, backend = np.array([1.0, 2.0, 3.0]), di.AutoFiniteDiff()
    prep = di.prepare_pullback(dict_output, backend, x, ({"a": np.ones(3), "b": np.array(1.0)},))
    got = di.pullback(dict_output, backend, x, ({"a": np.zeros(3), "b": np.array(2.0)},), prep=prep)
    np.testing.assert_allclose(got[0], 4.0 * x, rtol=1e-6)
    with pytest.raises(
        di.PreparationMismatchError, match=r"tangents\[0\]: leaf \['c'\] was not prepared"
    ):
        di.pullback(
            dict_output,
            backend,
            x,
            ({"a": np.ones(3), "b": np.array(1.0), "c": np.ones(1)},),
            prep=prep,
        )


def test_two_argument_f_with_a_tree_y_is_refused():
    def f(y, x):
        y["a"][:] = x

    with pytest.raises(
        TypeError, match=r"y: a two-argument f\(y, x\) writes into one array y; got a pytree dict"
    ):
        di.jacobian(f, di.AutoFiniteDiff(), np.ones(2), y={"a": np.zeros(2)})


def test_array_outputs_get_the_adapters_own_methods():
    x, backend = np.ones(3), di.AutoFiniteDiff()
    for prepare, op, seeds in (
        (di.prepare_jacobian, "jacobian", ()),
        (di.prepare_pushforward, "pushforward", ((x,),)),
        (di.prepare_pullback, "pullback", ((x,),)),
    ):
        prep = prepare(lambda x: x**2, backend, x, *seeds)
        assert prep.ytree is None
        assert prep.methods[0] == getattr(prep.impl, op) and prep.methods[1] == getattr(
            prep.impl, "value_and_" + op
        )


def test_tree_output_out_buffers_get_each_leaf():
    x = np.array([1.0, 2.0])
    out = {"a": np.zeros((2, 2)), "b": np.zeros(2)}
    assert di.jacobian(dict_output, di.AutoFiniteDiff(), x, out=out) is out
    np.testing.assert_allclose(out["a"], 2 * np.eye(2), rtol=1e-6)
    np.testing.assert_allclose(out["b"], 2 * x, rtol=1e-6)


def test_torch_parameter_and_tensor_leaves_are_one_kind():
    import torch

    layer = torch.nn.Linear(2, 1)
    params = dict(layer.named_parameters())
    inputs = torch.ones(4, 2)

    def model_loss(p):
        return torch.func.functional_call(layer, p, (inputs,)).pow(2).sum()

    backend = di.AutoTorch()
    prep = di.prepare_gradient(model_loss, backend, params)
    g = di.gradient(model_loss, backend, params, prep=prep)
    updated = {k: p - 0.1 * g[k] for k, p in params.items()}  # plain Tensors now, no Parameter
    assert not isinstance(updated["weight"], torch.nn.Parameter)
    expected = di.gradient(model_loss, backend, {k: v.detach().clone() for k, v in updated.items()})
    got = di.gradient(model_loss, backend, updated, prep=prep)
    for key in params:
        torch.testing.assert_close(got[key], expected[key])
    # tangents built with randn_like(p) from the Parameters, for an hvp at the Parameters
    tangent = {k: torch.randn_like(p) for k, p in params.items()}
    (hv,) = di.hvp(model_loss, backend, params, (tangent,))
    assert set(hv) == set(params)
