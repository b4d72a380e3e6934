"""Complex x beyond the kit's scenarios (diffinterface/testing/complex_scenarios.py): families, dtypes,
preparations, same-point and aux, wrappers, linear operators, refusals, and the real-x path left alone."""

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core.complex_convention import has_complex_leaf
from diffinterface.testing.complex_scenarios import T, U, Z, holomorphic, real_loss

import jax
import torch
import tensorflow as tf

JACOBIAN = np.diag(np.cos(Z) * Z + np.sin(Z))
FAMILIES = {
    "jax": (
        di.AutoJAX(),
        lambda a: di.families.FAMILIES["jax"].from_numpy(a, None),
        "jax",
    ),  # keeps complex128
    "torch": (di.AutoTorch(), torch.from_numpy, "torch"),
    "tensorflow": (di.AutoTensorFlow(), tf.constant, "tensorflow"),
}


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_results_keep_the_family_and_the_complex_dtype(name, dtype):
    backend, to_family, family = FAMILIES[name]
    z = to_family(Z.astype(dtype))
    g = di.gradient(real_loss, backend, z)
    (p,) = di.pullback(holomorphic, backend, z, (to_family(U.astype(dtype)),))
    for result in (g, p):
        assert di.families.family_of(result) == family
        assert di.families.dtype_name(result) == dtype
    rtol = 1e-5 if dtype == "complex64" else 1e-12
    np.testing.assert_allclose(np.asarray(g), 4 * Z.real, rtol=rtol)
    np.testing.assert_allclose(np.asarray(p), JACOBIAN.conj().T @ U, rtol=10 * rtol)


def test_the_frameworks_own_conventions_differ_and_diffinterface_has_one():
    """JAX's and autograd's own gradients of a real f of complex z are the conjugate of torch's."""
    import autograd

    z = np.array([1 + 2j, 3 - 1j])
    native_jax = np.asarray(
        jax.grad(lambda z: jax.numpy.real(jax.numpy.sum(z**2)))(jax.numpy.asarray(z))
    )
    native_autograd = autograd.grad(lambda z: autograd.numpy.real(autograd.numpy.sum(z**2)))(z)
    t = torch.tensor(z, requires_grad=True)
    torch.real(torch.sum(t**2)).backward()
    assert np.allclose(native_jax, [2 + 4j, 6 - 2j]) and np.allclose(
        native_autograd, [2 + 4j, 6 - 2j]
    )
    assert np.allclose(t.grad.numpy(), [2 - 4j, 6 + 2j])
    for backend in (
        di.AutoJAX(),
        di.AutoAutograd(),
        di.AutoTorch(),
        di.AutoTensorFlow(),
        di.AutoFiniteDiff(),
    ):
        g = di.gradient(
            lambda z: di.array_namespace(z).sum(di.array_namespace(z).real(z**2)), backend, z
        )
        np.testing.assert_allclose(g, [2 - 4j, 6 + 2j], rtol=1e-7, err_msg=repr(backend))


def test_a_prepared_call_refuses_an_x_of_another_kind():
    prep = di.prepare_gradient(real_loss, di.AutoJAX(), Z)
    np.testing.assert_allclose(di.gradient(real_loss, di.AutoJAX(), Z * 2, prep=prep), 8 * Z.real)
    for other in (Z.real.copy(), Z.astype(np.complex64), Z[:2]):
        with pytest.raises(di.PreparationMismatchError, match="x: MISMATCH"):
            di.gradient(real_loss, di.AutoJAX(), other, prep=prep)


@pytest.mark.parametrize(
    "backend",
    [di.AutoJAX(), di.AutoTorch(), di.AutoAutograd(), di.AutoFiniteDiff()],
    ids=["jax", "torch", "autograd", "finitediff"],
)
def test_same_point_has_aux_and_out(backend):
    x = Z.copy()
    prep = di.prepare_pullback_same_point(holomorphic, backend, x, (U,))
    (pulled,) = di.pullback(holomorphic, backend, x, (U,), prep=prep)
    np.testing.assert_allclose(pulled, JACOBIAN.conj().T @ U, rtol=1e-6)
    with pytest.raises(di.PreparationMismatchError, match="x"):
        di.pullback(holomorphic, backend, x + 1, (U,), prep=prep)
    prep = di.prepare_hvp_same_point(real_loss, backend, x, (T,))
    np.testing.assert_allclose(
        di.hvp(real_loss, backend, x, (T,), prep=prep)[0], 4 * T.real, rtol=1e-5, atol=1e-6
    )
    (value, aux), g = di.value_and_gradient(
        lambda z: (real_loss(z), {"re": di.array_namespace(z).real(z)}), backend, x, has_aux=True
    )
    np.testing.assert_allclose(g, 4 * Z.real, rtol=1e-6)
    np.testing.assert_allclose(value, real_loss(Z))
    np.testing.assert_allclose(np.asarray(aux["re"]), Z.real)
    out = np.zeros(3, dtype=complex)
    assert di.gradient(real_loss, backend, x, out=out) is out
    np.testing.assert_allclose(out, 4 * Z.real, rtol=1e-6)
    np.testing.assert_array_equal(x, Z)


@pytest.mark.parametrize(
    "pair",
    [
        (di.AutoJAX(mode="forward"), di.AutoTorch()),
        (di.AutoFiniteDiff(), di.AutoJAX()),
        (di.AutoTorch(mode="forward"), di.AutoTorch()),
    ],
    ids=["jax-over-torch", "fd-over-jax", "torch-over-torch"],
)
def test_second_order_hvp(pair):
    (h,) = di.hvp(real_loss, di.SecondOrder(*pair), Z, (T,))
    np.testing.assert_allclose(h, 4 * T.real, rtol=1e-5, atol=1e-6)


