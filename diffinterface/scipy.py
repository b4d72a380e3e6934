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

from typing import Any, Callable

import numpy as np

try:
    import scipy  # noqa: F401  (the adaptors are only useful with scipy; say so on import)
except ImportError as error:  # pragma: no cover - exercised only without scipy
    raise ImportError(
        "diffinterface.scipy needs scipy, which is not installed: pip install 'diffinterface[scipy]'"
    ) from error

import diffinterface as di

__all__ = ["Objective", "ODE", "Residuals", "objective", "ode", "residuals"]

#: the dtypes scipy's iterates may be cast to without losing the meaning of the problem
_REAL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _check_function(f: Any, name: str = "f") -> None:
    if not callable(f):
        raise TypeError(f"{name}: expected a callable; got {type(f).__name__}")


def _check_backend(backend: Any) -> None:
    if not isinstance(backend, di.AbstractBackend):
        raise TypeError(
            f"backend: expected a backend selector such as di.AutoJAX(); got {type(backend).__name__}"
        )


def _starting_point(x0: Any, name: str) -> np.ndarray:
    """A numpy copy of the starting point, refusing values scipy could not iterate on as given."""
    if not isinstance(x0, (np.ndarray, np.generic, float, list, tuple)) or isinstance(x0, bool):
        raise TypeError(
            f"{name}: expected a numpy array, a float or a list of floats (scipy iterates on numpy "
            f"arrays); got {type(x0).__name__}"
        )
    a = np.array(x0, copy=True)
    if a.dtype not in _REAL_DTYPES:
        raise TypeError(
            f"{name}: expected real floating values (float32 or float64: the dtype f is called with); "
            f"got {a.dtype}; pass np.asarray({name}, dtype=np.float64)"
        )
    if a.size == 0:
        raise ValueError(f"{name}: expected at least one value; got an empty array of shape {a.shape}")
    return a


class _Point:
    """Converts scipy's flat iterates to arrays shaped and typed like the starting point."""

    def __init__(self, start: np.ndarray, name: str):
        self.shape = start.shape
        self.dtype = start.dtype
        self.size = start.size
        self.name = name

    def __call__(self, value: Any, name: str | None = None) -> np.ndarray:
        name = name or self.name
        a = np.asarray(value)
        if a.size != self.size:
            raise ValueError(
                f"{name}: expected {self.size} values (the starting point has shape {self.shape}); "
                f"got shape {a.shape}"
            )
        if a.dtype.kind not in "fiu":
            raise TypeError(f"{name}: expected real numbers; got dtype {a.dtype}")
        # The same numpy type, dtype and shape on every call: strict preparations compare them.
        return a.astype(self.dtype, copy=False).reshape(self.shape)


class _LastPoint:
    """Remembers results at the last point, keyed on a copy of it (scipy may reuse its arrays)."""

    def __init__(self) -> None:
        self.key: np.ndarray | None = None
        self.results: Any = None

    def get(self, x: Any) -> Any:
        if self.key is not None and np.array_equal(np.asarray(x), self.key):
            return self.results
        return None

    def put(self, x: Any, results: Any) -> Any:
        self.key = np.array(x, copy=True)
        self.results = results
        return results


class Objective:
    """A scalar function prepared for ``scipy.optimize.minimize``; build it with :func:`objective`.

    Attributes
    ----------
    x0 : numpy.ndarray
        The starting point, flat (what ``minimize`` expects as its ``x0``).
    calls : dict
        How many prepared calls each operator made: ``"value_and_gradient"``,
        ``"hessian"``, ``"hvp"``. ``fun`` and ``jac`` at one iterate add one
        ``value_and_gradient``.
    """

    def __init__(self, f: Callable[..., Any], backend: Any, x0: np.ndarray, contexts: tuple):
        self.f = f
        self.backend = backend
        self.contexts = contexts
        self._point = _Point(x0, "x")
        self.x0 = x0.reshape(-1).copy()
        self._gradient_prep = di.prepare_gradient(f, backend, x0, *contexts, strict=True)
        self._hessian_prep: Any = None
        self._hvp_prep: Any = None
        self._tangent = _Point(x0, "p")
        self._value_and_gradient = _LastPoint()
        self._hessian = _LastPoint()
        self.calls = {"value_and_gradient": 0, "hessian": 0, "hvp": 0}

    def __repr__(self) -> str:
        return f"<Objective {getattr(self.f, '__name__', 'f')} on {self.backend!r}, calls {self.calls}>"

    def _evaluate(self, x: Any) -> tuple:
        cached = self._value_and_gradient.get(x)
        if cached is not None:
            return cached
        value, gradient = di.value_and_gradient(
            self.f, self.backend, self._point(x), *self.contexts, prep=self._gradient_prep
        )
        self.calls["value_and_gradient"] += 1
        return self._value_and_gradient.put(x, (float(value), np.asarray(gradient).reshape(-1)))

    def fun(self, x: Any) -> float:
        """``f(x)`` as a Python float (from the same call as ``jac(x)``)."""
        return self._evaluate(x)[0]

    def jac(self, x: Any) -> np.ndarray:
        """The gradient at ``x``, flat (from the same call as ``fun(x)``)."""
        return self._evaluate(x)[1].copy()

    def hess(self, x: Any) -> np.ndarray:
        """The Hessian at ``x`` as an ``(n, n)`` array; prepared on the first call."""
        cached = self._hessian.get(x)
        if cached is not None:
            return cached.copy()
        point = self._point(x)
        if self._hessian_prep is None:
            self._hessian_prep = di.prepare_hessian(self.f, self.backend, point, *self.contexts, strict=True)
        hessian = di.hessian(self.f, self.backend, point, *self.contexts, prep=self._hessian_prep)
        self.calls["hessian"] += 1
        n = self._point.size
        return self._hessian.put(x, np.asarray(hessian).reshape(n, n)).copy()

    def hessp(self, x: Any, p: Any) -> np.ndarray:
        """The Hessian at ``x`` times the vector ``p``, flat; prepared on the first call."""
        point, tangent = self._point(x), self._tangent(p)
        if self._hvp_prep is None:
            self._hvp_prep = di.prepare_hvp(self.f, self.backend, point, (tangent,), *self.contexts, strict=True)
        (product,) = di.hvp(self.f, self.backend, point, (tangent,), *self.contexts, prep=self._hvp_prep)
        self.calls["hvp"] += 1
        return np.asarray(product).reshape(-1)


