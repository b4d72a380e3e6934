"""The linear solves of the implicit function theorem: ``dc/dy v = b`` (pushforward) and ``dc/dy^T w = u`` (pullback).

A :class:`LinearSolver` is chosen once per :class:`~diffinterface.wrappers.implicit.ImplicitFunction`
from its ``linear_solver`` argument: ``"direct"`` (:class:`DirectSolver`: the dense Jacobian of the
conditions in y, one LU factorisation per point, every right-hand side through it), ``"gmres"``,
``"cg"``, ``"bicgstab"`` (:class:`IterativeSolver`: scipy's Krylov solvers on the matrix-free
:func:`~diffinterface.scipy.jacobian_operator` of the conditions in y), or a callable
``(operator, rhs) -> solution`` (:class:`CallableSolver`). Right-hand sides and solutions are
numpy arrays of shape ``(m, k)``: k columns, one per tangent or cotangent.

    >>> import numpy as np
    >>> from diffinterface.wrappers.implicit.linear_solvers import linear_solver
    >>> linear_solver("cg", rtol=1e-12, atol=0.0, maxiter=None).method
    'cg'
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from ...core.registry import framework_bridge
from ...errors import DifferentiationError

#: scipy's Krylov solvers by name
ITERATIVE = {
    "gmres": scipy.sparse.linalg.gmres,
    "cg": scipy.sparse.linalg.cg,
    "bicgstab": scipy.sparse.linalg.bicgstab,
}


class LinearSolveError(DifferentiationError):
    """The implicit function theorem's linear system could not be solved: ``dc/dy`` singular, or an
    iterative solver that did not converge (the message gives its relative residual).

    A :class:`~diffinterface.DifferentiationError`.

    Attributes
    ----------
    args : tuple of str
        ``(message,)``: "singular", or the iterative solver, its relative residual and the way
        around (a tolerance, ``maxiter``, ``linear_solver="direct"``).

    Examples
    --------
    >>> import diffinterface as di
    >>> issubclass(di.LinearSolveError, di.DifferentiationError)
    True
    """


class LinearSolver:
    """How the systems in ``dc/dy`` are solved at one point; :meth:`at` gives the solves for one point."""

    #: True when the solver needs the dense Jacobian ``dc/dy`` (else the matrix-free operator)
    dense = False

    def solve(self, operator: Any, rhs: np.ndarray, transpose: bool) -> np.ndarray:
        """The solutions of ``A v = rhs`` (``A^T v = rhs`` when ``transpose``), columnwise."""
        raise NotImplementedError


class DirectSolver(LinearSolver):
    """An LU factorisation of ``dc/dy``, computed once per point (dense, or sparse where the conditions
    backend returns a sparse Jacobian); every column solved through it."""

    dense = True
    method = "direct"

    def factor(self, jacobian: np.ndarray) -> Any:
        """The LU factors of the square ``jacobian`` (``dc/dy``, flat); raises where it is singular."""
        if not np.all(np.isfinite(jacobian)):
            raise LinearSolveError(
                "conditions: the Jacobian dc/dy at the solver's y has non-finite entries (NaN or inf); "
                "check the conditions and the solution the solver returned"
            )
        with warnings.catch_warnings():  # a zero pivot is reported below, as the LinearSolveError
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            lu, pivots = scipy.linalg.lu_factor(jacobian, check_finite=False)
        diagonal = np.abs(np.diagonal(lu))
        scale = diagonal.max() if diagonal.size else 0.0
        if diagonal.size and diagonal.min() <= scale * diagonal.size * np.finfo(lu.dtype).eps:
            raise LinearSolveError(
                f"conditions: dc/dy is singular at the solver's y (a {jacobian.shape[0]} x "
                f"{jacobian.shape[1]} matrix whose LU factorisation has a zero pivot, smallest "
                f"{diagonal.min():.3g} against largest {scale:.3g}): y is not locally a function of x "
                "(the implicit function theorem needs dc/dy invertible); regularise the problem or "
                "check the conditions"
            )
        return lu, pivots

    def factor_sparse(self, values, rows, cols, size):
        """The sparse LU factors (SuperLU) of ``dc/dy`` given by its entries: what an ``AutoSparse``
        conditions backend returns; raises where it is singular."""
        import scipy.sparse
        import scipy.sparse.linalg

        if not np.all(np.isfinite(values)):
            raise LinearSolveError(
                "conditions: the Jacobian dc/dy at the solver's y has non-finite entries (NaN or inf); "
                "check the conditions and the solution the solver returned"
            )
        matrix = scipy.sparse.csc_matrix((values, (rows, cols)), shape=(size, size))
        try:
            return scipy.sparse.linalg.splu(matrix)
        except RuntimeError as error:  # SuperLU: "Factor is exactly singular"
            raise LinearSolveError(
                f"conditions: dc/dy is singular at the solver's y (a sparse {size} x {size} matrix with "
                f"{len(values)} stored entries; SuperLU: {error}): y is not locally a function of x; "
                "regularise the problem or check the conditions"
            ) from error

    def solve(self, operator, rhs, transpose):
        if isinstance(operator, tuple):
            return scipy.linalg.lu_solve(
                operator, rhs, trans=1 if transpose else 0, check_finite=False
            )
        return operator.solve(np.asarray(rhs), trans="T" if transpose else "N")


class IterativeSolver(LinearSolver):
    """One of scipy's Krylov solvers on the matrix-free operator ``dc/dy`` (or its transpose), per column."""

    def __init__(self, method: str, rtol: float, atol: float, maxiter: Optional[int]):
        self.method, self.rtol, self.atol, self.maxiter = method, rtol, atol, maxiter

    def framework_solve(self, framework, function, y_shape):
        """The conditions framework's own Krylov solver for ``function(y, *args)`` (see
        :meth:`~diffinterface.core.bridge.FrameworkBridge.krylov`), or None: scipy's on the operator."""
        bridge = framework_bridge(framework) if framework is not None else None
        if bridge is None:
            return None
        return bridge.krylov(self.method, function, y_shape, self.rtol, self.atol, self.maxiter)

    def solve(self, operator, rhs, transpose):
        if isinstance(operator, FrameworkSystem):
            return self._solve_in_framework(operator, rhs, transpose)
        # cg takes A symmetric: A^T's products are A's, which a forward-mode backend makes cheaply
        system = operator.T if transpose and self.method != "cg" else operator
        run = ITERATIVE[self.method]
        out = np.empty_like(rhs)
        for j in range(rhs.shape[1]):
            b = rhs[:, j]
            v, info = run(system, b, rtol=self.rtol, atol=self.atol, maxiter=self.maxiter)
            if info != 0:
                raise _not_converged(self.method, system, v, b, info, self.maxiter)
            out[:, j] = v
        return out

    def _solve_in_framework(self, system, rhs, transpose):
        solutions, residuals, thresholds = system.solve(system.y, system.args, rhs, transpose)
        self._check_converged(rhs, residuals, thresholds)
        return solutions

    def implicit_pullback(self, system, rhs):
        """``-B^T A^-T u`` for each column u of ``rhs`` in one program of the conditions framework (its
        solve and the product in x together), or None where ``system`` is none of a framework that can."""
        if not isinstance(system, FrameworkSystem):
            return None
        fused = getattr(system.solve, "implicit_pullback", None)
        if fused is None:
            return None
        products, residuals, thresholds = fused(system.y, system.args, rhs)
        self._check_converged(rhs, residuals, thresholds)
        return products

    def _check_converged(self, rhs, residuals, thresholds):
        # JAX's solvers report no convergence: the true residual after the solve is judged here, with
        # a factor 2 for the rounding between a solver's recurrence residual and the true one
        for j in np.flatnonzero(~(residuals <= 2 * thresholds)):
            norm_b = float(np.linalg.norm(rhs[:, j])) or 1.0
            raise LinearSolveError(
                _not_converged_message(
                    self.method,
                    "did not converge (the framework's solver, to its iteration limit)",
                    float(residuals[j]) / norm_b,
                    self.maxiter,
                )
            )


