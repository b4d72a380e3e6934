"""``ImplicitFunction(solver, conditions, backend)``: y(x) defined by ``conditions(x, y) = 0``, differentiated
by the implicit function theorem, never through the solver.

    >>> import numpy as np, diffinterface as di
    >>> def solver(x):                        # any code: never differentiated
    ...     return np.sqrt(x)
    >>> def conditions(x, y):                 # c(x, y) = 0 at the solution, one equation per unknown
    ...     return y ** 2 - x
    >>> sqrt = di.ImplicitFunction(solver, conditions, di.AutoFiniteDiff())
    >>> sqrt(np.array([4.0, 9.0]))
    array([2., 3.])
    >>> di.jacobian(sqrt, di.AutoJAX(), np.array([4.0, 9.0])).diagonal().round(6)   # 1 / (2 sqrt(x))
    array([0.25    , 0.166667])

``impl(x, *contexts)`` is a :class:`~diffinterface.wrappers.differentiate_with.Bridge`
whose rules (``rules.py``) compute the value by ``solver`` and the
derivatives by the implicit function theorem, with ``conditions``
differentiated by ``backend``; each framework that can differentiate it (JAX
transforms, torch autograd, TensorFlow tapes, autograd, every diffinterface
backend that traces) reaches those rules through its DifferentiateWith
bridge (``backends/<name>/differentiate_with.py``), so nothing here names a
framework. The linear systems in ``dc/dy`` are solved as
``linear_solvers.py`` says. A pytree x is raveled (``core/pytree.py``)
before the bridge and each tree structure gets its own bridge; a pytree y is
raveled inside the rules and unraveled on the way out.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from ...contexts import Cache, Constant
from ...core import get_adapter
from ...core.pytree import TreePlan
from ...core.tree_key import optree_module
from ...families import dtype_name, shape_of
from ...families import is_array
from ..differentiate_with import Bridge
from .linear_solvers import LinearSolveError, linear_solver
from .rules import ImplicitRules
from . import untraced_outer as _untraced_outer

__all__ = ["ImplicitFunction", "LinearSolveError"]


class ImplicitFunction:
    """``y(x)``, returned by ``solver`` and defined by ``conditions(x, y) = 0``, with implicit derivatives.

    Parameters
    ----------
    solver : callable
        ``solver(x, *contexts) -> y`` (or ``(y, z)`` with ``has_byproduct=True``):
        any code, never differentiated (numpy, scipy.optimize, a C extension, a
        JAX or torch solver). It receives x and the contexts' values as the
        conditions backend computes on them (numpy for ``AutoFiniteDiff`` and
        ``AutoAutograd``, tensors for ``AutoTorch``, JAX arrays for ``AutoJAX``).
        y: an array or a pytree of arrays.
    conditions : callable
        ``conditions(x, y, *contexts) -> c`` (``conditions(x, y, z, *contexts)``
        with a byproduct), zero at the solution, of y's shape (the same tree
        for a pytree y): one equation per unknown. Written once for any
        array family (``xp = di.array_namespace(y)``) or for ``backend``'s.
    backend : AbstractBackend
        The backend that differentiates ``conditions`` (any diffinterface
        backend, ``AutoFiniteDiff`` included).
    linear_solver : {"direct", "gmres", "cg", "bicgstab"} or callable, default "direct"
        How the systems in ``A = dc/dy`` are solved: ``"direct"`` forms A
        (a Jacobian by ``backend``) and factorises it once per point (small
        y); the others are Krylov solvers on the matrix-free operator of A:
        the conditions framework's own where it declares them (JAX's
        ``jax.scipy.sparse.linalg`` for ``AutoJAX``: the whole loop compiled),
        else scipy's on pushforwards and pullbacks of the conditions in y (see
        :func:`diffinterface.scipy.jacobian_operator`); ``"cg"`` needs A
        symmetric positive-definite (the gradient of a convex objective). A
        callable ``linear_solver(operator, rhs) -> solution`` gets that
        ``LinearOperator`` (or its transpose) and a numpy right-hand side.
    rtol, atol : float, default 1e-10, 0.0
        The iterative solvers' tolerances: converged when
        ``|A v - b| <= max(rtol |b|, atol)`` (scipy's meaning, on either solver).
    maxiter : int, optional
        The iterative solvers' iteration limit (scipy's default where None).
    has_byproduct : bool, default False
        ``solver`` returns ``(y, z)``; z (an active set, a factorisation, any
        object) is handed to ``conditions`` after y and never differentiated.
    output_like : array, shape-dtype struct or pytree of them, optional
        An example y (or anything with ``.shape`` and ``.dtype``, such as
        ``jax.ShapeDtypeStruct``; a pytree of them for a pytree y): y's
        structure, shape and dtype, for traces without values (``jax.jit``,
        ``jax.vmap``) at an input shape the function has not solved at yet.
        Without it, such a trace needs one call outside it first (only the
        solver knows y's shape). The solver's y is checked against it.

    Returns
    -------
    callable
        ``impl(x, *contexts) -> y``, contexts being ``di.Constant`` / ``di.Cache``
        values or plain values (taken as constants, as a diffinterface
        operator hands its contexts' values to ``f``): a function like any other for every
        diffinterface operator and every framework's own transforms
        (``jax.grad``, ``jax.jit``, torch ``backward()``, ``tf.GradientTape``),
        whose derivatives are ``-A^-1 B t`` (pushforward) and ``-B^T A^-T u``
        (pullback), ``B = dc/dx``, with one solver call per point.

    Raises
    ------
    LinearSolveError
        At a derivative, when A is singular or an iterative solver did not
        converge (the message gives its residual).
    ValueError
        Conditions of another shape than y; a solver whose y changes shape;
        an unknown ``linear_solver``, a negative tolerance, ``maxiter`` < 1.
    TypeError
        ``solver`` or ``conditions`` not callable, ``backend`` not a selector;
        a solver that returns no floating array (or no pair with
        ``has_byproduct=True``).

    Examples
    --------
    The ridge regression's coefficients as a function of the penalty:

    >>> import numpy as np, diffinterface as di
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]); t = np.array([1.0, 2.0, 0.0])
    >>> def solver(lam):
    ...     return np.linalg.solve(X.T @ X + lam * np.eye(2), X.T @ t)
    >>> def conditions(lam, b):
    ...     return X.T @ (X @ b - t) + lam * b
    >>> ridge = di.ImplicitFunction(solver, conditions, di.AutoAutograd())
    >>> lam = np.array(0.5)
    >>> exact = -np.linalg.solve(X.T @ X + lam * np.eye(2), solver(lam))
    >>> bool(np.allclose(di.derivative(ridge, di.AutoTorch(), 0.5), exact))
    True
    """

    def __init__(
        self,
        solver: Callable[..., Any],
        conditions: Callable[..., Any],
        backend: Any,
        *,
        linear_solver: Any = "direct",
        rtol: float = 1e-10,
        atol: float = 0.0,
        maxiter: Optional[int] = None,
        has_byproduct: bool = False,
        output_like: Any = None,
    ):
        for name, value in (("solver", solver), ("conditions", conditions)):
            if not callable(value):
                raise TypeError(
                    f"{name}: ImplicitFunction expected a callable; got {type(value).__name__}"
                )
        if not isinstance(has_byproduct, bool):
            raise TypeError(f"has_byproduct: expected True or False; got {has_byproduct!r}")
        self.framework = get_adapter(
            backend
        ).capabilities.framework  # a TypeError for a non-selector
        self.solver, self.conditions, self.backend = solver, conditions, backend
        self.has_byproduct = has_byproduct
        self.linear_solver = linear_solver
        self.linear_solver_ = _linear_solver(linear_solver, rtol, atol, maxiter)
        self.output_like = output_like
        #: ``(spec, y_plan)`` from ``output_like``: y's flat (shape, dtype name) and its TreePlan (None: an array)
        self.declared_y = None if output_like is None else _declared_y(output_like)
        self._bridges: dict = {}
        self._lock = threading.Lock()

    def _bridge(self, plan):
        """The bridge for x's tree structure (``plan`` None: an array x)."""
        key = None if plan is None else plan.key
        bridge = self._bridges.get(key)
        if bridge is None:
            with self._lock:
                bridge = self._bridges.get(key)
                if bridge is None:
                    bridge = self._bridges[key] = _ImplicitBridge(self, plan)
        return bridge

    def __call__(self, x, *contexts):
        # a diffinterface operator calls f with its contexts' values: each is a Constant then
        contexts = tuple(c if isinstance(c, (Constant, Cache)) else Constant(c) for c in contexts)
        plan = None if is_array(x) else TreePlan(x, "x")
        bridge = self._bridge(plan)
        flat = x if plan is None else plan.ravel(x)
        y = bridge(flat, *contexts)
        if self.declared_y is not None and not bridge.has_rules(flat, contexts):
            y_plan = self.declared_y[1]  # under a trace without values: the rules wait for a point
        else:
            y_plan = bridge.rules(flat, contexts).y_plan
        return y if y_plan is None else y_plan.unravel(y)

    def __repr__(self):
        name = getattr(self.solver, "__name__", self.solver)
        return (
            f"ImplicitFunction({name!r}, {getattr(self.conditions, '__name__', self.conditions)!r}, "
            f"{self.backend!r}, linear_solver={self.linear_solver!r})"
        )


