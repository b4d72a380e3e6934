"""Sparse scenarios: Jacobians and Hessians with known patterns, checked sparse against dense.

Each :class:`SparseScenario` is a function written against the array API, a
point, and its true structure (the entries that can be nonzero, written by
hand). :func:`sparse_cases` pairs them with backends and array families;
:meth:`SparseCase.check` differentiates with ``AutoSparse(backend)`` and with
``backend`` itself and asserts that

- the result is the family's sparse matrix (scipy CSR, BCOO, torch sparse CSR),
  ``f(x).size x x.size`` (``x.size x x.size`` for Hessians);
- its values equal the dense operator's, within the kit's tolerances;
- the detected pattern contains the true structure;
- ``value_and_jacobian`` / ``value_gradient_and_hessian`` agree with the dense ones;
- ``out=`` (numpy and torch) overwrites a matrix of the prepared pattern;
- the coloring is structurally valid (no two columns of a color share a row,
  star or acyclic conditions for Hessians).

Besides the default coloring, each backend that does both modes (its
adapter's ``mode`` is ``"both"``, no one mode pinned by its selector) runs every Jacobian scenario through
``AutoSparse(MixedMode(backend, backend))`` (a star bicoloring: the
``jacobian-arrowhead`` scenario must take at most 4 products), and every
backend runs the ``jacobian-random`` and ``hessian-banded`` scenarios with a
tuple of vertex orders (and, for the Hessian, acyclic coloring with
substitution).

    >>> from diffinterface.testing.sparse import sparse_scenarios
    >>> [s.name for s in sparse_scenarios()][:3]
    ['jacobian-banded', 'jacobian-block_diagonal', 'jacobian-arrow']
    >>> import diffinterface as di
    >>> [case.id for case in sparse_cases({"fd": di.AutoFiniteDiff()})][-2:]
    ['fd-orders-jacobian-random-numpy', 'fd-orders-hessian-banded-numpy']
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from .. import operators as di_operators
from .. import wrappers as di_wrappers
from ..core import get_adapter
from ..errors import MissingBackendError
from ..families import array_namespace, sparse_family
from .families import CONVERTIBLE_FAMILIES, convert, to_numpy
from .runner import _capabilities
from .tolerances import default_tolerances


@dataclasses.dataclass(frozen=True, eq=False)
class SparseScenario:
    """A jacobian or hessian of ``f`` at ``x`` (numpy float64) whose true structure is ``structure``.

    ``structure`` is a boolean ``(m, n)`` array over flattened indices: True
    where the derivative can be nonzero at some point.
    """

    operator: str
    f: Callable
    x: Any
    structure: Any
    name: str
    #: the most products a star bicoloring (``MixedMode``) may take, when the scenario bounds it
    max_bidirectional_colors: int | None = None

    def __repr__(self):
        return f"<SparseScenario {self.name}>"


def _n(k=12):
    return np.linspace(0.3, 1.4, k)


# -- Jacobians ------------------------------------------------------------------------------------


def _banded():
    """y_i = x_i**2 * x_{i-1} - sin(x_{i+1}): three bands."""

    def f(x):
        xp = array_namespace(x)
        return x[1:-1] ** 2 * x[:-2] - xp.sin(x[2:])

    x = _n()
    m = x.size - 2
    structure = np.zeros((m, x.size), dtype=bool)
    for i in range(m):
        structure[i, i : i + 3] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-banded")


_BLOCK = np.array([[1.0, -2.0, 0.5], [0.3, 1.0, 2.0], [-1.0, 0.7, 1.0]])


def _block_diagonal():
    """Blocks of 3: y_b = sin(M @ x_b)."""

    def f(x):
        xp = array_namespace(x)
        blocks = xp.reshape(x, (-1, 3))
        return xp.reshape(xp.sin(blocks @ xp.asarray(_BLOCK.T)), (-1,))

    x = _n()
    structure = np.kron(np.eye(x.size // 3, dtype=bool), np.ones((3, 3), dtype=bool))
    return SparseScenario("jacobian", f, x, structure, "jacobian-block_diagonal")


def _concat(xp, parts):
    concatenate = getattr(xp, "concatenate", None) or xp.concat
    return concatenate(parts)


def _arrow():
    """y = [x_1..x_{n-1} times x_0, sum(x**2)]: a dense first column and a dense last row."""

    def f(x):
        xp = array_namespace(x)
        return _concat(xp, (x[1:] * x[0], xp.reshape(xp.sum(x ** 2), (1,))))

    x = _n()
    n = x.size
    structure = np.zeros((n, n), dtype=bool)
    structure[np.arange(n - 1), np.arange(1, n)] = True
    structure[:, 0] = True
    structure[-1, :] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-arrow")


_RANDOM = np.random.default_rng(7)
_RANDOM_I = _RANDOM.integers(0, 12, size=(10, 2))


def _arrowhead():
    """y_0 = sum(sin(x)), y_i = x_i**2 + x_0 * x_i: a dense row, a dense column and the diagonal
    (one-sided colorings need one color per column or row; a star bicoloring needs three)."""

    def f(x):
        xp = array_namespace(x)
        return _concat(xp, (xp.reshape(xp.sum(xp.sin(x)), (1,)), x[1:] ** 2 + x[0] * x[1:]))

    x = _n()
    n = x.size
    structure = np.eye(n, dtype=bool)
    structure[0, :] = structure[:, 0] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-arrowhead", max_bidirectional_colors=4)


def _random():
    """y_k = x_i * exp(x_j) for random pairs (i, j): a random pattern."""
    first, second = _RANDOM_I[:, 0], _RANDOM_I[:, 1]

    def f(x):
        xp = array_namespace(x)
        return x[first] * xp.exp(x[second])

    x = _n()
    structure = np.zeros((len(first), x.size), dtype=bool)
    structure[np.arange(len(first)), first] = True
    structure[np.arange(len(first)), second] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-random")


def _dense_row():
    """y = [sum(x**3), x_1 * x_0, ..., x_{n-1} * x_{n-2}]: one dense row over a band."""

    def f(x):
        xp = array_namespace(x)
        return _concat(xp, (xp.reshape(xp.sum(x ** 3), (1,)), x[1:] * x[:-1]))

    x = _n()
    n = x.size
    structure = np.zeros((n, n), dtype=bool)
    structure[0] = True
    structure[np.arange(1, n), np.arange(n - 1)] = True
    structure[np.arange(1, n), np.arange(1, n)] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-dense_row")


def _dense_column():
    """y = x * x_0 + x**2: the diagonal and one dense column."""

    def f(x):
        return x * x[0] + x ** 2

    x = _n()
    structure = np.eye(x.size, dtype=bool)
    structure[:, 0] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-dense_column")


# -- Hessians -------------------------------------------------------------------------------------


def _chain():
    """The chain energy sum(phi1(x_{i+1} - x_i) + phi2(x_{i+2} - x_i)): a pentadiagonal Hessian."""

    def f(x):
        xp = array_namespace(x)
        r1, r2 = x[1:] - x[:-1], x[2:] - x[:-2]
        return xp.sum(r1 ** 2 + r1 ** 4 + xp.exp(-r1)) + xp.sum(-0.1 * r2 ** 3)

    x = _n()
    n = x.size
    i, j = np.indices((n, n))
    return SparseScenario("hessian", f, x, np.abs(i - j) <= 2, "hessian-banded")


def _block_hessian():
    """sum over blocks of 3 of (x_b . M x_b)**2: a block-diagonal Hessian."""

    def f(x):
        xp = array_namespace(x)
        blocks = xp.reshape(x, (-1, 3))
        return xp.sum(xp.sum(blocks * (blocks @ xp.asarray(_BLOCK.T)), axis=1) ** 2)

    x = _n()
    structure = np.kron(np.eye(x.size // 3, dtype=bool), np.ones((3, 3), dtype=bool))
    return SparseScenario("hessian", f, x, structure, "hessian-block_diagonal")


def _arrow_hessian():
    """x_0 * sum(x_1.. **2) + sum(cos(x)): a dense first row and column over the diagonal."""

    def f(x):
        xp = array_namespace(x)
        return x[0] * xp.sum(x[1:] ** 2) + xp.sum(xp.cos(x))

    x = _n()
    structure = np.eye(x.size, dtype=bool)
    structure[0, :] = structure[:, 0] = True
    return SparseScenario("hessian", f, x, structure, "hessian-arrow")


def _random_hessian():
    """sum of sin(x_i * x_j) over random pairs: a random symmetric pattern."""
    first, second = _RANDOM_I[:, 0], _RANDOM_I[:, 1]

    def f(x):
        xp = array_namespace(x)
        return xp.sum(xp.sin(x[first] * x[second]))

    x = _n()
    structure = np.zeros((x.size, x.size), dtype=bool)
    for i, j in zip(first, second):
        structure[i, i] = structure[j, j] = structure[i, j] = structure[j, i] = True
    return SparseScenario("hessian", f, x, structure, "hessian-random")


def sparse_scenarios(operators=None):
    """The sparse scenarios (all, or those of ``operators``: "jacobian", "hessian")."""
    scenarios = [_banded(), _block_diagonal(), _arrow(), _random(), _dense_row(), _dense_column(), _arrowhead(),
                 _chain(), _block_hessian(), _arrow_hessian(), _random_hessian()]
    return [s for s in scenarios if operators is None or s.operator in operators]


# -- cases -------------------------------------------------------------------------------------------


def to_dense_numpy(matrix):
    """A numpy array of a sparse or dense result of any family."""
    family = sparse_family(matrix)
    if family is None or not family.is_sparse(matrix):
        return to_numpy(matrix)
    values, rows, cols = family.sparse_coordinates(matrix)
    dense = np.zeros(matrix.shape, dtype=values.dtype)
    np.add.at(dense, (rows, cols), values)
    return dense


#: the class of each family's sparse result, by module prefix and name
SPARSE_TYPES = {"numpy": ("scipy.sparse", "csr_array"), "jax": ("jax.experimental.sparse", "BCOO"),
                "torch": ("torch", "Tensor"), "tensorflow": ("tensorflow", "SparseTensor")}

#: the coloring of the ``orders`` cases: several orders (the fewest colors kept), acyclic for Hessians
ORDERS_COLORING = {"order": ("natural", "smallest_last", "incidence_degree", "random"), "seed": 3,
                   "decompression": "substitution"}


@dataclasses.dataclass(frozen=True)
class SparseCase:
    """``AutoSparse(backend)`` on one scenario in one array family."""

    backend_id: str
    backend: Any
    scenario: SparseScenario
    family: str
    #: "default", "mixed" (``MixedMode(backend, backend)``) or "orders" (:data:`ORDERS_COLORING`)
    variant: str = "default"

    @property
    def id(self):
        variant = "" if self.variant == "default" else f"{self.variant}-"
        return f"{self.backend_id}-{variant}{self.scenario.name}-{self.family}"

    def sparse_backend(self):
        """The ``AutoSparse`` backend of the case's variant."""
        if self.variant == "mixed":
            return di_wrappers.AutoSparse(di_wrappers.MixedMode(self.backend, self.backend))
        if self.variant == "orders":
            return di_wrappers.AutoSparse(self.backend, coloring_algorithm=di_wrappers.GreedyColoring(**ORDERS_COLORING))
        return di_wrappers.AutoSparse(self.backend)

    def check(self):
        """Raise AssertionError unless the sparse results match the dense ones (see the module docstring)."""
        s, backend = self.scenario, self.backend
        sparse = self.sparse_backend()
        x = convert(s.x, self.family)
        order = 1 if s.operator == "jacobian" else 2
        rtol, atol = default_tolerances(backend, "float64", order)
        if s.operator == "jacobian":
            prep = di_operators.prepare_jacobian(s.f, sparse, x)
            result = di_operators.jacobian(s.f, sparse, x, prep=prep)
            value, valued = di_operators.value_and_jacobian(s.f, sparse, x, prep=prep)
            dense_value, dense = di_operators.value_and_jacobian(s.f, backend, x)
            m = int(np.prod(to_numpy(dense_value).shape))
        else:
            prep = di_operators.prepare_hessian(s.f, sparse, x)
            result = di_operators.hessian(s.f, sparse, x, prep=prep)
            value, gradient, valued = di_operators.value_gradient_and_hessian(s.f, sparse, x, prep=prep)
            dense_value, dense_gradient, dense = di_operators.value_gradient_and_hessian(s.f, backend, x)
            np.testing.assert_allclose(to_numpy(gradient), to_numpy(dense_gradient), rtol=rtol, atol=atol,
                                       err_msg=f"{self.id}: gradient of value_gradient_and_hessian")
            m = s.x.size
        module, name = SPARSE_TYPES[self.family]
        for what, matrix in (("result", result), ("value_and result", valued)):
            assert type(matrix).__module__.startswith(module) and type(matrix).__name__ == name, (
                f"{self.id}: {what} is a {type(matrix).__module__}.{type(matrix).__name__}, expected {module}.{name}")
            assert tuple(matrix.shape) == (m, s.x.size), f"{self.id}: {what} has shape {tuple(matrix.shape)}"
        expected = to_numpy(dense).reshape(m, s.x.size)
        np.testing.assert_allclose(to_dense_numpy(result), expected, rtol=rtol, atol=atol, err_msg=f"{self.id}: values")
        np.testing.assert_allclose(to_dense_numpy(valued), expected, rtol=rtol, atol=atol,
                                   err_msg=f"{self.id}: values of the value_and variant")
        np.testing.assert_allclose(to_numpy(value), to_numpy(dense_value), rtol=1e-12, err_msg=f"{self.id}: value")
        pattern = di_wrappers.sparsity_pattern(prep).toarray()
        missing = np.argwhere(s.structure & ~pattern)
        assert not len(missing), f"{self.id}: the detected pattern misses true entries {missing[:5].tolist()}"
        self._check_coloring(prep)
        if self.family in ("numpy", "torch"):
            self._check_out(sparse, prep, x, result)

    def _check_coloring(self, prep):
        from ..wrappers.sparse.greedy import is_valid_coloring

        coloring = di_wrappers.coloring(prep)
        pattern = di_wrappers.sparsity_pattern(prep).tocoo()
        if coloring.kind != "bidirectional":  # a bicoloring's entries are checked by the values
            assert is_valid_coloring(coloring.kind, np.asarray(pattern.row), np.asarray(pattern.col),
                                     coloring.colors), f"{self.id}: the {coloring.kind} coloring is not valid"
        expected_kind = {"mixed": "bidirectional"}.get(self.variant)
        if self.variant == "orders" and self.scenario.operator == "hessian":
            expected_kind = "acyclic"
        assert expected_kind in (None, coloring.kind), f"{self.id}: a {coloring.kind} coloring, expected {expected_kind}"
        bound = self.scenario.max_bidirectional_colors
        if self.variant == "mixed" and bound is not None:
            assert coloring.ncolors <= bound, f"{self.id}: {coloring.ncolors} colors, expected at most {bound}"

    def _check_out(self, sparse, prep, x, result):
        s = self.scenario
        if self.family == "numpy":
            buffer = result.copy()
            buffer.data[:] = 0.0
        else:
            buffer = result.clone()
            buffer.values().zero_()
        if s.operator == "jacobian":
            returned = di_operators.jacobian(s.f, sparse, x, prep=prep, out=buffer)
        else:
            returned = di_operators.hessian(s.f, sparse, x, prep=prep, out=buffer)
        assert returned is buffer, f"{self.id}: out= returned another object"
        np.testing.assert_array_equal(to_dense_numpy(buffer), to_dense_numpy(result), err_msg=f"{self.id}: out=")


