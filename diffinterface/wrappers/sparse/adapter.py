"""The adapter of ``AutoSparse``: compressed Jacobians and Hessians over a dense backend's products.

Preparation (once): detect the pattern (``detection.py``), color it
(``coloring.py``), build one seed per color in x's family (or f(x)'s, for
row colorings) and prepare the dense backend's batched products over those
seeds; build the decompression (``matrices.py``).

A prepared call runs the products and decompresses, nothing else:

===========================  ===================================================
operator                     products of the dense backend, one per color
===========================  ===================================================
jacobian (column coloring)   pushforwards ``J @ seed`` (forward backends)
jacobian (row coloring)      pullbacks ``seed @ J`` (reverse backends); a
                             backend doing both takes the coloring with
                             fewer colors unless its ``mode=`` is set
jacobian (``MixedMode``)     pushforwards over column colors and pullbacks
                             over row colors (star bicoloring)
hessian                      hvps ``H @ seed`` (star coloring, or acyclic
                             coloring and substitution)
value_gradient_and_hessian   pushforwards (or pullbacks) of ``[f, gradient]``:
                             value, gradient and the hvps from one pass
===========================  ===================================================

A dense adapter may build the whole sparse operator itself, through its declared hooks
``sparse_jacobian`` / ``sparse_hessian`` (default None; ``(problem, compression, seed_matrix,
dense_shape, assembler) -> (operator, value_and_operator)`` or None): with
``AutoJAX()``, products and gather are one compiled function
(``backends/jax/sparse.py``). A forward-difference dense backend thus evaluates ``f`` ``ncolors + 1``
times for a Jacobian (Curtis-Powell-Reid: a whole color group is perturbed
at once). Every other operator is the dense backend's own.
"""

from __future__ import annotations

import numpy as np

from ...families import cast, from_numpy
from ...core import Capabilities, Impl, get_adapter, require_scalar_output
from ...operators._second_order import differentiated_problem, outer_mode
from ..delegating import DelegatingAdapter
from ..second_order import SecondOrderAdapter
from .coloring import compress
from .config import KnownSparsity
from .detection import detect
from .matrices import assembler, decompressor
from .mixed import MixedModeAdapter


class SparseStructure:
    """What a sparse preparation decided: the pattern and its coloring (see ``di.coloring``)."""

    def __init__(self, operator, compression, detector):
        self.operator = operator
        self.compression = compression
        self.detector = detector


def _explicit_jacobian_mode(adapter):
    """ "columns", "rows" or None (free choice) for a Jacobian with the dense adapter."""
    if isinstance(adapter, SecondOrderAdapter):  # as a first-order backend it is its inner
        adapter = adapter.inner
    mode = (
        adapter.capabilities.mode if adapter.capabilities.mode != "both" else adapter.backend.mode
    )
    return {"forward": "columns", "reverse": "rows", None: None}[mode]


def _batches(seeds, max_batch):
    step = max_batch or len(seeds)
    return [seeds[i : i + step] for i in range(0, len(seeds), step)]


#: why AutoSparse refuses a traced x at preparation, and the way around (core/prepare.py::require_values)
_DETECTS = (
    "detects the sparsity pattern from x's values at preparation",
    "Prepare outside the transform, at a concrete x of the same shape and dtype (prep = "
    "di.prepare_jacobian(f, backend, x0)), and pass prep= inside it; or give the pattern as "
    "AutoSparse(..., sparsity_detector=di.KnownSparsity(pattern))",
)