class _ImplicitBridge(Bridge):
    """The bridge of one x tree structure: rules by :class:`ImplicitRules`, named as the function in messages."""

    def __init__(self, implicit, plan):
        self.implicit = implicit
        super().__init__(
            lambda x, contexts: ImplicitRules(implicit, implicit.framework, plan, x, contexts),
            implicit.framework,
        )

    values_hint = (
        "; or pass output_like= (an example y, or a jax.ShapeDtypeStruct, or a pytree of them) to "
        "ImplicitFunction, which then traces without values on the first call"
    )

    def declared_spec(self, x, contexts):
        return None if self.implicit.declared_y is None else self.implicit.declared_y[0]

    def __repr__(self):
        return repr(self.implicit)


def _declared_y(output_like):
    """``((flat shape, dtype name), TreePlan or None)`` of the y that ``output_like`` describes."""
    import numpy as np

    def example(leaf):
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(
                "output_like: expected an array, an object with .shape and .dtype (jax.ShapeDtypeStruct) "
                f"or a pytree of them; got a leaf of type {type(leaf).__name__}"
            )
        return np.zeros(tuple(leaf.shape), dtype=np.dtype(str(leaf.dtype)))

    if hasattr(output_like, "shape") and hasattr(output_like, "dtype"):
        y, plan = example(output_like), None
    else:
        tree = optree_module().tree_map(example, output_like)
        plan = TreePlan(tree, "output_like")
        y = plan.ravel(tree)
    if not dtype_name(y).startswith("float"):
        raise TypeError(f"output_like: expected a floating-point y; got dtype {dtype_name(y)}")
    return (shape_of(y), dtype_name(y)), plan


def _linear_solver(choice, rtol, atol, maxiter):
    return linear_solver(choice, rtol, atol, maxiter)


_untraced_outer.register(ImplicitFunction)
