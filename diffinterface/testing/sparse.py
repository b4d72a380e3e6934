"""Sparse scenarios: Jacobians and Hessians with known patterns, checked sparse against dense.

Each :class:`~.sparse_scenarios.SparseScenario` (in :mod:`.sparse_scenarios`)
is a function written against the array API, a point, and its true structure
(the entries that can be nonzero, written by hand). :func:`sparse_cases` pairs them with backends and array families;
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
from typing import Any

import numpy as np

from .. import operators as di_operators
from .. import wrappers as di_wrappers
from ..core import get_adapter
from ..errors import MissingBackendError
from ..families import sparse_family
from .families import CONVERTIBLE_FAMILIES, convert, to_numpy
from .runner import _capabilities
from .sparse_scenarios import SparseScenario, sparse_scenarios
from .tolerances import default_tolerances


# -- cases ---------------------------------------------------------------------------------------


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
SPARSE_TYPES = {
    "numpy": ("scipy.sparse", "csr_array"),
    "jax": ("jax.experimental.sparse", "BCOO"),
    "torch": ("torch", "Tensor"),
    "tensorflow": ("tensorflow", "SparseTensor"),
}

#: the coloring of the ``orders`` cases: several orders (the fewest colors kept), acyclic for
#: Hessians
ORDERS_COLORING = {
    "order": ("natural", "smallest_last", "incidence_degree", "random"),
    "seed": 3,
    "decompression": "substitution",
}


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
            return di_wrappers.AutoSparse(
                self.backend, coloring_algorithm=di_wrappers.GreedyColoring(**ORDERS_COLORING)
            )
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
            value, gradient, valued = di_operators.value_gradient_and_hessian(
                s.f, sparse, x, prep=prep
            )
            dense_value, dense_gradient, dense = di_operators.value_gradient_and_hessian(
                s.f, backend, x
            )
            np.testing.assert_allclose(
                to_numpy(gradient),
                to_numpy(dense_gradient),
                rtol=rtol,
                atol=atol,
                err_msg=f"{self.id}: gradient of value_gradient_and_hessian",
            )
            m = s.x.size
        # a family with no sparse matrices of its own returns scipy's
        module, name = SPARSE_TYPES.get(self.family, SPARSE_TYPES["numpy"])
        for what, matrix in (("result", result), ("value_and result", valued)):
            assert type(matrix).__module__.startswith(module) and type(matrix).__name__ == name, (
                f"{self.id}: {what} is a {type(matrix).__module__}.{type(matrix).__name__}, expected {module}.{name}"
            )
            assert tuple(matrix.shape) == (m, s.x.size), (
                f"{self.id}: {what} has shape {tuple(matrix.shape)}"
            )
        expected = to_numpy(dense).reshape(m, s.x.size)
        np.testing.assert_allclose(
            to_dense_numpy(result), expected, rtol=rtol, atol=atol, err_msg=f"{self.id}: values"
        )
        np.testing.assert_allclose(
            to_dense_numpy(valued),
            expected,
            rtol=rtol,
            atol=atol,
            err_msg=f"{self.id}: values of the value_and variant",
        )
        np.testing.assert_allclose(
            to_numpy(value), to_numpy(dense_value), rtol=1e-12, err_msg=f"{self.id}: value"
        )
        pattern = di_wrappers.sparsity_pattern(prep).toarray()
        missing = np.argwhere(s.structure & ~pattern)
        assert not len(missing), (
            f"{self.id}: the detected pattern misses true entries {missing[:5].tolist()}"
        )
        self._check_coloring(prep)
        if self.family in ("numpy", "torch"):
            self._check_out(sparse, prep, x, result)

    def _check_coloring(self, prep):
        from ..wrappers.sparse.greedy import is_valid_coloring

        coloring = di_wrappers.coloring(prep)
        pattern = di_wrappers.sparsity_pattern(prep).tocoo()
        if coloring.kind != "bidirectional":  # a bicoloring's entries are checked by the values
            assert is_valid_coloring(
                coloring.kind, np.asarray(pattern.row), np.asarray(pattern.col), coloring.colors
            ), f"{self.id}: the {coloring.kind} coloring is not valid"
        expected_kind = {"mixed": "bidirectional"}.get(self.variant)
        if self.variant == "orders" and self.scenario.operator == "hessian":
            expected_kind = "acyclic"
        assert expected_kind in (None, coloring.kind), (
            f"{self.id}: a {coloring.kind} coloring, expected {expected_kind}"
        )
        bound = self.scenario.max_bidirectional_colors
        if self.variant == "mixed" and bound is not None:
            assert coloring.ncolors <= bound, (
                f"{self.id}: {coloring.ncolors} colors, expected at most {bound}"
            )

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
        np.testing.assert_array_equal(
            to_dense_numpy(buffer), to_dense_numpy(result), err_msg=f"{self.id}: out="
        )


def _does_both_modes(backend):
    """True when the adapter's capability ``mode`` is "both" and the selector does not pin one mode
    (True too when its import fails, so that the cases run and fail loudly rather than disappear)."""
    if getattr(backend, "mode", None) is not None:
        return False
    try:
        return get_adapter(backend).capabilities.mode == "both"
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
                cases.extend(
                    SparseCase(backend_id, backend, s, family, variant) for family in families
                )
    return cases


def sparse_pytest_cases(backends, scenarios=None):
    """``pytest.param`` objects of :func:`sparse_cases`, with readable ids (backend-scenario-family)."""
    import pytest

    return [pytest.param(case, id=case.id) for case in sparse_cases(backends, scenarios)]
