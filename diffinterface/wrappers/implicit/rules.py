"""The rules of an implicit function for one input signature: its value by the solver, its derivatives by
the implicit function theorem.

:class:`ImplicitRules` has the interface every framework's bridge calls
(``backends/<name>/differentiate_with.py``, see
``wrappers/differentiate_with/_rules.py``): ``value``, ``pushforward``,
``pullback``, ``value_and_gradient`` and ``hvp``, on concrete arrays of the
conditions backend's family. With ``A = dc/dy`` and ``B = dc/dx`` at
``(x, y(x))``:

- pushforward: ``-A^-1 (B t)``, B t a pushforward of the conditions in x;
- pullback: ``-B^T (A^-T u)``, B^T w a pullback of the conditions in x.

The solver runs once per point: the last point's solution (and its
factorisation of A, or its matrix-free operator) is kept and served to every
product asked at that point, so an outer framework that asks for the value,
then for products, solves once.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from ... import operators
from ...contexts import Constant
from ...core.bridge import framework_bridge, inner_family, to_family, wide
from ...core.pytree import TreePlan
from ...errors import function_name
from .linear_solvers import FrameworkSystem
from ...families import (
    array_namespace,
    as_numpy,
    dtype_name,
    family_of,
    is_array,
    shape_of,
    sparse_family,
)


def _wide(method):
    @functools.wraps(method)
    def widened(self, *args):
        with wide(self.family, self.x_dtype):
            return method(self, *args)

    return widened


def _same_value(a, b):
    if a is b:
        return True
    if is_array(a) and is_array(b):
        a, b = as_numpy(a), as_numpy(b)
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
    return False


class ImplicitRules:
    """The solver's value and the implicit derivatives for inputs of one shape, dtype and context kinds.

    ``implicit`` is the :class:`~diffinterface.wrappers.implicit.ImplicitFunction`;
    ``x_plan`` the :class:`~diffinterface.core.pytree.TreePlan` of a pytree x
    (None for an array x); ``x`` and ``contexts`` reference values in the
    conditions backend's family, at which the solver runs once here.
    """

    gradient_route = False

    def __init__(self, implicit, framework, x_plan, x, contexts):
        self.implicit, self.backend = implicit, implicit.backend
        self.family = inner_family(framework)
        self.x_shape, self.x_dtype = shape_of(x), dtype_name(x)
        self._x_tree = (lambda a: a) if x_plan is None else x_plan.unravel
        # the reference values without a framework's history (a torch tensor recording gradients)
        x = _plain(x)
        contexts = tuple(type(c)(_plain(c.value)) for c in contexts)
        self._lock = threading.RLock()
        self._preps: dict = {}
        self.y_plan = None
        self.spec = None
        with wide(self.family, self.x_dtype):
            point = self._solve(x, contexts)
            self.spec = (shape_of(point.y), dtype_name(point.y))
            declared = implicit.declared_y
            if declared is not None and declared[0] != self.spec:
                raise ValueError(
                    f"output_like: described y as (flat) shape {declared[0][0]} and dtype {declared[0][1]}; "
                    f"the solver returned shape {self.spec[0]} and dtype {self.spec[1]} from "
                    f"{function_name(implicit.solver)}"
                )
            self.scalar = self.spec[0] == ()
            self._check_conditions(point)
        self._point = point

    # -- the conditions, as functions of y and of x ---------------------------------------------

    def conditions(self, x, y, *rest):
        """The user's conditions at flat arrays: ``c(x, y, [z], *contexts)``, flat where y is a tree."""
        if self.y_plan is not None:
            y = self.y_plan.unravel(y)
        c = self.implicit.conditions(self._x_tree(x), y, *rest)
        if self.y_plan is not None and not is_array(c):
            c = TreePlan(c, "conditions' output").ravel(c)
        return c

    def in_y(self, y, x, *rest):
        return self.conditions(x, y, *rest)

    def _check_conditions(self, point):
        c = self.conditions(point.x_inner, point.y, *[r.value for r in point.rest])
        if not is_array(c) or shape_of(c) != self.spec[0]:
            got = f"shape {shape_of(c)}" if is_array(c) else type(c).__name__
            raise ValueError(
                f"conditions: expected an output of y's shape {self.spec[0]} (c(x, y) = 0 has one "
                f"equation per unknown of y); got {got} from {function_name(self.implicit.conditions)}"
            )

    # -- solving --------------------------------------------------------------------------------

    def _solve(self, x, contexts):
        implicit = self.implicit
        out = implicit.solver(self._x_tree(x), *[c.value for c in contexts])
        z = None
        if implicit.has_byproduct:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(
                    f"solver: with has_byproduct=True, expected a pair (y, z); got "
                    f"{type(out).__name__} from {function_name(implicit.solver)}"
                )
            out, z = out
        y = self._flat_y(out)
        if self.spec is not None and (shape_of(y), dtype_name(y)) != self.spec:
            raise ValueError(
                f"solver: expected y of shape {self.spec[0]} and dtype {self.spec[1]}, as it returned "
                f"at the first point; got shape {shape_of(y)} and dtype {dtype_name(y)} from "
                f"{function_name(implicit.solver)}"
            )
        rest = ((Constant(z),) if implicit.has_byproduct else ()) + tuple(contexts)
        return _SolvedPoint(x, tuple(_snapshot(c.value) for c in contexts), y, z, rest)

    def _flat_y(self, out):
        if is_array(out) and out.__class__ is not float:
            y = out
        elif self.spec is None and not is_array(out):
            self.y_plan = TreePlan(out, "solver's y")
            y = self.y_plan.ravel(out)
        elif self.y_plan is not None:
            y = self.y_plan.ravel(out)
        else:
            y = np.asarray(out, dtype=np.float64) if isinstance(out, float) else out
        if not is_array(y) or not dtype_name(y).startswith("float"):
            raise TypeError(
                f"solver: expected y, a floating-point array or a pytree of them; got "
                f"{type(out).__name__}{'' if not is_array(y) else ' of dtype ' + dtype_name(y)} from "
                f"{function_name(self.implicit.solver)}"
            )
        return to_family(y, self.family)

    def _at(self, x, contexts):
        """The solved point at ``x``: the last one when x and the contexts are the same, else a new solve."""
        with self._lock:
            point = self._point
            if (
                _same_value(as_numpy(x), point.x)
                and len(contexts) == len(point.contexts)
                and all(
                    _same_value(_snapshot(c.value), v) for c, v in zip(contexts, point.contexts)
                )
            ):
                return point
            point = self._point = self._solve(x, contexts)
            return point

    # -- the linear system ----------------------------------------------------------------------

    def _prepared(self, key, make):
        with self._lock:
            prep = self._preps.get(key)
            if prep is None:
                prep = self._preps[key] = make()
            return prep

    def _system(self, point):
        """A's factorisation (direct) or matrix-free operator (iterative) at ``point``, built once."""
        with self._lock:
            if point.system:
                return point.system[0]
            solver = self.implicit.linear_solver_
            args = (point.y, Constant(point.x_inner), *point.rest)
            if solver.dense:
                prep = self._prepared(
                    ("jacobian",),
                    lambda: operators.prepare_jacobian(self.in_y, self.backend, *args),
                )
                jacobian = operators.jacobian(self.in_y, self.backend, *args, prep=prep)
                m = int(np.prod(self.spec[0], dtype=int))
                sparse = sparse_family(jacobian)
                if sparse is not None and sparse.is_sparse(jacobian):  # AutoSparse conditions
                    system = solver.factor_sparse(*sparse.sparse_coordinates(jacobian), m)
                else:
                    system = solver.factor(as_numpy(jacobian).reshape(m, m))
            else:
                system = self._framework_system(solver, point) or self._operator(point)
            point.system.append(system)
            return system

    def _framework_system(self, solver, point):
        """The system for the conditions framework's own Krylov solver (the whole loop compiled there, no
        crossing per product), or None where the framework has none (scipy's, on :meth:`_operator`)."""
        framework = getattr(solver, "framework_solve", None)
        if framework is None:
            return None
        solve = self._prepared(
            ("framework-krylov",),
            lambda: framework(self.implicit.framework, self.in_y, self.spec[0]),
        )
        if solve is None:
            return None
        args = (point.x_inner, *[r.value for r in point.rest])
        return FrameworkSystem(solve, point.y, args)

    def _operator(self, point):
        """``dc/dy`` at ``point`` as a matrix-free ``LinearOperator`` on flat numpy vectors: its products are
        pushforwards and pullbacks of the conditions in y, prepared once for every point (as
        :func:`~diffinterface.scipy.jacobian_operator`'s, without preparing again at each point)."""
        from scipy.sparse.linalg import LinearOperator

        y_shape, y_dtype = self.spec
        m = int(np.prod(y_shape, dtype=int))
        args = (Constant(point.x_inner), *point.rest)

        def seed(v):
            v = np.ascontiguousarray(np.asarray(v).reshape(-1), dtype=y_dtype).reshape(y_shape)
            return (to_family(v, self.family),)

        def product(name, v):
            seeds = seed(v)
            prep = self._prepared(
                (name + "-in-y",),
                lambda: getattr(operators, "prepare_" + name)(
                    self.in_y, self.backend, point.y, seeds, *args
                ),
            )
            with wide(self.family, self.x_dtype):
                (out,) = getattr(operators, name)(
                    self.in_y, self.backend, point.y, seeds, *args, prep=prep
                )
            # a copy: scipy's solvers write into the vectors, and a JAX array's numpy view is read-only
            return np.array(as_numpy(out), dtype=y_dtype).reshape(-1)

        return LinearOperator(
            (m, m),
            matvec=lambda v: product("pushforward", v),
            rmatvec=lambda u: product("pullback", u),
            dtype=np.dtype(y_dtype),
        )

    def _framework_pullback(self, point, cotangents):
        """The pullback ``-B^T A^-T u`` in one program of the conditions framework, whose Krylov solver
        also makes the product in x (JAX's: no return to the host between the two), or None."""
        fused = getattr(self.implicit.linear_solver_, "implicit_pullback", None)
        if fused is None:
            return None
        columns = np.stack([as_numpy(u).reshape(-1) for u in cotangents], axis=1)
        return fused(self._system(point), columns)

    def _solve_columns(self, point, seeds, transpose):
        columns = np.stack([as_numpy(s).reshape(-1) for s in seeds], axis=1)
        solution = self.implicit.linear_solver_.solve(self._system(point), columns, transpose)
        y_shape, y_dtype = self.spec
        return tuple(
            to_family(
                np.ascontiguousarray(solution[:, j], dtype=y_dtype).reshape(y_shape), self.family
            )
            for j in range(solution.shape[1])
        )

    # -- the rules ------------------------------------------------------------------------------

    @_wide
    def value(self, x, contexts):
        return self._at(x, contexts).y

    @_wide
    def pushforward(self, x, tangents, contexts):
        point = self._at(x, contexts)
        k = len(tangents)
        args = (Constant(point.y), *point.rest)
        prep = self._prepared(
            ("pushforward", k),
            lambda: operators.prepare_pushforward(
                self.conditions, self.backend, point.x_inner, tangents, *args
            ),
        )
        products = operators.pushforward(
            self.conditions, self.backend, point.x_inner, tangents, *args, prep=prep
        )
        return tuple(-v for v in self._solve_columns(point, products, transpose=False))

    @_wide
    def pullback(self, x, cotangents, contexts):
        point = self._at(x, contexts)
        fused = self._framework_pullback(point, cotangents)
        if fused is not None:
            return fused
        k = len(cotangents)
        weights = self._solve_columns(point, cotangents, transpose=True)
        args = (Constant(point.y), *point.rest)
        prep = self._prepared(
            ("pullback", k),
            lambda: operators.prepare_pullback(
                self.conditions, self.backend, point.x_inner, weights, *args
            ),
        )
        products = operators.pullback(
            self.conditions, self.backend, point.x_inner, weights, *args, prep=prep
        )
        return tuple(-g for g in products)

    def value_and_gradient(self, x, contexts):
        y = self.value(x, contexts)
        one = to_family(np.ones((), dtype=self.spec[1]), self.family)
        return y, self.pullback(x, (one,), contexts)[0]

    @_wide
    def hvp(self, x, c, tangents, contexts):
        """The derivative along each tangent t of the pullback of ``c``: ``-B^T A^-T c`` differentiated.

        With ``w = A^-T c``, ``dy = -A^-1 B t`` (the pushforward) and ``phi(x, y) = w . c(x, y)``, whose
        Hessian-vector product along ``(t, dy)`` has the parts ``h_x`` and ``h_y``: the result is
        ``-h_x + B^T A^-T h_y`` (the derivative of ``B^T`` and of ``A^-T``, both through ``phi``). One
        Hessian-vector product of the conditions in (x, y) jointly, by ``backend``, per tangent.
        """
        point = self._at(x, contexts)
        (w,) = self._solve_columns(point, (c,), transpose=True)
        dys = self.pushforward(x, tangents, contexts)
        nx = int(np.prod(self.x_shape, dtype=int))
        xp = array_namespace(point.y)

        def joined(a, b):
            return xp.concat((xp.reshape(a, (-1,)), xp.astype(xp.reshape(b, (-1,)), a.dtype)))

        z = joined(point.x_inner, point.y)
        zts = tuple(joined(t, dy) for t, dy in zip(tangents, dys))
        args = (Constant(w), *point.rest)
        prep = self._prepared(
            ("hvp", len(tangents)),
            lambda: operators.prepare_hvp(self._weighted_joint, self.backend, z, zts, *args),
        )
        products = operators.hvp(self._weighted_joint, self.backend, z, zts, *args, prep=prep)
        y_shape, y_dtype = self.spec
        hxs = tuple(xp.reshape(h[:nx], self.x_shape) for h in products)
        hys = tuple(xp.astype(xp.reshape(h[nx:], y_shape), point.y.dtype) for h in products)
        weights = self._solve_columns(point, hys, transpose=True)
        pargs = (Constant(point.y), *point.rest)
        pprep = self._prepared(
            ("pullback", len(weights)),
            lambda: operators.prepare_pullback(
                self.conditions, self.backend, point.x_inner, weights, *pargs
            ),
        )
        back = operators.pullback(
            self.conditions, self.backend, point.x_inner, weights, *pargs, prep=pprep
        )
        return tuple(-hx + g for hx, g in zip(hxs, back))

    def _weighted_joint(self, z, w, *rest):
        """``w . c(x, y)`` with x and y the two parts of the flat ``z``: the scalar whose Hessian holds
        the conditions' second derivatives the implicit function's second derivative needs."""
        xp = array_namespace(z)
        nx = int(np.prod(self.x_shape, dtype=int))
        x = xp.astype(xp.reshape(z[:nx], self.x_shape), getattr(xp, self.x_dtype))
        y = xp.astype(xp.reshape(z[nx:], self.spec[0]), getattr(xp, self.spec[1]))
        return xp.sum(w * self.conditions(x, y, *rest))


class _SolvedPoint:
    """One solved point: x (as the conditions backend computes on it, and as a numpy copy that recognises
    the point), the contexts' values as the point remembers them, y, z, the contexts the conditions take
    after x or y (``rest``: Constant(z) where there is one, then the user's), and the system in dc/dy
    once built."""

    __slots__ = ("x_inner", "x", "contexts", "y", "z", "rest", "system")

    def __init__(self, x, contexts, y, z, rest):
        self.x_inner, self.x = x, np.array(as_numpy(x), copy=True)
        self.contexts, self.y, self.z, self.rest = contexts, y, z, rest
        self.system: list = []


def _plain(a):
    bridge = framework_bridge(family_of(a))
    return bridge.plain(a) if bridge is not None else a


def _snapshot(value):
    """A context's value as the point remembers it: a numpy copy of an array, the object otherwise."""
    if is_array(value) and family_of(value) != "unknown":
        return np.array(as_numpy(value), copy=True)
    return value
