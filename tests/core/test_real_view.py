"""The real view of a value with complex leaves (core/real_view.py): which leaves it marks, its
family and key, and each conversion there and back, for an array and for a pytree mixing complex
arrays, real arrays and Python floats, in numpy and in a compiling family (JAX)."""

from __future__ import annotations

import numpy as np

from diffinterface.core.real_view import ComplexView

Z = np.array([1 + 2j, -3 + 0.5j])
R = np.array([[1.0, 2.0], [-3.0, 0.5]])


def test_an_array_s_view_and_back():
    view = ComplexView(Z)
    assert view.mask == (True,) and view.any is True
    assert view.family.name == "numpy" and view.key == ("numpy", (True,), None)
    real = view.real(Z)
    assert real.dtype == np.float64
    np.testing.assert_array_equal(real, R)
    back = view.complex_result(R)
    assert back.dtype == np.complex128
    np.testing.assert_array_equal(back, Z)
    np.testing.assert_array_equal(view.real_inside(Z), R)
    np.testing.assert_array_equal(view.complex_inside(R), Z)


def test_a_real_array_is_left_as_it_is():
    x = np.array([1.0, 2.0])
    view = ComplexView(x)
    assert view.mask == (False,) and view.any is False
    assert view.real(x) is x and view.complex_result(x) is x
    assert view.real_inside(x) is x and view.complex_inside(x) is x


def test_a_complex_scalar_result_is_a_0d_array():
    view = ComplexView(np.array(1 + 2j))
    back = view.complex_result(np.array([1.0, 2.0]))
    assert isinstance(back, np.ndarray) and back.shape == () and back == 1 + 2j


def test_a_pytree_converts_its_complex_leaves_only():
    value = {"a": 2.5, "b": np.array([0.5, 1.0]), "c": Z}
    view = ComplexView(value)
    assert view.mask == (False, False, True) and view.any is True
    assert view.family.name == "numpy" and view.key[:2] == ("numpy", (False, False, True))
    real = view.real(value)
    assert real["a"] == 2.5 and real["b"] is value["b"]
    np.testing.assert_array_equal(real["c"], R)
    back = view.complex_result(real)
    assert set(back) == {"a", "b", "c"} and back["a"] == 2.5 and back["b"] is value["b"]
    np.testing.assert_array_equal(back["c"], Z)
    inside = view.real_inside(value)
    np.testing.assert_array_equal(inside["c"], R)
    np.testing.assert_array_equal(view.complex_inside(inside)["c"], Z)


def test_a_pytree_whose_first_complex_leaf_is_not_its_first_leaf():
    value = (np.array([1.0]), np.array([2j]), np.array([3.0]), np.array([4 + 1j]))
    view = ComplexView(value)
    assert view.mask == (False, True, False, True)
    real = view.real(value)
    np.testing.assert_array_equal(real[1], [[0.0, 2.0]])
    np.testing.assert_array_equal(real[3], [[4.0, 1.0]])
    np.testing.assert_array_equal(real[2], [3.0])
    back = view.complex_result(real)
    for got, expected in zip(back, value):
        np.testing.assert_array_equal(got, expected)


def test_floats_only_are_numpy_numbers():
    view = ComplexView((1.0, 2.0))
    assert view.family.name == "numpy" and view.mask == (False, False) and view.any is False
    assert view.real((1.0, 2.0)) == (1.0, 2.0)


def test_a_jax_pytree_s_family_comes_from_its_first_array_leaf():
    import jax.numpy as jnp

    value = (1.5, jnp.asarray(Z), np.array([1.0]))
    view = ComplexView(value)
    assert view.family.name == "jax" and view.mask == (False, True, False)
    real = view.real(value)
    np.testing.assert_allclose(np.asarray(real[1]), R)
    back = view.complex_result(real)
    np.testing.assert_allclose(np.asarray(back[1]), Z)
    np.testing.assert_allclose(np.asarray(view.complex_inside(view.real_inside(value))[1]), Z)


def test_a_jax_value_without_complex_leaves_is_left_as_it_is():
    import jax.numpy as jnp

    value = (jnp.ones(2), 2.0)
    view = ComplexView(value)
    assert view.family.name == "jax" and view.any is False
    real = view.real(value)
    assert real[0] is value[0] and real[1] == 2.0
    assert view.complex_result(value)[0] is value[0]