class SparseAdapter(DelegatingAdapter):
    """Sparse jacobian and hessian; every other operator is the dense backend's (its delegate)."""

    capabilities = Capabilities(
        # its jacobian and hessian are sparse matrices with a sparsity structure, empty ones
        # included
        own_empty_results=frozenset({"jacobian", "hessian"}),
        complex_x_refusal=(
            "AutoSparse colors the columns or rows of a real Jacobian or Hessian; use its dense "
            "backend, whose jacobian at a complex x is the complex one (core/complex_convention.py)"
        ),
    )

    def __init__(self, backend):
        super().__init__(backend, get_adapter(backend.dense_backend))
        self.dense = self.delegate
        dense = self.dense.capabilities
        self.capabilities = self.capabilities.replace(
            framework=dense.framework,
            approximate=dense.approximate,
            float64_accuracy=dense.float64_accuracy,
            needs_values=None if isinstance(backend.sparsity_detector, KnownSparsity) else _DETECTS,
        )

    # -- the sparse operators ---------------------------------------------------------------------

    def _seeds(self, problem, compression, shape, dtype, matrix=None):
        """One seed per color in the user's family, shaped ``shape``."""
        matrix = _seed_matrix(compression, dtype) if matrix is None else matrix
        seeds = from_numpy(matrix.reshape((len(matrix), *shape)), problem.family, problem.x)
        return tuple(seeds[i] for i in range(len(matrix)))

    def _decompressor(self, problem, compression, dense_shape):
        return decompressor(
            compression,
            problem.family,
            problem.x,
            dense_shape if self.backend.dense_result else None,
        )

    def prepare_jacobian(self, problem):
        if isinstance(self.dense, MixedModeAdapter):
            return self._prepare_bidirectional_jacobian(problem)
        dense = self.delegated(problem)
        spec = dense.spec
        rows, cols, shape = detect(dense, self.backend.sparsity_detector, "jacobian")
        compression = compress(
            rows, cols, shape, _explicit_jacobian_mode(self.dense), self.backend.coloring_algorithm
        )
        structure = SparseStructure("jacobian", compression, self.backend.sparsity_detector)
        dense_shape = spec.shape + problem.x_shape if self.backend.dense_result else None
        dtype = problem.x_dtype if compression.kind == "columns" else spec.dtype
        built = self.dense.sparse_jacobian(
            dense, compression, _seed_matrix(compression, dtype), dense_shape, assembler
        )
        if built is not None:
            jacobian, value_and_jacobian = built
            return Impl(jacobian=jacobian, value_and_jacobian=value_and_jacobian, sparse=structure)
        if compression.kind == "columns":
            operator, seeds = (
                "pushforward",
                self._seeds(problem, compression, problem.x_shape, problem.x_dtype),
            )
        else:
            operator, seeds = "pullback", self._seeds(problem, compression, spec.shape, spec.dtype)
        seeded = dense.seeded(operator, seeds)
        decompress = self._decompressor(problem, compression, spec.shape + problem.x_shape)
        return _jacobian_impl(seeded.results, seeded.value_and_results, decompress, structure)

    def _prepare_bidirectional_jacobian(self, problem):
        """``MixedMode``: pushforwards of the forward backend over the column colors, pullbacks of the
        reverse backend over the row colors, one decompression of both."""
        dense = self.delegated(problem)
        spec = dense.spec
        rows, cols, shape = detect(dense, self.backend.sparsity_detector, "jacobian")
        compression = compress(rows, cols, shape, "bidirectional", self.backend.coloring_algorithm)
        structure = SparseStructure("jacobian", compression, self.backend.sparsity_detector)
        row_seeds = compression.row_seeds.astype(spec.dtype)
        # one zero pushforward when there is no color at all: it still gives the value
        forward = (
            dense.seeded(
                "pushforward", self._seeds(problem, compression, problem.x_shape, problem.x_dtype)
            )
            if len(compression.seeds) or not len(row_seeds)
            else None
        )
        reverse = (
            problem.replace(adapter=self.dense.reverse).seeded(
                "pullback", self._seeds(problem, compression, spec.shape, spec.dtype, row_seeds)
            )
            if len(row_seeds)
            else None
        )
        decompress = self._decompressor(problem, compression, spec.shape + problem.x_shape)
        if forward is None:
            results, value_and_results = reverse.results, reverse.value_and_results
        elif reverse is None:
            results, value_and_results = forward.results, forward.value_and_results
        else:
            forward_results, forward_valued, reverse_results = (
                forward.results,
                forward.value_and_results,
                reverse.results,
            )

            def results(x, *ctx):
                return [*forward_results(x, *ctx), *reverse_results(x, *ctx)]

            def value_and_results(x, *ctx):
                value, products = forward_valued(x, *ctx)
                return value, [*products, *reverse_results(x, *ctx)]

        return _jacobian_impl(results, value_and_results, decompress, structure)

    def prepare_hessian(self, problem):
        require_scalar_output(problem, "hessian")
        # MixedMode colors Jacobians on both sides; its Hessians are its forward backend's
        adapter = self.dense.delegate if isinstance(self.dense, MixedModeAdapter) else self.dense
        dense = problem.replace(adapter=adapter)
        x_shape, x_dtype = problem.x_shape, problem.x_dtype
        rows, cols, shape = detect(dense, self.backend.sparsity_detector, "hessian")
        compression = compress(rows, cols, shape, "symmetric", self.backend.coloring_algorithm)
        structure = SparseStructure("hessian", compression, self.backend.sparsity_detector)
        outer, inner = adapter.outer, adapter.inner
        fusable = outer is inner and compression.solve is None  # substitution runs on the host
        built = (
            adapter.sparse_hessian(
                dense,
                compression,
                _seed_matrix(compression, x_dtype),
                x_shape + x_shape if self.backend.dense_result else None,
                assembler,
            )
            if fusable
            else None
        )
        if built is not None:
            hessian, value_gradient_and_hessian = built
            return Impl(
                hessian=hessian,
                value_gradient_and_hessian=value_gradient_and_hessian,
                sparse=structure,
            )
        seeds = self._seeds(problem, compression, x_shape, x_dtype)
        decompress = self._decompressor(problem, compression, x_shape + x_shape)
        # H @ seed from the dense backend's own hvp (batched as it prefers).
        hvps = [
            (dense.impl("hvp", tangents=batch).hvp, batch)
            for batch in _batches(seeds, adapter.capabilities.max_batch)
        ]
        if len(hvps) == 1:
            ((hvp, batch),) = hvps
            products = lambda x, *ctx: hvp(x, batch, *ctx)  # noqa: E731
        else:

            def products(x, *ctx):
                return [p for hvp, batch in hvps for p in hvp(x, batch, *ctx)]

        def hessian(x, *ctx):
            return decompress(products(x, *ctx))

        if outer.capabilities.framework is None and inner.capabilities.framework is None:
            # Differences of differences: the dense backend's own gradient and hvps (differencing
            # a difference-quotient gradient again would lose every digit).
            value_and_gradient = dense.impl("gradient").value_and_gradient

            def value_gradient_and_hessian(x, *ctx):
                value, gradient = value_and_gradient(x, *ctx)
                return value, gradient, decompress(products(x, *ctx))

        else:
            value_gradient_and_hessian = self._value_gradient_and_hessian(
                problem, dense, compression, seeds, decompress
            )

        return Impl(
            hessian=hessian, value_gradient_and_hessian=value_gradient_and_hessian, sparse=structure
        )

    def _value_gradient_and_hessian(self, problem, dense, compression, seeds, decompress):
        """One pass of the outer backend over ``[f, gradient]``: value, gradient and ``H @ seed``."""
        spec, xp = problem.spec, problem.xp
        x_shape, x_dtype, n = problem.x_shape, problem.x_dtype, problem.x_size
        augmented = differentiated_problem(dense, "gradient", with_value=True)
        if outer_mode(dense.adapter) == "forward":
            operator, augmented_seeds = "pushforward", seeds
        else:  # pullbacks with cotangents [0, seed]: H is symmetric, seed @ H = H @ seed
            dtype = augmented.spec.dtype
            matrix = _seed_matrix(compression, dtype)
            matrix = np.concatenate([np.zeros((len(matrix), 1), dtype=dtype), matrix], axis=1)
            operator, augmented_seeds = (
                "pullback",
                self._seeds(problem, compression, (1 + n,), dtype, matrix),
            )
        products = augmented.seeded(operator, augmented_seeds).value_and_results

        def value_gradient_and_hessian(x, *ctx):
            value_and_gradient, parts = products(x, *ctx)
            if operator == "pushforward":  # each product is [gradient . seed, H @ seed]
                parts = [xp.reshape(p[1:], x_shape) for p in parts]
            return (
                cast(value_and_gradient[0], spec.dtype),
                cast(xp.reshape(value_and_gradient[1:], x_shape), x_dtype),
                decompress(parts),
            )

        return value_gradient_and_hessian


def _jacobian_impl(results, value_and_results, decompress, structure):
    """The Impl of a sparse Jacobian from the products' ``results`` / ``value_and_results`` and ``decompress``."""

    def jacobian(x, *ctx):
        return decompress(results(x, *ctx))

    def value_and_jacobian(x, *ctx):
        value, products = value_and_results(x, *ctx)
        return value, decompress(products)

    return Impl(jacobian=jacobian, value_and_jacobian=value_and_jacobian, sparse=structure)


def _seed_matrix(compression, dtype):
    """The seeds as a numpy ``(ncolors, size)`` array of ``dtype``; one zero seed when there is no color
    (f does not depend on x, and one product still gives the value)."""
    seeds = compression.seeds.astype(dtype)
    return seeds if len(seeds) else np.zeros((1, seeds.shape[1]), dtype=dtype)
