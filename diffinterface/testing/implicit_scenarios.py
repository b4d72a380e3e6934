"""The kit's implicit-function cases: ``di.ImplicitFunction`` against closed forms, on every backend.

Four problems with derivatives known in closed form (float64):

- ``ridge_b``: ridge regression's coefficients ``b = argmin |X b - t|^2 / 2 + lam |b|^2 / 2`` as a
  function of the targets ``t`` (``db/dt = (X^T X + lam I)^-1 X^T``);
- ``ridge_lambda``: the same coefficients as a function of ``lam`` (``db/dlam = -(X^T X + lam I)^-1 b``);
- ``fixed_point``: the fixed point of the contraction ``y = tanh(A y) / 2 + x``
  (``dy/dx = (I - diag(1 - tanh(A y)^2) A / 2)^-1``);
- ``polynomial_root``: the real root of ``y^3 + y - x = 0``, elementwise (``dy/dx = 1 / (3 y^2 + 1)``).

Each solver is numpy code (never differentiated); each ``conditions`` is
written once against ``xp = di.array_namespace(y)``. For each backend and
problem, a case:

- builds the function with the backend as the **conditions backend**, and
  checks, with the backend also as the **outer backend**, the value,
  ``jacobian``, ``pushforward`` and ``pullback`` (two seeds each) against the
  closed form, with the kit's tolerances for the conditions backend
  (:func:`~diffinterface.testing.tolerances.default_tolerances`), and that
  the jacobian at a new point called the solver once;
- does the same with ``linear_solver="gmres"`` (``"cg"`` where the system is
  symmetric positive-definite);
- as the **outer backend** of a function whose conditions are differentiated
  by ``AutoFiniteDiff()`` (another framework's rules), checks the jacobian;
- where the backend traces (its capabilities name a framework), checks the
  gradient of a loss of the function, through the outer's own differentiation,
  and, where the problem has one in closed form (``polynomial_root``:
  ``y'' = -6 y / (3 y^2 + 1)^3``), the Hessian of ``sum(y)``: a second
  derivative through the implicit rule.

    >>> import diffinterface as di
    >>> from diffinterface.testing.implicit_scenarios import implicit_cases
    >>> [c.id for c in implicit_cases({"fd": di.AutoFiniteDiff()})][:2]
    ['fd-implicit-ridge_b', 'fd-implicit-ridge_lambda']
    >>> implicit_cases({"fd": di.AutoFiniteDiff()})[3].check().status
    'passed'
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

import numpy as np

from ..core import get_adapter
from ..families import array_namespace, as_numpy
from .cases import ProbeCase
from .tolerances import default_tolerances, is_approximate

_RNG = np.random.default_rng(49)
_X = _RNG.normal(size=(6, 3))
_A = _RNG.normal(size=(4, 4)) / 4.0  # norm below 1: tanh(A y) / 2 + x is a contraction


def _constant(xp, a, like):
    return xp.asarray(a, dtype=like.dtype)


# -- ridge regression ----------------------------------------------------------------------------


def _ridge_solve(t, lam):
    X = _X
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ t)


def _ridge_conditions(t, b, lam):
    xp = array_namespace(b)
    X = _constant(xp, _X, b)
    return xp.matmul(xp.matmul(b, xp.permute_dims(X, (1, 0))) - t, X) + lam * b


_LAM, _T = 0.7, _RNG.normal(size=6)


def _ridge_b():
    b = _ridge_solve(_T, _LAM)
    jacobian = np.linalg.solve(_X.T @ _X + _LAM * np.eye(3), _X.T)
    return _T, b, jacobian


def _ridge_lambda():
    x = np.asarray(_LAM)
    b = _ridge_solve(_T, _LAM)
    return x, b, -np.linalg.solve(_X.T @ _X + _LAM * np.eye(3), b).reshape(3, 1)


# -- a fixed point -------------------------------------------------------------------------------


def _fixed_point_solve(x):
    x = np.asarray(x)
    y = np.zeros_like(x)
    for _ in range(200):
        y_next = np.tanh(_A @ y) / 2 + x
        if np.max(np.abs(y_next - y)) <= 1e-16:
            break
        y = y_next
    return y_next


def _fixed_point_conditions(x, y):
    xp = array_namespace(y)
    A = _constant(xp, _A, y)
    return y - xp.tanh(xp.matmul(y, xp.permute_dims(A, (1, 0)))) / 2 - x


def _fixed_point():
    x = np.linspace(-0.5, 0.7, 4)
    y = _fixed_point_solve(x)
    slope = (1 - np.tanh(_A @ y) ** 2) / 2
    return x, y, np.linalg.inv(np.eye(4) - slope[:, None] * _A)


# -- a polynomial's root -------------------------------------------------------------------------


def _root_solve(x):
    x = np.asarray(x)
    y = np.cbrt(x)
    for _ in range(60):  # Newton on y^3 + y - x, monotone: converges from the cube root
        y = y - (y**3 + y - x) / (3 * y**2 + 1)
    return y


def _root_conditions(x, y):
    return y**3 + y - x


def _root():
    x = np.array([-2.0, 0.3, 1.0, 5.0])
    y = _root_solve(x)
    return x, y, np.diag(1 / (3 * y**2 + 1))


@dataclasses.dataclass(frozen=True)
class ImplicitProblem:
    """One problem: its solver, conditions, point and closed forms, and the iterative solver that fits it."""

    name: str
    solver: Callable
    conditions: Callable
    point: Callable  # () -> (x, y, dy/dx as y.size x x.size)
    contexts: tuple = ()
    iterative: str = "gmres"
    hessian_of_sum: Optional[Callable] = None  # (x, y) -> the Hessian of sum(y) in x, where known


def implicit_problems():
    """The problems of the implicit cases (see the module docstring)."""
    from ..contexts import Constant

    return (
        ImplicitProblem(
            "ridge_b",
            lambda t, lam: _ridge_solve(np.asarray(t), lam),
            _ridge_conditions,
            _ridge_b,
            (Constant(_LAM),),
            "cg",
        ),
        ImplicitProblem(
            "ridge_lambda",
            lambda lam, t: _ridge_solve(np.asarray(t), np.asarray(lam)),
            lambda lam, b, t: _ridge_conditions(t, b, lam),
            _ridge_lambda,
            (Constant(_T),),
            "cg",
        ),
        ImplicitProblem("fixed_point", _fixed_point_solve, _fixed_point_conditions, _fixed_point),
        ImplicitProblem(
            "polynomial_root",
            _root_solve,
            _root_conditions,
            _root,
            (),
            "bicgstab",
            lambda x, y: np.diag(-6 * y / (3 * y**2 + 1) ** 3),
        ),
    )


class _Counted:
    """A solver that counts its calls."""

    def __init__(self, solver):
        self.solver, self.calls = solver, 0

    def __call__(self, *args):
        self.calls += 1
        return self.solver(*args)


@dataclasses.dataclass
class ImplicitCase(ProbeCase):
    """One backend on one implicit problem; ``check()`` raises listing every mismatch."""

    problem: ImplicitProblem = None  # type: ignore[assignment]
    kind = "implicit"

    def _run(self, found):
        import diffinterface as di

        problem, backend = self.problem, self.backend
        for linear_solver in ("direct", problem.iterative):
            solver = _Counted(problem.solver)
            # an approximate conditions backend (finite differences) gives products that are not
            # exactly linear: an iterative solver cannot reach a residual below their error
            rtol = 1e-7 if is_approximate(backend) else 1e-10
            impl = di.ImplicitFunction(
                solver, problem.conditions, backend, linear_solver=linear_solver, rtol=rtol
            )
            self._compare(di, impl, backend, backend, f"{linear_solver}, as both backends", found)
            solver.calls = 0
            x, _, _ = problem.point()
            di.jacobian(impl, backend, x + 0.125, *problem.contexts)
            if solver.calls != 1:
                found.append(
                    f"{linear_solver}: the jacobian at a new point called the solver {solver.calls} times"
                )
        reference = di.AutoFiniteDiff()
        impl = di.ImplicitFunction(problem.solver, problem.conditions, reference)
        self._compare(
            di, impl, backend, reference, "as the outer of AutoFiniteDiff's conditions", found
        )
        if get_adapter(backend).capabilities.framework is not None:
            self._loss_gradient(di, backend, found)
            if problem.hessian_of_sum is not None:
                self._hessian_of_sum(di, backend, found)

    def _compare(self, di, impl, outer, conditions_backend, label, found):
        problem = self.problem
        x, y, jacobian = problem.point()
        rtol, atol = default_tolerances(conditions_backend, "float64")
        ctx = problem.contexts

        def close(name, got, wanted):
            got = as_numpy(got).reshape(np.shape(wanted))
            if not np.allclose(got, wanted, rtol=rtol, atol=atol):
                error = np.max(np.abs(got - wanted))
                found.append(f"{label}: {name} differs from the closed form by {error:.3g}")

        close("the value", impl(x, *ctx), y)
        close(
            "the jacobian", di.jacobian(impl, outer, x, *ctx), jacobian.reshape(y.shape + x.shape)
        )
        rng = np.random.default_rng(5)
        tangents = tuple(rng.normal(size=x.shape) for _ in range(2))
        for t, got in zip(tangents, di.pushforward(impl, outer, x, tangents, *ctx)):
            close("a pushforward", got, (jacobian @ t.reshape(-1)).reshape(y.shape))
        cotangents = tuple(rng.normal(size=y.shape) for _ in range(2))
        for u, got in zip(cotangents, di.pullback(impl, outer, x, cotangents, *ctx)):
            close("a pullback", got, (jacobian.T @ u.reshape(-1)).reshape(x.shape))

    def _loss_gradient(self, di, backend, found):
        """The gradient of ``sum(y^2) / 2`` through the outer's own differentiation: ``J^T y``."""
        problem = self.problem
        x, y, jacobian = problem.point()
        impl = di.ImplicitFunction(problem.solver, problem.conditions, backend)

        def loss(x, *ctx):
            out = impl(x, *ctx)
            return array_namespace(out).sum(out * out) / 2

        got = as_numpy(di.gradient(loss, backend, x, *problem.contexts))
        wanted = (jacobian.T @ y.reshape(-1)).reshape(x.shape)
        rtol, atol = default_tolerances(backend, "float64")
        if not np.allclose(got, wanted, rtol=rtol, atol=atol):
            found.append(
                f"the gradient of a loss of the function differs from J^T y by "
                f"{np.max(np.abs(got - wanted)):.3g}"
            )

    def _hessian_of_sum(self, di, backend, found):
        """The Hessian of ``sum(y)``, the backend as the conditions' and the outer: a second derivative
        through the implicit rule (the derivative of its pullback)."""
        problem = self.problem
        x, y, _ = problem.point()
        impl = di.ImplicitFunction(problem.solver, problem.conditions, backend)

        def total(x, *ctx):
            out = impl(x, *ctx)
            return array_namespace(out).sum(out)

        got = as_numpy(di.hessian(total, backend, x, *problem.contexts))
        wanted = problem.hessian_of_sum(x, y)
        rtol, atol = default_tolerances(backend, "float64")
        if not np.allclose(got, wanted, rtol=rtol, atol=atol):
            found.append(
                f"the Hessian of sum(y) differs from the closed form by "
                f"{np.max(np.abs(got - wanted)):.3g}"
            )

    @property
    def id(self):
        return f"{self.backend_id}-{self.kind}-{self.problem.name}"


def implicit_cases(backends, zero=()):
    """An :class:`ImplicitCase` per backend (a selector or a dict id -> selector) and problem.

    ``zero``: the ids of backends that return zeros by design, which have no closed form to meet.
    """
    if not isinstance(backends, dict):
        backends = {type(backends).__name__: backends}
    return [
        ImplicitCase(k, b, p.name, problem=p)
        for k, b in backends.items()
        if k not in zero
        for p in implicit_problems()
    ]