def objective(f: Callable[..., Any], backend: Any, x0: Any, *contexts: Any) -> Objective:
    """Prepare a scalar function ``f(x, *contexts)`` for ``scipy.optimize.minimize``.

    ``value_and_gradient`` is prepared now; the Hessian and Hessian-vector
    products are prepared on their first use. ``fun(x)`` and ``jac(x)`` at the
    same ``x`` cost one ``value_and_gradient`` call between them (the result
    is kept for the last point, compared with a copy of it).

    Parameters
    ----------
    f : callable
        ``f(x, *contexts) -> scalar``; the same object is passed to every call.
    backend : AbstractBackend
        The selector that differentiates ``f`` (``di.AutoJAX()``, ...).
    x0 : array_like of float32 or float64
        The starting point. Its shape and dtype are what ``f`` receives on
        every call (scipy's flat float64 iterates are reshaped and cast).
    *contexts : Constant or Cache
        Extra arguments of ``f``, passed on every call.

    Returns
    -------
    Objective
        ``.fun(x) -> float``, ``.jac(x) -> (n,)``, ``.hess(x) -> (n, n)``,
        ``.hessp(x, p) -> (n,)``, ``.x0`` (flat) and ``.calls``.

    Raises
    ------
    TypeError
        ``f`` not callable, ``backend`` not a selector, ``x0`` not real floating.
    ValueError
        ``x0`` empty; later, an iterate or ``p`` with a different number of values.

    Examples
    --------
    >>> import numpy as np, scipy.optimize, diffinterface as di
    >>> from diffinterface.scipy import objective
    >>> problem = objective(lambda x: ((x - 3.0) ** 2).sum(), di.AutoFiniteDiff(), np.zeros(2))
    >>> result = scipy.optimize.minimize(problem.fun, problem.x0, jac=problem.jac,
    ...                                  hessp=problem.hessp, method="Newton-CG")
    >>> np.round(result.x, 4)
    array([3., 3.])
    >>> problem.calls["value_and_gradient"] <= result.nfev + result.njev
    True
    """
    _check_function(f)
    _check_backend(backend)
    return Objective(f, backend, _starting_point(x0, "x0"), contexts)


class ODE:
    """A right-hand side ``f(y, t)`` prepared for ``scipy.integrate.solve_ivp``; build it with :func:`ode`.

    Attributes
    ----------
    y0 : numpy.ndarray
        The initial state, flat (what ``solve_ivp`` expects as its ``y0``).
    calls : dict
        ``"fun"`` (direct evaluations of ``f``) and ``"jacobian"`` (prepared calls).
    """

    def __init__(self, f: Callable[..., Any], backend: Any, y0: np.ndarray, t0: float, contexts: tuple):
        self.f = f
        self.backend = backend
        self.contexts = contexts
        self._values = tuple(c.value for c in contexts)
        self._point = _Point(y0, "y")
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
        if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating, np.ndarray)) or np.ndim(t):
            raise TypeError(f"t: expected a real number; got {type(t).__name__}")
        return np.asarray(t, dtype=self._point.dtype)

    def fun(self, t: Any, y: Any) -> np.ndarray:
        """``f(y, t)``, flat: evaluated directly, with ``y`` a numpy array like ``y0``."""
        self.calls["fun"] += 1
        return np.asarray(self.f(self._point(y), self._time(t), *self._values)).reshape(-1)

    def jac(self, t: Any, y: Any) -> np.ndarray:
        """The Jacobian of ``f(y, t)`` with respect to ``y``, an ``(n, n)`` array."""
        jacobian = di.jacobian(
            self.f, self.backend, self._point(y), di.Constant(self._time(t)), *self.contexts,
            prep=self._jacobian_prep,
        )
        self.calls["jacobian"] += 1
        n = self._point.size
        return np.asarray(jacobian).reshape(n, n)


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

    Raises
    ------
    TypeError
        ``f`` not callable, ``backend`` not a selector, ``y0`` not real floating,
        a time that is not a real number.
    ValueError
        ``y0`` empty; later, a state with a different number of values.

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
    _check_function(f)
    _check_backend(backend)
    return ODE(f, backend, _starting_point(y0, "y0"), t0, contexts)


