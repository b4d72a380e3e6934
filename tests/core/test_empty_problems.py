"""Empty problems answered by the core (core/empty.py): the value with its contexts, in x's family,
in-place functions, and the scalar-output check of gradient and hessian.

numpy x on finite differences and torch x on AutoTorch, no JAX, so that these tests also serve mutmut's forked
children (docs/testing.md, "Mutation testing"); the kit's edge scenarios check the shapes and
zeros on every backend.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di

import torch

EMPTY = np.zeros(0)


def _offset(x, c):
    return np.sum(x) + c * np.ones(3)


def test_the_value_of_an_empty_x_problem_sees_its_contexts():
    value, grad = di.value_and_gradient(
        lambda x, c: np.sum(x) + c, di.AutoFiniteDiff(), EMPTY, di.Constant(2.5)
    )
    assert float(value) == 2.5
    assert grad.shape == (0,)
    value, jac = di.value_and_jacobian(_offset, di.AutoFiniteDiff(), EMPTY, di.Constant(2.5))
    np.testing.assert_array_equal(value, [2.5, 2.5, 2.5])
    assert jac.shape == (3, 0)
    value, (product,) = di.value_and_pushforward(
        _offset, di.AutoFiniteDiff(), EMPTY, (EMPTY,), di.Constant(2.5)
    )
    np.testing.assert_array_equal(value, [2.5, 2.5, 2.5])
    np.testing.assert_array_equal(product, np.zeros(3))


def test_an_empty_torch_x_gives_its_value_with_contexts_in_torch():
    x = torch.zeros(0, dtype=torch.float64)

    def f(x, c):
        return torch.sum(x) + c * torch.ones(3, dtype=torch.float64)

    value, jac = di.value_and_jacobian(f, di.AutoTorch(), x, di.Constant(2.5))
    assert isinstance(value, torch.Tensor) and isinstance(jac, torch.Tensor)
    assert value.tolist() == [2.5, 2.5, 2.5]
    assert tuple(jac.shape) == (3, 0)


def test_an_in_place_function_of_an_empty_x_sees_its_contexts():
    def f(y, x, c):
        y[...] = np.sum(x) + c

    y = np.zeros(3)
    value, jac = di.value_and_jacobian(f, di.AutoFiniteDiff(), EMPTY, di.Constant(2.5), y=y)
    np.testing.assert_array_equal(value, [2.5, 2.5, 2.5])
    np.testing.assert_array_equal(y, [2.5, 2.5, 2.5])
    assert jac.shape == (3, 0)


@pytest.mark.parametrize("operator", ["gradient", "hessian"])
def test_an_empty_x_with_a_vector_output_is_refused_by_the_scalar_operators(operator):
    with pytest.raises(
        ValueError, match=rf"^f: {operator} needs f to return a scalar; it returns shape \(3,\)"
    ):
        getattr(di, operator)(lambda x: np.sum(x) * np.ones(3), di.AutoFiniteDiff(), EMPTY)
