"""Adaptor for ``scipy.integrate.solve_ivp``: :func:`ode`, a right-hand side with its prepared Jacobian."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import diffinterface as di

from ..docstrings import shared_sections
from .points import SECTIONS, Point, check_backend, check_function, starting_point


class ODE:
    """A right-hand side ``f(y, t)`` prepared for ``scipy.integrate.solve_ivp``; build it with :func:`ode`.

    ``.fun(t, y)`` is the right-hand side and ``.jac(t, y)`` its Jacobian, in
    ``solve_ivp``'s argument order; ``t`` reaches ``f`` as a ``di.Constant``.

    Parameters
    ----------
    f : callable
        ``f(y, t, *contexts)``, returning an array shaped like ``y``.
    backend : backend selector
        Which library computes the Jacobian.
    y0 : numpy.ndarray
        The initial state; the Jacobian is prepared at it.
    t0 : float
        The initial time, at which the Jacobian is prepared.
    contexts : tuple of di.Constant or di.Cache
        Further arguments of ``f``, after ``t``.

    Attributes
    ----------
    y0 : numpy.ndarray
        The initial state, flat (what ``solve_ivp`` expects as its ``y0``).
    calls : dict
        ``"fun"`` (direct evaluations of ``f``) and ``"jacobian"`` (prepared calls).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.scipy import ode
    >>> from scipy.integrate import solve_ivp
    >>> decay = ode(lambda y, t: -2.0 * y, di.AutoFiniteDiff(), np.ones(2))
    >>> solution = solve_ivp(decay.fun, (0.0, 1.0), decay.y0, method="BDF", jac=decay.jac, rtol=1e-8)
    >>> bool(np.allclose(solution.y[:, -1], np.exp(-2.0), rtol=1e-5)), decay.jac(0.0, decay.y0).round(4) + 0.0
    (True, array([[-2.,  0.],
           [ 0., -2.]]))
    """

    def __init__(
        self, f: Callable[..., Any], backend: Any, y0: np.ndarray, t0: float, contexts: tuple
    ):
        self.f = f
        self.backend = backend
        self.contexts = contexts
        self._values = tuple(c.value for c in contexts)
        self._point = Point(y0, "y")
        self.y0 = y0.reshape(-1).copy()
        self._jacobian_prep = di.prepare_jacobian(
            f, backend, y0, di.Constant(self._time(t0)), *contexts, strict=True
        )
        self.calls = {"fun": 0, "jacobian": 0}

    def __repr__(self) -> str:
        return f"<ODE {getattr(self.f, '__name__', 'f')} on {self.backend!r}, calls {self.calls}>"

    def _time(self, t: Any) -> np.ndarray:
        # A 0-d array of y's dtype on every call: f can use xp.cos(t) on every backend
        # (the backend converts it like any Constant array), and a strict preparation sees
        # the same type whether solve_ivp passes a float or a numpy scalar.
        if (
            isinstance(t, bool)
            or not isinstance(t, (int, float, np.integer, np.floating, np.ndarray))
            or np.ndim(t)
        ):
            raise TypeError(f"t: expected a real number; got {type(t).__name__}")
        return np.asarray(t, dtype=self._point.dtype)

    def fun(self, t: Any, y: Any) -> np.ndarray:
        """``f(y, t)``, flat: evaluated directly, with ``y`` a numpy array like ``y0``."""
        self.calls["fun"] += 1
        return np.asarray(self.f(self._point(y), self._time(t), *self._values)).reshape(-1)

    def jac(self, t: Any, y: Any) -> np.ndarray:
        """The Jacobian of ``f(y, t)`` with respect to ``y``, an ``(n, n)`` array."""
        jacobian = di.jacobian(
            self.f,
            self.backend,
            self._point(y),
            di.Constant(self._time(t)),
            *self.contexts,
            prep=self._jacobian_prep,
        )
        self.calls["jacobian"] += 1
        n = self._point.size
        return np.asarray(jacobian).reshape(n, n)


@shared_sections(SECTIONS, point="y0", also=", a time that is not a real number", iterate="a state")
def ode(f: Callable[..., Any], backend: Any, y0: Any, *contexts: Any, t0: float = 0.0) -> ODE:
    """Prepare a right-hand side ``f(y, t, *contexts)`` for ``scipy.integrate.solve_ivp``.

    ``solve_ivp`` calls ``fun(t, y)`` and ``jac(t, y)`` (time first); ``f`` is
    written ``f(y, t)`` (the active argument first, as every diffinterface
    operator expects). The Jacobian is prepared once, with ``t`` passed as
    ``di.Constant(t)``: steps at new times reuse the preparation.

    Parameters
    ----------
    f : callable
        ``f(y, t, *contexts) -> dy/dt``, an array shaped like ``y``. ``fun``
        calls it directly with numpy arrays (write it with ``di.array_namespace``).
    backend : AbstractBackend
        The selector that computes the Jacobian.
    y0 : array_like of float32 or float64
        The initial state; its shape and dtype are what ``f`` receives.
    *contexts : Constant or Cache
        Extra arguments of ``f`` after ``t``.
    t0 : float, optional
        The time the Jacobian is prepared at (any time works; default 0.0).

    Returns
    -------
    ODE
        ``.fun(t, y) -> (n,)``, ``.jac(t, y) -> (n, n)``, ``.y0`` (flat) and ``.calls``.

    $argument_errors

    Examples
    --------
    >>> import numpy as np, scipy.integrate, diffinterface as di
    >>> from diffinterface.scipy import ode
    >>> decay = ode(lambda y, t: -50.0 * y, di.AutoFiniteDiff(), np.array([1.0]))
    >>> solution = scipy.integrate.solve_ivp(decay.fun, (0.0, 0.1), decay.y0, method="BDF",
    ...                                      jac=decay.jac, rtol=1e-8, atol=1e-10)
    >>> bool(np.isclose(solution.y[0, -1], np.exp(-5.0), rtol=1e-5))
    True
    """
    check_function(f)
    check_backend(backend)
    return ODE(f, backend, starting_point(y0, "y0"), t0, contexts)
