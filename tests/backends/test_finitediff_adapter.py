"""AutoFiniteDiff's first-order recipes (``backends/finitediff/adapter.py``): the columns of every
Jacobian in their place and dtype, the points f is evaluated at, and the value each ``value_and_``
operator returns.

Written against the survivors of a mutation run (docs/testing.md, "Mutation testing"); numpy
only, so that mutmut's forked children never start JAX.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di

F = di.AutoFiniteDiff
X23 = np.array([[0.3, -0.8, 1.1], [0.5, 1.7, -0.4]])


def skewed(x):
    """R^(2 x 3) -> R^4, with a Jacobian that is no transpose of anything of the same shape."""
    flat = np.reshape(x, -1)
    return np.array(
        [flat[0] * flat[1], np.sin(flat[2]) + flat[5], flat[3] ** 2, np.exp(flat[4]) * flat[0]]
    )


def skewed_jacobian(x):
    flat = np.reshape(x, -1)
    J = np.zeros((4, 6))
    J[0, 0], J[0, 1] = flat[1], flat[0]
    J[1, 2], J[1, 5] = np.cos(flat[2]), 1.0
    J[2, 3] = 2 * flat[3]
    J[3, 4], J[3, 0] = np.exp(flat[4]) * flat[0], np.exp(flat[4])
    return J.reshape(4, 2, 3)


class Recorded:
    """f = skewed, noting the dtype of every point it is evaluated at."""

    def __init__(self):
        self.dtypes = set()

    def __call__(self, x):
        self.dtypes.add(np.asarray(x).dtype)
        return skewed(x)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_adaptive_jacobian_at_a_matrix_x_puts_each_column_in_its_place(dtype):
    x = X23.astype(dtype)
    f = Recorded()
    backend = F(method="adaptive")
    rtol = 1e-7 if dtype == "float64" else 2e-3
    J = di.jacobian(f, backend, x)
    assert J.shape == (4, 2, 3) and J.dtype == np.dtype(dtype)
    np.testing.assert_allclose(J, skewed_jacobian(X23), rtol=rtol, atol=rtol)
    value, J = di.value_and_jacobian(f, backend, x)
    np.testing.assert_array_equal(value, skewed(x))
    np.testing.assert_allclose(J, skewed_jacobian(X23), rtol=rtol, atol=rtol)
    # the points f sees are in x's dtype
    assert f.dtypes == {np.dtype(dtype)}


def test_the_adaptive_jacobian_evaluates_f_at_x_for_the_value_only_when_asked():
    calls = []

    def f(x):
        calls.append(1)
        return skewed(x)

    backend = F(method="adaptive")
    prep = di.prepare_jacobian(f, backend, X23)
    del calls[:]
    di.jacobian(f, backend, X23, prep=prep)
    plain = len(calls)
    del calls[:]
    di.value_and_jacobian(f, backend, X23, prep=prep)
    assert len(calls) == plain + 1


def matrix_of(t):
    return np.array([[np.sin(t), t**2, 1.0], [t**3, np.exp(t), -t]])


def matrix_derivative(t):
    return np.array([[np.cos(t), 2 * t, 0.0], [3 * t**2, np.exp(t), -1.0]])


@pytest.mark.parametrize("method", ["central", "forward", "complex", "adaptive"])
def test_the_derivative_of_a_matrix_valued_f_has_the_outputs_shape(method):
    backend = F(method=method)
    rtol = 1e-5 if method == "forward" else 1e-8
    for x in (0.4, np.float64(0.4), np.array(0.4)):
        d = di.derivative(matrix_of, backend, x)
        assert d.shape == (2, 3)
        np.testing.assert_allclose(d, matrix_derivative(0.4), rtol=rtol, atol=rtol)
        value, d = di.value_and_derivative(matrix_of, backend, x)
        assert value.shape == d.shape == (2, 3)
        np.testing.assert_allclose(value, matrix_of(0.4), rtol=1e-15)
        np.testing.assert_allclose(d, matrix_derivative(0.4), rtol=rtol, atol=rtol)
