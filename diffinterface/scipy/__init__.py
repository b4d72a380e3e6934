"""Adaptors that plug diffinterface derivatives into ``scipy.optimize`` and ``scipy.integrate``.

Each adaptor prepares its operators once, for the function, backend and the
dtype and shape of the starting point, and then answers scipy's callbacks
with prepared calls only:

- :func:`objective` for ``scipy.optimize.minimize``: ``.fun``, ``.jac``,
  ``.hess``, ``.hessp``. ``fun`` and ``jac`` at the same iterate share one
  ``value_and_gradient`` call.
- :func:`ode` for ``scipy.integrate.solve_ivp``: ``.fun(t, y)`` and
  ``.jac(t, y)`` for a right-hand side written ``f(y, t)``; ``t`` is passed
  as a :class:`~diffinterface.Constant` (a 0-d array of ``y``'s dtype), so no
  step re-prepares (or, on JAX, recompiles).
- :func:`residuals` for ``scipy.optimize.least_squares`` and
  ``scipy.optimize.root``: ``.fun``, ``.jac`` and ``.fun_and_jac``.
- :func:`jacobian_operator` and :func:`hessian_operator`: matrix-free
  ``scipy.sparse.linalg.LinearOperator`` objects on same-point preparations, for
  ``least_squares(tr_solver="lsmr")``, ``cg``, ``gmres``, ``lsqr``, ``eigsh``.

scipy works on flat float64 arrays. The adaptors hand ``f`` arrays of the
starting point's shape and dtype (a float32 starting point means float32
iterates: scipy's float64 iterates are rounded to float32 before ``f`` sees
them) and return flat arrays to scipy. ``f`` itself must accept numpy arrays
where it is called directly (``ode(...).fun`` and ``residuals(...).fun``):
write it with ``xp = di.array_namespace(x)``.

This module imports scipy; ``import diffinterface`` does not import it.

Examples
--------
>>> import numpy as np, scipy.optimize
>>> import diffinterface as di
>>> from diffinterface.scipy import objective
>>> def rosenbrock(x):
...     return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
>>> problem = objective(rosenbrock, di.AutoFiniteDiff(), np.array([-1.2, 1.0]))
>>> result = scipy.optimize.minimize(problem.fun, problem.x0, jac=problem.jac, method="BFGS")
>>> np.round(result.x, 4)
array([1., 1.])
"""

from __future__ import annotations

try:
    import scipy  # noqa: F401  (the adaptors are only useful with scipy; say so on import)
except ImportError as error:  # pragma: no cover - exercised only without scipy
    raise ImportError(
        "diffinterface.scipy needs scipy, which is not installed: pip install 'diffinterface[scipy]'"
    ) from error

from .integrate import ODE, ode
from .linear_operators import (
    HessianOperator,
    JacobianOperator,
    hessian_operator,
    jacobian_operator,
)
from .optimize import Objective, Residuals, objective, residuals

__all__ = [
    "ODE",
    "HessianOperator",
    "JacobianOperator",
    "Objective",
    "Residuals",
    "hessian_operator",
    "jacobian_operator",
    "objective",
    "ode",
    "residuals",
]
