"""The native recipes: each framework's own way to compute each operator, written plainly.

A recipe is built once from ``f`` and an example ``x`` (that is where JAX
compiles and finite differences lay out their steps) and then called as
``derivative_at(x)``. Where a framework has several recipes for one operator,
the harness times them all and uses the fastest as the baseline; a recipe's
``mode`` ("forward", "reverse" or None for either) lets a backend pinned to one
mode be compared with the same mode natively.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Recipe:
    name: str
    mode: object
    build: object  # build(f, x) -> derivative_at(x)


# -- JAX --------------------------------------------------------------------------------------


def _jax_recipes(compiled=True):
    """JAX's recipes, each under ``jax.jit`` (the fastest), or eager for ``AutoJAX(jit=False)``."""
    import jax
    import jax.numpy as jnp

    def recipe(name, mode, transform):
        if compiled:
            return Recipe(f"jax.jit({name})", mode, lambda f, x: jax.jit(transform(f, x)))
        return Recipe(name, mode, transform)

    def jvp_derivative(f, x):
        one = jnp.ones_like(x)
        return lambda x: jax.jvp(f, (x,), (one,))[1]

    return {
        "gradient": [recipe("jax.grad(f)", "reverse", lambda f, x: jax.grad(f))],
        "derivative": [
            recipe("jvp(f, x, 1)", "forward", jvp_derivative),
            recipe("jax.grad(f)", "reverse", lambda f, x: jax.grad(f)),
        ],
        "jacobian": [
            recipe("jax.jacfwd(f)", "forward", lambda f, x: jax.jacfwd(f)),
            recipe("jax.jacrev(f)", "reverse", lambda f, x: jax.jacrev(f)),
        ],
        "hessian": [
            recipe("jax.hessian(f)", None, lambda f, x: jax.hessian(f)),
            recipe("jax.jacrev(jax.grad(f))", None, lambda f, x: jax.jacrev(jax.grad(f))),
        ],
    }


# -- torch ------------------------------------------------------------------------------------


def _torch_recipes():
    import torch
    import torch.autograd.forward_ad as fwad
    from torch.autograd.functional import hessian as functional_hessian
    from torch.autograd.functional import jacobian as functional_jacobian

    def autograd_grad(f, x):
        def gradient(x):
            leaf = x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(f(leaf), leaf)
            return g

        return gradient

    def func_jvp(f, x):
        one = torch.ones_like(x)
        return lambda x: torch.func.jvp(f, (x,), (one,))[1]

    def dual_numbers(f, x):
        one = torch.ones_like(x)

        def derivative(x):
            with fwad.dual_level():
                return fwad.unpack_dual(f(fwad.make_dual(x, one))).tangent

        return derivative

    def batched_rows(f, x):
        """One forward pass, then every row of the jacobian in one batched backward pass."""
        with torch.no_grad():
            m = f(x).numel()
        basis = torch.eye(m, dtype=x.dtype)

        def jacobian(x):
            leaf = x.detach().requires_grad_(True)
            y = f(leaf)
            (rows,) = torch.autograd.grad(y.reshape(-1), leaf, basis, is_grads_batched=True)
            return rows.reshape(*y.shape, *x.shape)

        return jacobian

    def double_backward(f, x):
        """The gradient with create_graph, then all hessian rows in one batched backward pass."""
        basis = torch.eye(x.numel(), dtype=x.dtype).reshape(x.numel(), *x.shape)

        def hessian(x):
            leaf = x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(f(leaf), leaf, create_graph=True)
            (rows,) = torch.autograd.grad(g, leaf, basis, is_grads_batched=True)
            return rows.reshape(*x.shape, *x.shape)

        return hessian

    def functional(operator, **options):
        return lambda f, x: lambda x: operator(f, x, vectorize=True, **options)

    return {
        "gradient": [
            Recipe("torch.autograd.grad", "reverse", autograd_grad),
            Recipe("torch.func.grad(f)", "reverse", lambda f, x: torch.func.grad(f)),
        ],
        "derivative": [
            Recipe("torch.func.jvp", "forward", func_jvp),
            Recipe("torch.autograd.forward_ad dual", "forward", dual_numbers),
            Recipe("torch.autograd.grad", "reverse", autograd_grad),
        ],
        "jacobian": [
            Recipe(
                "functional.jacobian(vectorize, forward-mode)",
                "forward",
                functional(functional_jacobian, strategy="forward-mode"),
            ),
            Recipe("torch.func.jacfwd(f)", "forward", lambda f, x: torch.func.jacfwd(f)),
            Recipe("functional.jacobian(vectorize)", "reverse", functional(functional_jacobian)),
            Recipe("autograd.grad(is_grads_batched) over output basis", "reverse", batched_rows),
            Recipe(
                "torch.func.jacrev(f) (vmap over vjp)", "reverse", lambda f, x: torch.func.jacrev(f)
            ),
        ],
        "hessian": [
            Recipe("double backward, batched rows", None, double_backward),
            Recipe("torch.func.hessian(f)", None, lambda f, x: torch.func.hessian(f)),
            Recipe(
                "torch.func.jacrev(jacrev(f))",
                None,
                lambda f, x: torch.func.jacrev(torch.func.jacrev(f)),
            ),
            Recipe("functional.hessian(vectorize)", None, functional(functional_hessian)),
            Recipe(
                "functional.hessian(vectorize, forward-mode outer)",
                None,
                functional(functional_hessian, outer_jacobian_strategy="forward-mode"),
            ),
        ],
    }


# -- autograd ---------------------------------------------------------------------------------


