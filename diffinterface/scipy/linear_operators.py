"""Matrix-free Jacobians and Hessians as ``scipy.sparse.linalg.LinearOperator``: :func:`jacobian_operator`,
:func:`hessian_operator`.

Each operator holds same-point preparations at its x (``prepare_pushforward_same_point``,
``prepare_pullback_same_point``, ``prepare_hvp_same_point``): what depends on
x alone is computed once, and each product runs the part that depends on the
vector. ``matmat`` and ``rmatmat`` pass the columns as one batch of seeds to
one prepared call (calls of at most the selector's ``batch_size`` columns
where it sets one, else of at most
:data:`~diffinterface.core.batching.WHOLE_SWEEP_SEEDS`), each batch size
prepared once; inside a call, the preparation runs its vectorized sweep in
batches as every sweep does (the selector's ``batch_size`` or
``memory_budget``). Vectors go in and come
out as numpy arrays whatever the backend and x's family; a vector is cast to
the operator's dtype (x's), as scipy's ``LinearOperator`` documents for its
``dtype``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.sparse.linalg import LinearOperator

import diffinterface as di
from diffinterface.families import (
    FAMILIES,
    as_numpy,
    dtype_name,
    family_of,
    from_numpy,
    is_array,
    shape_of,
)

from ..core import OPERATORS
from ..core.batching import WHOLE_SWEEP_SEEDS, requested
from ..docstrings import shared_sections
from .points import SECTIONS, check_backend, check_function


class _Products:
    """One operator's products at x over numpy columns: seeds in x's family, a same-point preparation per batch."""

    def __init__(self, operator: str, f: Any, backend: Any, x: Any, contexts: tuple, seeds: tuple):
        # the same-point preparation of ``operator`` and the call returning its value too
        self.prepare = getattr(di, f"prepare_{operator}_same_point")
        self.apply = getattr(di, OPERATORS[operator].valued)
        self.f, self.backend, self.x, self.contexts = f, backend, x, contexts
        seed_shape, dtype = seeds  # each seed's shape; the dtype of x, seeds and results
        self.seed_shape, self.dtype, self.family = seed_shape, dtype, family_of(x)
        # a call's seeds are arguments of one prepared call: a bounded tuple, whatever the number of
        # columns
        self.batch = requested(backend)[0] or WHOLE_SWEEP_SEEDS
        self.preparations: dict = {}
        #: the size of one product (its operator's number of rows), for a product with no columns
        self.out_size = 0

    def _seed(self, column: np.ndarray) -> Any:
        return from_numpy(
            np.ascontiguousarray(column, dtype=self.dtype).reshape(self.seed_shape),
            self.family,
            self.x,
        )

    def run(self, seeds: tuple) -> tuple:
        """``(first, products)``: the value (or gradient) at x and the product with each seed."""
        prep = self.preparations.get(len(seeds))
        if prep is None:
            prep = self.preparations[len(seeds)] = self.prepare(
                self.f, self.backend, self.x, seeds, *self.contexts
            )
        return self.apply(self.f, self.backend, self.x, seeds, *self.contexts, prep=prep)

    def __call__(self, columns: np.ndarray) -> np.ndarray:
        """The products with each column of ``columns`` (shape ``(size, k)``), as the columns of the result."""
        columns = np.asarray(columns)
        out: list = []
        for start in range(0, columns.shape[1], self.batch):
            seeds = tuple(
                self._seed(columns[:, j])
                for j in range(start, min(start + self.batch, columns.shape[1]))
            )
            out.extend(as_numpy(r).reshape(-1) for r in self.run(seeds)[1])
        return np.stack(out, axis=1) if out else np.zeros((self.out_size, 0), dtype=self.dtype)


def _own_copy(x: Any) -> Any:
    """``x`` copied, in its family, where its arrays can be written in place (numpy, torch): an operator
    is the derivative at the x it was built at, its products prepared lazily (``J.T``, a new ``matmat``
    width) included."""
    family = family_of(x)
    if FAMILIES[family].write is None:  # immutable (JAX): x cannot change
        return x
    return from_numpy(np.array(as_numpy(x), copy=True), family, x)


def _check_x(x: Any, complex_x: str = "") -> Any:
    """``x`` unless it is no array or not floating; a complex x only where ``complex_x`` says why it is refused."""
    if not is_array(x) or isinstance(x, (float, int)):
        raise TypeError(f"x: expected an array (numpy, JAX, torch...); got {type(x).__name__}")
    if dtype_name(x) in ("complex64", "complex128") and not complex_x:
        return x
    if dtype_name(x) not in ("float32", "float64"):
        raise TypeError(
            f"x: expected a real floating-point array (float32 or float64); got {dtype_name(x)}. "
            f"{complex_x}"
        )
    return x


@shared_sections(
    SECTIONS, output="an array", twice="", attribute="value", attribute_doc="``f(x)``, flat."
)
class JacobianOperator(LinearOperator):
    """The Jacobian of ``f`` at one x as a ``LinearOperator``; build it with :func:`jacobian_operator`.

    $operator_parameters

    Examples
    --------
    >>> import numpy as np, diffinterface as di, diffinterface.scipy
    >>> J = di.scipy.JacobianOperator(lambda x: x ** 2, di.AutoFiniteDiff(), np.array([1.0, 2.0]), ())
    >>> J.shape, (J @ np.array([1.0, 1.0])).round(6)
    ((2, 2), array([2., 4.]))
    """

    def __init__(self, f: Any, backend: Any, x: Any, contexts: tuple):
        dtype = np.dtype(dtype_name(x))
        x_shape = shape_of(x)
        self.x = x = _own_copy(x)
        self._forward = _Products("pushforward", f, backend, x, contexts, (x_shape, dtype))
        zero = np.zeros((int(np.prod(x_shape)), 1), dtype=dtype)
        value, _ = self._forward.run((self._forward._seed(zero[:, 0]),))
        value = as_numpy(value)
        if dtype.kind == "c" and value.dtype != dtype:
            raise TypeError(
                f"f: jacobian_operator at a complex x ({dtype}) is the complex-linear map of a holomorphic "
                f"f, which returns {dtype} values; f returned {value.dtype}. Use di.pushforward and "
                "di.pullback, which are real-linear for any f (docs/complex.md)"
            )
        self.value = value.reshape(-1)
        self._reverse = _Products("pullback", f, backend, x, contexts, (value.shape, dtype))
        self._forward.out_size, self._reverse.out_size = value.size, zero.shape[0]
        super().__init__(dtype, (value.size, zero.shape[0]))

    def _matvec(self, v):
        return self._forward(np.reshape(v, (-1, 1)))[:, 0]

    def _rmatvec(self, u):
        return self._reverse(np.reshape(u, (-1, 1)))[:, 0]

    def _matmat(self, m):
        return self._forward(m)

    def _rmatmat(self, m):
        return self._reverse(m)


@shared_sections(
    SECTIONS,
    output="a scalar",
    twice=" (twice)",
    attribute="gradient",
    attribute_doc="The gradient at x, flat.",
)
class HessianOperator(LinearOperator):
    """The Hessian of a scalar ``f`` at one x as a symmetric ``LinearOperator``; see :func:`hessian_operator`.

    $operator_parameters

    Examples
    --------
    >>> import numpy as np, diffinterface as di, diffinterface.scipy
    >>> H = di.scipy.HessianOperator(lambda x: (x ** 3).sum(), di.AutoAutograd(), np.array([1.0, 2.0]), ())
    >>> H @ np.array([1.0, 0.0])
    array([6., 0.])
    """

    def __init__(self, f: Any, backend: Any, x: Any, contexts: tuple):
        dtype = np.dtype(dtype_name(x))
        n = int(np.prod(shape_of(x)))
        self.x = x = _own_copy(x)
        self._products = _Products("hvp", f, backend, x, contexts, (shape_of(x), dtype))
        gradient, _ = self._products.run((self._products._seed(np.zeros(n, dtype=dtype)),))
        self._products.out_size = n
        self.gradient = as_numpy(gradient).reshape(-1)
        super().__init__(dtype, (n, n))

    def _matvec(self, v):
        return self._products(np.reshape(v, (-1, 1)))[:, 0]

    _rmatvec = _matvec

    def _matmat(self, m):
        return self._products(m)

    _rmatmat = _matmat

    def _adjoint(self):
        return self


#: why hessian_operator refuses a complex x
_HESSIAN_COMPLEX_X = (
    "A Hessian of a real f of complex x is real-linear, not a complex matrix: use di.hvp at the "
    "complex x, or pass (x.real, x.imag) stacked as a real x (docs/complex.md)"
)


def jacobian_operator(
    f: Callable[..., Any], backend: Any, x: Any, *contexts: Any
) -> JacobianOperator:
    """The Jacobian of ``f`` at ``x`` as a ``scipy.sparse.linalg.LinearOperator``, never formed.

    ``J @ v`` is a pushforward, ``J.T @ u`` (``rmatvec``) a pullback, ``J @ M``
    and ``J.T @ M`` one batch of them, all from same-point preparations at
    ``x``: ``f``'s pass at x runs once (JAX, torch; see
    ``prepare_pushforward_same_point``), each product the rest only. Fit for
    ``least_squares(..., jac=lambda x: jacobian_operator(f, backend, x), tr_solver="lsmr")``,
    ``lsqr``, ``lsmr``, ``svds``. At a complex x, for a holomorphic ``f``
    returning x's dtype, it is the complex Jacobian and ``J.H @ u`` the
    pullback, its adjoint (see the complex-numbers page).

    Parameters
    ----------
    f : callable
        ``f(x, *contexts) -> array``; the operator's shape is ``(f(x).size, x.size)``.
    backend : AbstractBackend
        The selector that differentiates ``f``.
    x : array
        The point (numpy or a framework's array); not modified, and copied: the operator is the Jacobian
        at x as it was, whatever x holds later. Vectors are numpy arrays of its size, cast to its dtype.
    *contexts : Constant or Cache
        Extra arguments of ``f``; a Constant array changed in place afterwards makes the products raise
        ``PreparationMismatchError`` (build the operator again).

    Returns
    -------
    JacobianOperator
        A ``LinearOperator`` of x's dtype, with ``.value`` (``f(x)``, flat).

    Raises
    ------
    TypeError
        ``f`` not callable, ``backend`` not a selector, ``x`` not a floating array; a complex x whose
        ``f`` returns another dtype.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.scipy import jacobian_operator
    >>> J = jacobian_operator(lambda x: x[:2] * x[1:], di.AutoFiniteDiff(), np.array([1.0, 2.0, 3.0]))
    >>> J.shape, (J @ np.ones(3)).round(4), (J.T @ np.array([1.0, 0.0])).round(4)
    ((2, 3), array([3., 5.]), array([2., 1., 0.]))
    """
    check_function(f)
    check_backend(backend)
    return JacobianOperator(f, backend, _check_x(x), contexts)


def hessian_operator(
    f: Callable[..., Any], backend: Any, x: Any, *contexts: Any
) -> HessianOperator:
    """The Hessian of a scalar ``f`` at ``x`` as a symmetric ``scipy.sparse.linalg.LinearOperator``.

    ``H @ v`` is a Hessian-vector product from ``prepare_hvp_same_point`` at
    ``x`` (the gradient's pass at x runs once on JAX, torch and autograd), ``H @ M`` one batch
    of them. Fit for ``cg``, ``minres``, ``gmres``, ``eigsh``: ``cg(H, -H.gradient)`` is a Newton step.

    Parameters
    ----------
    f : callable
        ``f(x, *contexts) -> scalar``.
    backend : AbstractBackend
        The selector that differentiates ``f`` twice (``di.SecondOrder(outer, inner)`` included).
    x : array
        Where the Hessian is taken: numpy or a framework's array, left unmodified, and copied (the
        operator is the Hessian at x as it was). ``H @ v`` takes numpy vectors of x's size (cast to x's
        dtype) and returns numpy.
    *contexts : Constant or Cache
        Further arguments of ``f``, fixed for the operator's products: a Constant array changed in
        place afterwards makes them raise ``PreparationMismatchError``.

    Returns
    -------
    HessianOperator
        A ``LinearOperator`` of x's dtype, its own adjoint, with ``.gradient`` (flat).

    Raises
    ------
    TypeError
        ``f`` not callable, ``backend`` not a selector, ``x`` not a real floating array.
    ValueError
        ``f`` not scalar-valued.

    Examples
    --------
    >>> import numpy as np, scipy.sparse.linalg, diffinterface as di
    >>> from diffinterface.scipy import hessian_operator
    >>> f = lambda x: (x ** 2).sum() + x[0] * x[1]
    >>> H = hessian_operator(f, di.AutoAutograd(), np.array([1.0, -1.0]))
    >>> step, info = scipy.sparse.linalg.cg(H, -H.gradient)
    >>> info, step.round(6)
    (0, array([-1.,  1.]))
    """
    check_function(f)
    check_backend(backend)
    return HessianOperator(f, backend, _check_x(x, _HESSIAN_COMPLEX_X), contexts)