class FrameworkSystem:
    """The system at one point for a framework's own Krylov solver: ``solve`` (compiled once per shape), y and
    the conditions' other arguments."""

    __slots__ = ("solve", "y", "args")

    def __init__(self, solve, y, args):
        self.solve, self.y, self.args = solve, y, args


class CallableSolver(LinearSolver):
    """The user's ``solve(operator, rhs) -> solution`` on the matrix-free operator, per column."""

    method = "callable"

    def __init__(self, solve: Callable[[Any, np.ndarray], Any]):
        self.user_solve = solve

    def solve(self, operator, rhs, transpose):
        system = operator.T if transpose else operator
        out = np.empty_like(rhs)
        for j in range(rhs.shape[1]):
            v = np.asarray(self.user_solve(system, rhs[:, j]))
            if v.size != rhs.shape[0]:
                raise ValueError(
                    f"linear_solver: expected the solution of a system of size {rhs.shape[0]} "
                    f"(an array of {rhs.shape[0]} values); got an array of shape {v.shape}"
                )
            out[:, j] = v.reshape(-1)
        return out


def _not_converged(method, system, v, b, info, maxiter):
    norm_b = float(np.linalg.norm(b)) or 1.0
    residual = float(np.linalg.norm(system @ v - b)) / norm_b
    why = (
        f"did not converge in {info} iterations"
        if info > 0
        else f"broke down (scipy's info={info})"
    )
    return LinearSolveError(_not_converged_message(method, why, residual, maxiter))


def _not_converged_message(method, why, residual, maxiter):
    return (
        f"linear_solver: {method} {why} on the system in dc/dy: relative residual {residual:.3g} "
        f"(maxiter={maxiter}); raise maxiter or loosen rtol/atol, try another method ('gmres', "
        "'bicgstab', 'direct'), or check that dc/dy is invertible (it may be singular)"
        + (" and, for 'cg', symmetric positive-definite" if method == "cg" else "")
    )


def linear_solver(choice: Any, rtol: float, atol: float, maxiter: Optional[int]) -> LinearSolver:
    """The :class:`LinearSolver` for the ``linear_solver`` argument, validated."""
    if callable(choice):
        return CallableSolver(choice)
    if choice == "direct":
        return DirectSolver()
    if choice in ITERATIVE:
        if not (isinstance(rtol, (int, float)) and rtol >= 0):
            raise ValueError(f"rtol: expected a float >= 0; got {rtol!r}")
        if not (isinstance(atol, (int, float)) and atol >= 0):
            raise ValueError(f"atol: expected a float >= 0; got {atol!r}")
        if maxiter is not None and not (isinstance(maxiter, int) and maxiter > 0):
            raise ValueError(f"maxiter: expected None or an int > 0; got {maxiter!r}")
        return IterativeSolver(choice, float(rtol), float(atol), maxiter)
    raise ValueError(
        "linear_solver: expected 'direct', 'gmres', 'cg', 'bicgstab' or a callable "
        f"(operator, rhs) -> solution; got {choice!r}"
    )