def _autograd_recipes():
    import autograd
    from autograd.core import make_vjp as core_make_vjp
    from autograd.differential_operators import make_jvp

    def jvp_derivative(f, x):
        jvp_at = make_jvp(f)
        return lambda x: jvp_at(x)(1.0)[1]

    return {
        "gradient": [
            Recipe("autograd.grad(f)", "reverse", lambda f, x: autograd.grad(f)),
            Recipe(
                "autograd.core.make_vjp(f, x)[0](1.0)",
                "reverse",
                lambda f, x: lambda x: core_make_vjp(f, x)[0](1.0),
            ),
        ],
        "derivative": [
            Recipe("autograd make_jvp(f)", "forward", jvp_derivative),
            Recipe("autograd.grad(f)", "reverse", lambda f, x: autograd.grad(f)),
        ],
        "jacobian": [Recipe("autograd.jacobian(f)", "reverse", lambda f, x: autograd.jacobian(f))],
        "hessian": [
            Recipe("autograd.hessian(f)", None, lambda f, x: autograd.hessian(f)),
            Recipe(
                "autograd.jacobian(autograd.grad(f))",
                None,
                lambda f, x: autograd.jacobian(autograd.grad(f)),
            ),
        ],
    }


# -- finite differences (numpy) ----------------------------------------------------------------


def _step(x, power):
    """A Python float: x + h keeps a float x a float (f runs about twice as fast on it as on np.float64)."""
    eps = float(np.finfo(np.float64).eps)
    return eps**power * max(1.0, float(np.max(np.abs(x))))


def central_columns(f, x):
    """Central differences along each coordinate, steps laid out once: 2n evaluations."""
    x0 = np.asarray(x, dtype=np.float64)
    h = _step(x0, 1 / 3)
    steps = h * np.eye(x0.size).reshape((x0.size, *x0.shape))

    def jacobian(x):
        columns = [f(x + s) - f(x - s) for s in steps]
        return np.stack(columns, axis=-1) / (2 * h)

    return jacobian


def forward_columns(f, x):
    """Forward differences along each coordinate: n + 1 evaluations."""
    x0 = np.asarray(x, dtype=np.float64)
    h = _step(x0, 1 / 2)
    steps = h * np.eye(x0.size).reshape((x0.size, *x0.shape))

    def jacobian(x):
        fx = f(x)
        return np.stack([f(x + s) - fx for s in steps], axis=-1) / h

    return jacobian


def central_scalar(f, x):
    """Central difference at a scalar x: 2 evaluations."""
    h = _step(np.asarray(x), 1 / 3)
    return lambda x: (f(x + h) - f(x - h)) / (2 * h)


def forward_scalar(f, x):
    h = _step(np.asarray(x), 1 / 2)
    return lambda x: (f(x + h) - f(x)) / h


def approx_fprime(f, x):
    from scipy.optimize import approx_fprime as scipy_approx_fprime

    h = _step(np.asarray(x), 1 / 2)
    return lambda x: scipy_approx_fprime(x, f, h)


def central_hessian(f, x):
    """Symmetric second differences, upper triangle only: 2n^2 + 1 evaluations."""
    x0 = np.asarray(x, dtype=np.float64)
    n = x0.size
    h = _step(x0, 1 / 4)
    steps = h * np.eye(n)

    def hessian(x):
        fx = f(x)
        out = np.empty((n, n))
        for i in range(n):
            ei = steps[i]
            out[i, i] = (f(x + 2 * ei) - 2 * fx + f(x - 2 * ei)) / (4 * h * h)
            for j in range(i + 1, n):
                ej = steps[j]
                out[i, j] = out[j, i] = (
                    f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)
                ) / (4 * h * h)
        return out

    return hessian


def _finitediff_recipes(method):
    if method == "forward":
        return {
            "gradient": [
                Recipe("numpy forward differences", None, forward_columns),
                Recipe("scipy.optimize.approx_fprime", None, approx_fprime),
            ],
            "derivative": [Recipe("numpy forward difference", None, forward_scalar)],
            "jacobian": [
                Recipe("numpy forward differences", None, forward_columns),
                Recipe("scipy.optimize.approx_fprime", None, approx_fprime),
            ],
        }
    return {
        "gradient": [Recipe("numpy central differences", None, central_columns)],
        "derivative": [Recipe("numpy central difference", None, central_scalar)],
        "jacobian": [Recipe("numpy central differences", None, central_columns)],
        "hessian": [Recipe("numpy symmetric second differences", None, central_hessian)],
    }


def recipes(framework, operator, mode=None, compiled=True):
    """The native recipes of ``framework`` for ``operator``, restricted to ``mode`` when given.

    ``compiled=False`` gives JAX's recipes without ``jax.jit``: the baseline of
    ``AutoJAX(jit=False)``, which compiles nothing either.
    """
    if framework == "jax":
        table = _jax_recipes(compiled)
    elif framework == "torch":
        table = _torch_recipes()
    elif framework == "autograd":
        table = _autograd_recipes()
    elif framework == "finitediff":
        table = _finitediff_recipes("central")
    elif framework == "finitediff-forward":
        table = _finitediff_recipes("forward")
    else:
        raise ValueError(f"no native recipes for {framework!r}")
    found = table.get(operator, [])
    return [r for r in found if mode is None or r.mode in (None, mode)]


def has_recipes(framework, operator):
    """True when ``framework`` has a native recipe for ``operator`` (asks without importing it)."""
    names = {
        "finitediff-forward": ("gradient", "derivative", "jacobian"),
        "finitediff": ("gradient", "derivative", "jacobian", "hessian"),
    }
    return operator in names.get(framework, ("gradient", "derivative", "jacobian", "hessian"))