def _does_both_modes(backend):
    """True when the adapter's capability ``mode`` is "both" and the selector does not pin one mode
    (True too when its import fails, so that the cases run and fail loudly rather than disappear)."""
    if getattr(backend, "mode", None) is not None:
        return False
    try:
        return get_adapter(backend).mode == "both"
    except MissingBackendError:
        return True


#: the scenarios of the ``orders`` variant
ORDERS_SCENARIOS = ("jacobian-random", "hessian-banded")


def sparse_cases(backends, scenarios=None):
    """Every (backend, sparse scenario, family) case, for the families each backend accepts, with the
    ``mixed`` and ``orders`` variants (see the module docstring).

    ``backends`` is a dict id -> selector (such as ``diffinterface.testing.BACKENDS``).
    """

    scenarios = sparse_scenarios() if scenarios is None else list(scenarios)
    cases = []
    for backend_id, backend in backends.items():
        accepted = _capabilities(backend)[0]
        families = [family for family in CONVERTIBLE_FAMILIES if family in accepted]
        variants = [("default", scenarios)]
        if _does_both_modes(backend):
            variants.append(("mixed", [s for s in scenarios if s.operator == "jacobian"]))
        variants.append(("orders", [s for s in scenarios if s.name in ORDERS_SCENARIOS]))
        for variant, chosen in variants:
            for s in chosen:
                cases.extend(SparseCase(backend_id, backend, s, family, variant) for family in families)
    return cases


def sparse_pytest_cases(backends, scenarios=None):
    """``pytest.param`` objects of :func:`sparse_cases`, with readable ids (backend-scenario-family)."""
    import pytest

    return [pytest.param(case, id=case.id) for case in sparse_cases(backends, scenarios)]