def test_derivative_at_a_complex_scalar_in_every_family():
    z = 0.5 - 0.25j
    wanted = np.cos(z) * z + np.sin(z)
    for backend, to_family, _ in FAMILIES.values():
        d = di.derivative(holomorphic, backend, to_family(np.asarray(z)))
        np.testing.assert_allclose(np.asarray(d), wanted, rtol=1e-12)


@pytest.mark.parametrize(
    "backend, words",
    [
        (di.AutoFiniteDiff(method="complex"), ["x:", "method='central'"]),
        (di.AutoSparse(di.AutoJAX()), ["x:", "AutoSparse", "dense"]),
        (di.SecondOrder(di.AutoFiniteDiff(method="complex"), di.AutoJAX()), ["x:", "complex step"]),
    ],
    ids=["complex-step", "sparse", "second-order-over-complex-step"],
)
def test_backends_that_cannot_refuse_by_name(backend, words):
    with pytest.raises(di.UnsupportedError) as raised:
        di.gradient(real_loss, backend, Z)
    assert all(w in str(raised.value) for w in words), str(raised.value)


def test_refusals_name_the_argument():
    with pytest.raises(di.UnsupportedError, match="^y:"):
        di.pushforward(lambda y, x: None, di.AutoFiniteDiff(), Z, (T,), y=np.zeros(3, complex))
    with pytest.raises(di.UnsupportedError, match="DifferentiateWith"):
        jax.grad(di.DifferentiateWith(lambda z: np.sum(np.abs(z) ** 2), di.AutoFiniteDiff()))(
            jax.numpy.asarray(Z)
        )
    x = {"w": Z, "b": np.ones(3)}
    with pytest.raises(ValueError, match=r"tangents\[0\].*\[.w.\].*float64"):
        di.pushforward(
            lambda x: x["w"] * x["b"], di.AutoJAX(), x, ({"w": Z.real.copy(), "b": np.ones(3)},)
        )
    with pytest.raises(ValueError, match="scalar x"):
        di.derivative(holomorphic, di.AutoJAX(), Z)


def test_linear_operators():
    from diffinterface.scipy import hessian_operator, jacobian_operator

    J = jacobian_operator(holomorphic, di.AutoTorch(), Z)
    assert J.dtype == np.complex128
    np.testing.assert_allclose(J @ T, JACOBIAN @ T, rtol=1e-12)
    np.testing.assert_allclose(J.H @ U, JACOBIAN.conj().T @ U, rtol=1e-12)
    with pytest.raises(TypeError, match="x:.*complex128.*hvp"):
        hessian_operator(real_loss, di.AutoTorch(), Z)
    with pytest.raises(TypeError, match="f:.*holomorphic"):
        jacobian_operator(lambda z: di.array_namespace(z).abs(z) ** 2, di.AutoTorch(), Z)


def test_an_error_inside_f_names_the_users_function():
    def uses_numpy(z):
        return np.sum(np.abs(z) ** 2)

    with pytest.raises(di.TracedArrayError, match=r"^f: \S*uses_numpy raised"):
        di.gradient(uses_numpy, di.AutoTorch(), Z)


def test_a_real_x_never_meets_the_complex_path():
    prep = di.prepare_gradient(real_loss, di.AutoTorch(), Z.real.copy())
    assert "complex" not in repr(prep.plan.impl)
    assert not has_complex_leaf(Z.real) and not has_complex_leaf({"a": np.ones(2), "b": 1.0})
    assert has_complex_leaf(Z) and has_complex_leaf({"a": np.ones(2), "b": Z})


def test_auto_select_compares_both_parts():
    from diffinterface.wrappers.auto_select.selection import _vector

    np.testing.assert_array_equal(
        _vector([np.array([1 + 2j], np.complex64), np.array([3.0])]), [1, 2, 3]
    )
    candidates = (di.AutoJAX(), di.AutoTorch(), di.AutoFiniteDiff())
    g = di.gradient(real_loss, di.AutoSelect(candidates=candidates), Z)
    np.testing.assert_allclose(g, 4 * Z.real, rtol=1e-6)


@pytest.mark.parametrize(
    "backend", [di.AutoJAX(), di.AutoTorch(), di.AutoFiniteDiff()], ids=["jax", "torch", "fd"]
)
def test_a_pytree_output_mixing_complex_and_real_leaves(backend):
    def f(z):
        xp = di.array_namespace(z)
        return {"c": xp.sin(z) * z, "r": xp.abs(z) ** 2}

    z = np.array([1 + 2j, 3 - 1j])
    derivative = np.cos(z) * z + np.sin(z)
    (pushed,) = di.pushforward(f, backend, z, (np.ones(2) + 0j,))
    np.testing.assert_allclose(pushed["c"], derivative, rtol=1e-6)
    np.testing.assert_allclose(pushed["r"], 2 * z.real, rtol=1e-6)
    assert pushed["r"].dtype == np.float64
    (pulled,) = di.pullback(f, backend, z, ({"c": np.ones(2) + 0j, "r": np.ones(2)},))
    np.testing.assert_allclose(pulled, np.conj(derivative) + 2 * z, rtol=1e-6)
    with pytest.raises(ValueError, match=r"cotangents\[0\].*\['c'\]"):
        di.pullback(f, backend, z, ({"c": np.ones(2), "r": np.ones(2)},))
    with pytest.raises(TypeError, match="f: expected f to return an array"):
        di.derivative(f, backend, np.asarray(0.5 - 0.25j))
