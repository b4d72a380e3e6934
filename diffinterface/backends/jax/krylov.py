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
the caller to judge (``wrappers/implicit/linear_solvers.py``).
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
    """

    def __init__(self, method, function, y_shape, rtol, atol, maxiter):
        self.method, self.function, self.y_shape = method, function, tuple(y_shape)
        self.rtol, self.atol, self.maxiter = rtol, atol, maxiter
        self._compiled = jax.jit(self._columns, static_argnums=(3,))

    def _columns(self, y, args, rhs, transpose):
        run, shape = METHODS[self.method], self.y_shape

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

        def one(b):
            v, _ = run(product, b, tol=self.rtol, atol=self.atol, maxiter=self.maxiter)
            residual = jnp.linalg.norm(product(v) - b)
            return v, residual, jnp.maximum(self.rtol * jnp.linalg.norm(b), self.atol)

        if rhs.shape[1] == 1:  # one right-hand side (a gradient): no batched loop, which costs more
            v, residual, threshold = one(rhs[:, 0])
            return v[:, None], residual[None], threshold[None]
        return jax.vmap(one, in_axes=1, out_axes=(1, 0, 0))(rhs)

    def __call__(self, y, args, rhs, transpose):
        if _traceable(args):
            out = self._compiled(y, args, jnp.asarray(rhs), bool(transpose))
        else:  # a byproduct or context that is no array: closed over, compiled for this point
            out = jax.jit(lambda y, rhs: self._columns(y, args, rhs, transpose))(
                y, jnp.asarray(rhs)
            )
        return tuple(np.asarray(a) for a in out)
