"""Tuning a ridge penalty by gradient descent through scipy's solver, with di.ImplicitFunction.

    python examples/implicit_ridge_tuning.py

The coefficients ``b(lam) = argmin |X b - t|^2 / 2 + lam |b|^2 / 2`` come from
``scipy.linalg.solve`` (never differentiated); their derivative in ``lam``
comes from the optimality conditions ``X^T (X b - t) + lam b = 0``, which
torch differentiates. A torch optimizer then lowers the validation error
through ``loss.backward()``; the same hypergradient is checked against its
closed form and against JAX's ``jax.grad`` of the same loss.
"""

import jax
import numpy as np
import scipy.linalg
import torch

import diffinterface as di

rng = np.random.default_rng(0)
n, p = 80, 30
X_train, X_valid = rng.normal(size=(n, p)), rng.normal(size=(n, p))
b_true = rng.normal(size=p) * (rng.uniform(size=p) < 0.3)
t_train = X_train @ b_true + 0.8 * rng.normal(size=n)
t_valid = X_valid @ b_true + 0.8 * rng.normal(size=n)


def solver(log_lam):
    """The ridge coefficients at lam = exp(log_lam): a scipy solve, plain numpy."""
    lam = np.exp(float(np.asarray(log_lam)))
    return scipy.linalg.solve(
        X_train.T @ X_train + lam * np.eye(p), X_train.T @ t_train, assume_a="pos"
    )


def conditions(log_lam, b):
    """The gradient of the ridge objective in b: zero at the solution (written once for any framework)."""
    xp = di.array_namespace(b)
    X, t = xp.asarray(X_train), xp.asarray(t_train)
    return xp.matmul(xp.matmul(b, xp.permute_dims(X, (1, 0))) - t, X) + xp.exp(log_lam) * b


ridge = di.ImplicitFunction(solver, conditions, di.AutoTorch(), linear_solver="cg")

# -- tuning log(lam) with torch's optimizer --------------------------------------------------------
X_v, t_v = torch.tensor(X_valid), torch.tensor(t_valid)
log_lam = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.Adam([log_lam], lr=0.2)
losses = []
for step in range(60):
    optimizer.zero_grad()
    loss = ((X_v @ ridge(log_lam) - t_v) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print(f"validation MSE {losses[0]:.4f} -> {losses[-1]:.4f} at lam = {np.exp(log_lam.item()):.3f}")

# -- the hypergradient three ways ------------------------------------------------------------------
point = 0.5
lam = np.exp(point)
b = solver(point)
db = -np.linalg.solve(X_train.T @ X_train + lam * np.eye(p), b) * lam  # d b / d log(lam)
exact = float(2 * (X_valid @ b - t_valid) @ (X_valid @ db) / n)

x = torch.tensor(point, dtype=torch.float64, requires_grad=True)
((X_v @ ridge(x) - t_v) ** 2).mean().backward()
with jax.enable_x64(True):
    jnp = jax.numpy
    jax_value = float(
        jax.grad(lambda s: jnp.mean((X_valid @ ridge(s) - t_valid) ** 2))(jnp.float64(point))
    )
print(
    f"hypergradient: closed form {exact:.10f}, torch backward {x.grad.item():.10f}, jax.grad {jax_value:.10f}"
)
if max(abs(x.grad.item() - exact), abs(jax_value - exact)) > 1e-8 * max(1.0, abs(exact)):
    print("MISMATCH")
if losses[-1] < losses[0]:
    print("the hypergradient through scipy's solver lowered the validation error")
