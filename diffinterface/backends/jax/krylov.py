"""JAX's own Krylov solvers (``jax.scipy.sparse.linalg``) on the matrix-free Jacobian of a JAX function.

:class:`~diffinterface.wrappers.implicit.ImplicitFunction`'s iterative
linear solvers (``"gmres"``, ``"cg"``, ``"bicgstab"``) solve ``dc/dy v = b``
and ``dc/dy^T w = u``. When the conditions are JAX code (an ``AutoJAX``
conditions backend), the whole Krylov loop runs compiled by XLA here: the
products are ``jax.linearize`` / ``jax.vjp`` of the conditions in y, every
right-hand side goes through one ``jax.vmap`` of the solver, and the
function is compiled once per shape (it takes the point and the right-hand
sides as arguments). JAX's solvers do not report convergence: the true
residual is computed after the solve and returned with the threshold, for
the caller to judge (``wrappers/implicit/linear_solvers.py``). A pullback of
the implicit function (:meth:`KrylovSolve.implicit_pullback`) runs the solve
and the product in x in one compiled program, as a hand-written JAX recipe
would.
:class:`JAXBridge` declares this module as JAX's Krylov implementation.

    >>> import numpy as np
    >>> from diffinterface.backends.jax.krylov import KrylovSolve
    >>> solve = KrylovSolve("cg", lambda y, a: a * y, (2,), rtol=1e-12, atol=0.0, maxiter=None)
    >>> v, residual, threshold = solve(np.ones(2), (np.array([2.0, 4.0]),), np.ones((2, 1)), False)
    >>> v.ravel().tolist()
    [0.5, 0.25]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.sparse.linalg as jsl
import numpy as np

#: JAX's Krylov solvers by the names ``linear_solver`` takes
METHODS = {"gmres": jsl.gmres, "cg": jsl.cg, "bicgstab": jsl.bicgstab}


def _traceable(values):
    """True when every leaf of ``values`` is an array (a compiled function's argument); else it is closed over."""
    return all(
        isinstance(leaf, (jax.Array, np.ndarray)) for leaf in jax.tree_util.tree_leaves(values)
    )


class KrylovSolve:
    """``solve(y, args, rhs, transpose) -> (solutions, residuals, thresholds)`` for ``function(y, *args)``.

    ``rhs`` is ``(m, k)`` (k right-hand sides, flat); the solutions are
    ``(m, k)`` numpy, the residuals ``|A v - b|`` and thresholds
    ``max(rtol |b|, atol)`` of length k. ``transpose`` solves with ``A^T``
    (by vjps), except for ``"cg"``, whose A is symmetric (jvps).
    :meth:`implicit_pullback` gives ``-B^T A^-T u`` directly, B the
    Jacobian in ``args[0]``.
    """

    def __init__(self, method, function, y_shape, rtol, atol, maxiter):
        self.method, self.function, self.y_shape = method, function, tuple(y_shape)
        self.rtol, self.atol, self.maxiter = rtol, atol, maxiter
        self._compiled = jax.jit(self._columns, static_argnums=(3,))
        self._compiled_pullback = jax.jit(self._implicit_pullback)

    def _product(self, y, args, transpose):
        """``v -> A v`` (``A^T v`` when ``transpose``, except for cg: A symmetric, jvps) on flat vectors."""
        shape = self.y_shape

        def in_y(v):
            return self.function(v, *args)

        if transpose and self.method != "cg":
            _, pull = jax.vjp(in_y, y)

            def product(u):
                return pull(u.reshape(shape).astype(y.dtype))[0].reshape(-1)
        else:
            _, push = jax.linearize(in_y, y)

            def product(v):
                return push(v.reshape(shape).astype(y.dtype)).reshape(-1)

        return product

    def _run(self, product, b):
        v, _ = METHODS[self.method](product, b, tol=self.rtol, atol=self.atol, maxiter=self.maxiter)
        return v, jnp.maximum(self.rtol * jnp.linalg.norm(b), self.atol)

    def _columns(self, y, args, rhs, transpose):
        product = self._product(y, args, transpose)

        def one(b):
            v, threshold = self._run(product, b)
            return v, jnp.linalg.norm(product(v) - b), threshold

        if rhs.shape[1] == 1:  # one right-hand side (a gradient): no batched loop, which costs more
            v, residual, threshold = one(rhs[:, 0])
            return v[:, None], residual[None], threshold[None]
        return jax.vmap(one, in_axes=1, out_axes=(1, 0, 0))(rhs)

    def _implicit_pullback(self, y, args, rhs):
        # w = A^-T u, then ONE vjp of the conditions in (y, x) at w gives both A^T w (the residual
        # check, which costs no product of its own) and B^T w, in the program that solved: no
        # crossing back to the host between the solve and the product in x
        product = self._product(y, args, transpose=True)
        x, rest = args[0], args[1:]
        _, pull = jax.vjp(lambda y, x: self.function(y, x, *rest), y, x)

        def one(u):
            w, threshold = self._run(product, u)
            in_y, in_x = pull(w.reshape(self.y_shape).astype(y.dtype))
            residual = jnp.linalg.norm(in_y.reshape(-1) - u)
            return -in_x, residual, threshold

        if rhs.shape[1] == 1:
            g, residual, threshold = one(rhs[:, 0])
            return (g,), residual[None], threshold[None]
        gs, residuals, thresholds = jax.vmap(one, in_axes=1)(rhs)
        return tuple(gs[j] for j in range(rhs.shape[1])), residuals, thresholds

    def __call__(self, y, args, rhs, transpose):
        if _traceable(args):
            out = self._compiled(y, args, jnp.asarray(rhs), bool(transpose))
        else:  # a byproduct or context that is no array: closed over, compiled for this point
            out = jax.jit(lambda y, rhs: self._columns(y, args, rhs, transpose))(
                y, jnp.asarray(rhs)
            )
        return tuple(np.asarray(a) for a in out)

    def implicit_pullback(self, y, args, rhs):
        """``(products, residuals, thresholds)``: ``-B^T A^-T u`` for each column u of ``rhs``, B the
        Jacobian of ``function`` in ``args[0]`` (x), as a tuple of JAX arrays of x's shape; residuals
        ``|A^T w - u|`` and thresholds as in :meth:`__call__` (numpy)."""
        if _traceable(args):
            products, residuals, thresholds = self._compiled_pullback(y, args, jnp.asarray(rhs))
        else:
            products, residuals, thresholds = jax.jit(
                lambda y, rhs: self._implicit_pullback(y, args, rhs)
            )(y, jnp.asarray(rhs))
        return products, np.asarray(residuals), np.asarray(thresholds)