class Residuals:
    """A vector function prepared for ``least_squares`` and ``root``; build it with :func:`residuals`.

    Attributes
    ----------
    calls : dict
        ``"fun"`` (direct evaluations), ``"jacobian"`` and ``"value_and_jacobian"`` (prepared calls).
    """

    def __init__(self, f: Callable[..., Any], backend: Any, x0: np.ndarray, contexts: tuple):
        self.f = f
        self.backend = backend
        self.contexts = contexts
        self._values = tuple(c.value for c in contexts)
        self._point = _Point(x0, "x")
        self.x0 = x0.reshape(-1).copy()
        self._jacobian_prep = di.prepare_jacobian(f, backend, x0, *contexts, strict=True)
        self.calls = {"fun": 0, "jacobian": 0, "value_and_jacobian": 0}

    def __repr__(self) -> str:
        return f"<Residuals {getattr(self.f, '__name__', 'f')} on {self.backend!r}, calls {self.calls}>"

    def fun(self, x: Any) -> np.ndarray:
        """``f(x)``, flat: evaluated directly, with ``x`` a numpy array like ``x0``."""
        self.calls["fun"] += 1
        return np.asarray(self.f(self._point(x), *self._values)).reshape(-1)

    def jac(self, x: Any, *args: Any) -> np.ndarray:
        """The Jacobian at ``x`` as an ``(m, n)`` array (``args`` from scipy are ignored)."""
        jacobian = di.jacobian(self.f, self.backend, self._point(x), *self.contexts, prep=self._jacobian_prep)
        self.calls["jacobian"] += 1
        return np.asarray(jacobian).reshape(-1, self._point.size)

    def fun_and_jac(self, x: Any) -> tuple:
        """``(fun(x), jac(x))`` from one ``value_and_jacobian`` call: for ``root(..., jac=True)``."""
        value, jacobian = di.value_and_jacobian(
            self.f, self.backend, self._point(x), *self.contexts, prep=self._jacobian_prep
        )
        self.calls["value_and_jacobian"] += 1
        return np.asarray(value).reshape(-1), np.asarray(jacobian).reshape(-1, self._point.size)


def residuals(f: Callable[..., Any], backend: Any, x0: Any, *contexts: Any) -> Residuals:
    """Prepare a vector function ``f(x, *contexts)`` for ``least_squares`` and ``root``.

    The Jacobian is prepared once. ``least_squares`` evaluates trial points it
    may reject, so ``fun`` evaluates ``f`` directly and ``jac`` makes one
    prepared call; ``root(r.fun_and_jac, r.x0, jac=True)`` gets both from
    one ``value_and_jacobian`` call.

    Parameters
    ----------
    f : callable
        ``f(x, *contexts) -> residuals``, an array (flattened for scipy).
        ``fun`` calls it directly with numpy arrays.
    backend : AbstractBackend
        The selector that computes the Jacobian.
    x0 : array_like of float32 or float64
        The starting point; its shape and dtype are what ``f`` receives.
    *contexts : Constant or Cache
        Extra arguments of ``f``.

    Returns
    -------
    Residuals
        ``.fun(x) -> (m,)``, ``.jac(x) -> (m, n)``, ``.fun_and_jac(x)``,
        ``.x0`` (flat) and ``.calls``.

    Raises
    ------
    TypeError
        ``f`` not callable, ``backend`` not a selector, ``x0`` not real floating.
    ValueError
        ``x0`` empty; later, an iterate with a different number of values.

    Examples
    --------
    >>> import numpy as np, scipy.optimize, diffinterface as di
    >>> from diffinterface.scipy import residuals
    >>> def circle_and_line(x):
    ...     xp = di.array_namespace(x)
    ...     return xp.stack([x[0] ** 2 + x[1] ** 2 - 2.0, x[0] - x[1]])
    >>> system = residuals(circle_and_line, di.AutoFiniteDiff(), np.array([2.0, 0.5]))
    >>> solution = scipy.optimize.root(system.fun_and_jac, system.x0, jac=True)
    >>> np.round(solution.x, 6)
    array([1., 1.])
    >>> fit = scipy.optimize.least_squares(system.fun, system.x0, jac=system.jac)
    >>> np.round(fit.x, 6)
    array([1., 1.])
    """
    _check_function(f)
    _check_backend(backend)
    return Residuals(f, backend, _starting_point(x0, "x0"), contexts)
