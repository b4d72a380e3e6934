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
    with pytest.raises(di.PreparationMismatchError, match=r"x: MISMATCH, leaf \['b'\]: prepared .*\(3,\), given .*\(4,\)"):
        di.gradient(loss, di_backend, {"w": params["w"], "b": np.zeros(4)}, prep=prep)
    with pytest.raises(di.PreparationMismatchError, match=r"leaf \['c'\] was not prepared"):
        di.gradient(loss, di_backend, {**params, "c": np.zeros(1)}, prep=prep)


def test_leaves_must_be_float_arrays_of_one_family(di_backend):
    with pytest.raises(TypeError, match=r"x\['n'\]: expected a real floating-point array.*int64"):
        di.gradient(loss, di_backend, {"w": np.ones(2), "n": np.arange(2)})
    with pytest.raises(TypeError, match=r"x\['s'\]: expected a float, an array or a pytree of arrays; got str"):
        di.gradient(loss, di_backend, {"w": np.ones(2), "s": "text"})


def test_flatten_round_trip_keeps_dtypes():
    tree = {"a": np.ones(2, dtype=np.float32), "b": (np.zeros((2, 1)), 3.0)}
    flat, unravel = di.flatten(tree)
    assert flat.shape == (5,) and flat.dtype == np.float64
    back = unravel(flat)
    assert back["a"].dtype == np.float32 and back["b"][0].shape == (2, 1) and float(back["b"][1]) == 3.0


def test_torch_module_gradient_leaves_grad_untouched():
    import torch
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    inputs, targets = torch.randn(6, 3), torch.randn(6, 1)

    def mse(model, inputs, targets):
        return ((model(inputs) - targets) ** 2).mean()

    f, params = di.module_function(model, mse)
    value, grads = di.value_and_gradient(f, di.AutoTorch(), params, di.Constant(inputs), di.Constant(targets))
    mse(model, inputs, targets).backward()
    for name, p in model.named_parameters():
        torch.testing.assert_close(grads[name], p.grad)
    model.zero_grad(set_to_none=True)
    di.gradient(f, di.AutoTorch(), params, di.Constant(inputs), di.Constant(targets))
    assert all(p.grad is None for p in model.parameters())


def test_constant_holding_a_dict_with_strings(di_backend):
    def f(x, options):
        y = x * options["scale"]
        return (y.sum() if options["mode"] == "sum" else (y ** 2).sum())

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
    inputs = torch.randn(5, 3)
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
