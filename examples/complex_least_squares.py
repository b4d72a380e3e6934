"""Complex parameters: one gradient convention on every backend.

The frameworks disagree on the gradient of a real function of complex z:
JAX and autograd return the conjugate of what torch and TensorFlow return.
diffinterface returns dL/dRe(z) + i dL/dIm(z) on every backend, so the
plain update z - lr * g descends whichever backend computed g. Here it fits
a complex least-squares problem |A z - b|^2 on five backends, and checks the
complex Jacobian and pullback of a holomorphic map.
"""

import numpy as np

import diffinterface as di


def native_conventions(z):
    """What each framework itself returns for the gradient of Re(sum(z**2))."""
    import autograd
    import jax
    import torch

    rows = {
        "JAX jax.grad": np.asarray(
            jax.grad(lambda z: jax.numpy.real(jax.numpy.sum(z**2)))(jax.device_put(z))
        )
    }
    rows["autograd grad"] = autograd.grad(lambda z: autograd.numpy.real(autograd.numpy.sum(z**2)))(
        z
    )
    t = torch.tensor(z, requires_grad=True)
    torch.real(torch.sum(t**2)).backward()
    rows["torch .backward()"] = t.grad.numpy()
    return rows


def loss(z, A, b):
    xp = di.array_namespace(z)
    r = xp.matmul(A, z) - b  # xp.matmul, not @: TensorFlow's @ takes no 1-d operand
    return xp.sum(xp.real(r * xp.conj(r)))


def holomorphic(z):
    xp = di.array_namespace(z)
    return xp.sin(z) * z


BACKENDS = [
    di.AutoJAX(),
    di.AutoTorch(),
    di.AutoAutograd(),
    di.AutoTensorFlow(),
    di.AutoFiniteDiff(),
]

if __name__ == "__main__":
    np.set_printoptions(precision=3, suppress=True)
    z = np.array([1 + 2j, 3 - 1j])
    print(
        "gradient of Re(sum(z**2)) at z = [1+2j, 3-1j]  (the derivative along Re is 2 Re z, along Im -2 Im z)"
    )
    for name, g in native_conventions(z.astype(np.complex64)).items():
        print(f"  {name:<28} {np.asarray(g, dtype=np.complex128)}")
    for backend in BACKENDS:
        g = di.gradient(
            lambda z: di.array_namespace(z).sum(di.array_namespace(z).real(z**2)), backend, z
        )
        print(f"  di.gradient, {type(backend).__name__:<15} {g}")

    rng = np.random.default_rng(0)
    A = rng.normal(size=(20, 5)) + 1j * rng.normal(size=(20, 5))
    z_true = rng.normal(size=5) + 1j * rng.normal(size=5)
    b = A @ z_true
    lr = 1 / (2 * np.linalg.norm(A, 2) ** 2)  # 1 / the Lipschitz constant of the gradient
    print(
        "\nfit |A z - b|^2, A complex 20 x 5: 300 steps of z - lr * g from z = 0 (the gradient is 2 A^H (A z - b))"
    )
    for backend in BACKENDS:
        prep = di.prepare_gradient(
            loss, backend, np.zeros(5, complex), di.Constant(A), di.Constant(b)
        )
        z = np.zeros(5, complex)
        assert np.allclose(
            di.gradient(loss, backend, z, di.Constant(A), di.Constant(b), prep=prep),
            2 * A.conj().T @ (A @ z - b),
            rtol=1e-6,
        )
        for _ in range(300):
            z = z - lr * di.gradient(loss, backend, z, di.Constant(A), di.Constant(b), prep=prep)
        print(
            f"  {type(backend).__name__:<15} |z - z_true| = {np.linalg.norm(z - z_true):.1e}, dtype {z.dtype}"
        )
    print("every backend: one gradient, z - lr * g descends to z_true")

    z = np.array([0.5 + 1j, -1 + 0.25j])
    J = np.diag(np.cos(z) * z + np.sin(z))
    u = np.array([1 - 1j, 2 + 0.5j])
    print("\nsin(z) * z: jacobian = diag(cos(z) z + sin(z)), pullback(u) = J^H u")
    for backend in BACKENDS:
        (pulled,) = di.pullback(holomorphic, backend, z, (u,))
        same = np.allclose(di.jacobian(holomorphic, backend, z), J) and np.allclose(
            pulled, J.conj().T @ u
        )
        print(f"  {type(backend).__name__:<15} {'agrees' if same else 'DIFFERS'}")
