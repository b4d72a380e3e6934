"""Constants of another array family than x's (core/foreign.py): what f sees, what comes back.

numpy x, finite differences, torch Constants: no JAX, so that these tests also serve mutmut's
forked children (docs/testing.md, "Mutation testing").
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core.foreign import require_family

torch = pytest.importorskip("torch")

X = np.array([0.5, 0.8, 1.2])
W = np.array([1.0, 2.0, 3.0])


class Seen:
    """f(x, *contexts) = sum(x**2 * w), w the context at ``scale_at``; records each call's context types."""

    def __init__(self, scale_at=0):
        self.types, self.scale_at = [], scale_at

    def __call__(self, x, *contexts):
        self.types.append(tuple(type(c) for c in contexts))
        w = contexts[self.scale_at]
        return np.sum(x**2 * np.asarray(w))


def test_a_torch_constant_reaches_f_as_numpy_with_its_dtype():
    seen = []

    def f(x, w):
        seen.append((type(w), w.dtype))
        return np.sum(x**2 * w)

    w = torch.tensor(W, dtype=torch.float32)
    g = di.gradient(f, di.AutoFiniteDiff(), X, di.Constant(w))
    assert {s for s in seen} == {(np.ndarray, np.dtype("float32"))}
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, 2 * X * W, rtol=1e-5)


def test_only_the_foreign_constants_are_converted_and_the_others_reach_f_as_given():
    w = torch.tensor(W)
    f = Seen(scale_at=2)
    g = di.gradient(
        f, di.AutoFiniteDiff(), X, di.Constant(2.0), di.Constant(np.ones(3)), di.Constant(w)
    )
    assert set(f.types) == {(float, np.ndarray, np.ndarray)}
    np.testing.assert_allclose(g, 2 * X * W, rtol=1e-6)
    f = Seen(scale_at=0)
    g = di.gradient(f, di.AutoFiniteDiff(), X, di.Constant(w), di.Constant(3), di.Constant("a"))
    assert set(f.types) == {(np.ndarray, int, str)}
    np.testing.assert_allclose(g, 2 * X * W, rtol=1e-6)


@pytest.mark.parametrize(
    "operator", ["gradient", "value_and_gradient", "pushforward", "pullback", "hvp"]
)
def test_a_prepared_call_converts_each_calls_new_constant(operator):
    """The value of a torch Constant changes between calls: each call converts the one it is given,
    for operators with seeds (the contexts after x and the seeds) and without, with the value and without."""
    backend = di.AutoFiniteDiff()
    seen = []

    def f(x, scale, w):
        seen.append((type(scale), type(w)))
        return np.sum(x**2 * w) * scale

    def call(w, prep=None):
        contexts = (di.Constant(2.0), di.Constant(w))
        if operator in ("gradient", "value_and_gradient"):
            args = (f, backend, X, *contexts)
        elif operator == "hvp":
            args = (f, backend, X, (np.ones(3),), *contexts)
        else:
            args = (
                f,
                backend,
                X,
                (np.ones(3) if operator == "pushforward" else np.array(1.0),),
                *contexts,
            )
        if prep is None:
            return getattr(di, f"prepare_{operator.removeprefix('value_and_')}")(*args)
        return getattr(di, operator)(*args, prep=prep)

    prep = call(torch.tensor(W))
    seen.clear()
    result = call(torch.tensor(2 * W), prep)
    assert set(seen) == {(float, np.ndarray)}
    gradient = 2 * 2 * X * 2 * W
    if operator == "value_and_gradient":
        value, result = result
        assert float(value) == 2 * np.sum(X**2 * 2 * W)
    if operator in ("gradient", "value_and_gradient"):
        np.testing.assert_allclose(result, gradient, rtol=1e-5)
    else:
        expected = {"pushforward": np.sum(gradient), "pullback": gradient, "hvp": 2 * 2 * 2 * W}
        assert len(result) == 1
        np.testing.assert_allclose(result[0], expected[operator], rtol=1e-4)


def test_a_cache_of_another_family_is_not_converted():
    seen = []
    cache = torch.zeros(3, dtype=torch.float64)

    def f(x, c):
        seen.append(type(c))
        return np.sum(x**2)

    di.gradient(f, di.AutoFiniteDiff(), X, di.Cache(cache))
    assert set(seen) == {torch.Tensor}


def test_a_tree_x_converts_a_torch_constant_to_its_leaves_family():
    seen = []

    def f(p, w):
        seen.append(type(w))
        return np.sum(p["a"] ** 2 * w)

    g = di.gradient(f, di.AutoFiniteDiff(), {"a": X}, di.Constant(torch.tensor(W)))
    assert set(seen) == {np.ndarray}
    np.testing.assert_allclose(g["a"], 2 * X * W, rtol=1e-6)


def test_a_tangent_of_another_family_is_refused_by_name():
    with pytest.raises(TypeError) as raised:
        di.pushforward(np.sin, di.AutoFiniteDiff(), X, (torch.ones(3, dtype=torch.float64),))
    message = str(raised.value)
    assert message.startswith("tangents[0]: expected a numpy array like x; got torch")
    assert "Convert it to x's family yourself" in message
    require_family(np.ones(2), "numpy", "tangents[0]", "x")  # x's family: no error
