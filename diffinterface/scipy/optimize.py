"""Adaptors for ``scipy.optimize``: :func:`objective` (``minimize``) and :func:`residuals` (``least_squares``, ``root``)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import diffinterface as di
from diffinterface.core.registry import get_adapter

from ..docstrings import shared_sections
from .points import SECTIONS, LastPoint, Point, check_backend, check_function, flat, starting_point


@shared_sections(
    SECTIONS,
    factory="objective",
    f_doc="``f(x, *contexts) -> scalar``; the same object is passed to every call.",
    backend_does="differentiates ``f``",
    caller="``minimize``",
)
class Objective:
    """A scalar function prepared for ``scipy.optimize.minimize``; build it with :func:`objective`.

    $built_by
    calls : dict
        How many prepared calls each operator made: ``"value_and_gradient"``,
        ``"hessian"``, ``"hvp"``; ``"hvp_preparations"``: the preparations of
        ``hessp``, one per iterate or one in all (see :meth:`hessp`). ``fun`` and ``jac`` at one
        iterate add one ``value_and_gradient``.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.scipy import objective
    >>> problem = objective(lambda x: (x ** 2).sum(), di.AutoFiniteDiff(), np.array([1.0, 2.0]))
    >>> problem.fun(problem.x0), np.round(problem.jac(problem.x0), 6)
    (5.0, array([2., 4.]))
    >>> problem.calls["value_and_gradient"]
    1
    """

    def __init__(self, f: Callable[..., Any], backend: Any, x0: np.ndarray, contexts: tuple):
        self.f = f
        self.backend = backend
        self.contexts = contexts
        self._point = Point(x0, "x")
        self.x0 = x0.reshape(-1).copy()
        self._gradient_prep = di.prepare_gradient(f, backend, x0, *contexts, strict=True)
        self._hessian_prep: Any = None
        self._hvp_point = LastPoint()
        self._hvp_prep: Any = None
        self._each_iterate: bool | None = None  # a same-point hvp preparation per iterate
        self._tangent = Point(x0, "p")
        self._value_and_gradient = LastPoint()
        self._hessian = LastPoint()
        self.calls = {"value_and_gradient": 0, "hessian": 0, "hvp": 0, "hvp_preparations": 0}

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
        return self._value_and_gradient.put(x, (float(value), flat(gradient)))

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
            self._hessian_prep = di.prepare_hessian(
                self.f, self.backend, point, *self.contexts, strict=True
            )
        hessian = di.hessian(self.f, self.backend, point, *self.contexts, prep=self._hessian_prep)
        self.calls["hessian"] += 1
        n = self._point.size
        return self._hessian.put(x, np.asarray(hessian).reshape(n, n)).copy()

    def hessp(self, x: Any, p: Any) -> np.ndarray:
        """The Hessian at ``x`` times the vector ``p``, flat.

        Newton-CG asks for many products at one iterate. Where the backend's
        same-point preparations cost about one call (torch, autograd:
        ``Capabilities.cheap_same_point``), a same-point preparation
        (``prepare_hvp_same_point``) at a copy of the iterate serves them all,
        and the next iterate gets its own; elsewhere (JAX compiles a same-point
        preparation for its point) one ``prepare_hvp`` serves every iterate.
        """
        tangent = self._tangent(p)
        if self._each_iterate is None:
            self._each_iterate = get_adapter(self.backend).capabilities.cheap_same_point
        if not self._each_iterate:
            point = self._point(x)
            if self._hvp_prep is None:
                # every call passes this object's f, backend and contexts, and Point gives x and p
                # the prepared shape and dtype: the per-call comparison has nothing to find
                self._hvp_prep = di.prepare_hvp(
                    self.f, self.backend, point, (tangent,), *self.contexts, strict=False
                )
                self.calls["hvp_preparations"] += 1
            (product,) = di.hvp(
                self.f, self.backend, point, (tangent,), *self.contexts, prep=self._hvp_prep
            )
            self.calls["hvp"] += 1
            return flat(product)
        prepared = self._hvp_point.get(x)
        if prepared is None:
            prepared = self._hvp_point.put(x, self._prepare_at(x, tangent))
        point, prep = prepared
        try:
            (product,) = di.hvp(self.f, self.backend, point, (tangent,), *self.contexts, prep=prep)
        except di.PreparationMismatchError:
            if not self.contexts:  # only contexts are checked (strict): the error is f's own
                raise
            # the strict check found a Constant written in place since this iterate's
            # preparation: prepare again with its new values, as the ordinary preparation's
            # products (JAX, finite differences) follow them
            point, prep = self._hvp_point.put(x, self._prepare_at(x, tangent))
            (product,) = di.hvp(self.f, self.backend, point, (tangent,), *self.contexts, prep=prep)
        self.calls["hvp"] += 1
        return flat(product)

    def _prepare_at(self, x: Any, tangent: Any) -> tuple:
        # scipy may reuse its array: the preparation holds its own x
        point = self._point(x).copy()
        # the point is this object's own copy, never handed out, so nothing writes into it:
        # without contexts (which a caller could write into) the per-call check that x is
        # unchanged has nothing to find, and is left out
        prep = di.prepare_hvp_same_point(
            self.f, self.backend, point, (tangent,), *self.contexts, strict=bool(self.contexts)
        )
        self.calls["hvp_preparations"] += 1
        return point, prep


@shared_sections(SECTIONS, point="x0", also="", iterate="an iterate or ``p``")
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

    $argument_errors

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
    check_function(f)
    check_backend(backend)
    return Objective(f, backend, starting_point(x0, "x0"), contexts)


@shared_sections(
    SECTIONS,
    factory="residuals",
    f_doc="``f(x, *contexts) -> residuals``, an array (flattened for scipy).",
    backend_does="computes the Jacobian",
    caller="scipy",
)
class Residuals:
    """A vector function prepared for ``least_squares`` and ``root``; build it with :func:`residuals`.

    $built_by
    calls : dict
        ``"fun"`` (direct evaluations), ``"jacobian"`` and ``"value_and_jacobian"`` (prepared calls).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.scipy import residuals
    >>> system = residuals(lambda x: 3.0 * x - 1.0, di.AutoFiniteDiff(), np.zeros(2))
    >>> np.round(system.jac(system.x0), 6)
    array([[3., 0.],
           [0., 3.]])
    >>> system.calls
    {'fun': 0, 'jacobian': 1, 'value_and_jacobian': 0}
    """

    def __init__(self, f: Callable[..., Any], backend: Any, x0: np.ndarray, contexts: tuple):
        self.f = f
        self.backend = backend
        self.contexts = contexts
        self._values = tuple(c.value for c in contexts)
        self._point = Point(x0, "x")
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
        jacobian = di.jacobian(
            self.f, self.backend, self._point(x), *self.contexts, prep=self._jacobian_prep
        )
        self.calls["jacobian"] += 1
        return np.asarray(jacobian).reshape(-1, self._point.size)

    def fun_and_jac(self, x: Any) -> tuple:
        """``(fun(x), jac(x))`` from one ``value_and_jacobian`` call: for ``root(..., jac=True)``."""
        value, jacobian = di.value_and_jacobian(
            self.f, self.backend, self._point(x), *self.contexts, prep=self._jacobian_prep
        )
        self.calls["value_and_jacobian"] += 1
        return np.asarray(value).reshape(-1), np.asarray(jacobian).reshape(-1, self._point.size)


@shared_sections(SECTIONS, point="x0", also="", iterate="an iterate")
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

    $argument_errors

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
    check_function(f)
    check_backend(backend)
    return Residuals(f, backend, starting_point(x0, "x0"), contexts)
