"""Decompression: stacked compressed products -> the sparse (or dense) result in x's family.

:func:`decompressor` is called once at preparation and returns
``decompress(products) -> matrix``: the products (one per color, shaped like
f(x) or x) are stacked, their entries gathered in the pattern's row-major
order, and handed to the family's builder (``Family.sparse_builder`` or
``Family.dense_builder``), which wraps them around index arrays built once:

=======  ===================================  =============================
family   sparse result                        dense result
=======  ===================================  =============================
numpy    ``scipy.sparse.csr_array``           ``numpy.ndarray``
jax      ``jax.experimental.sparse.BCOO``     ``jax.Array``
torch    sparse CSR ``torch.Tensor``          ``torch.Tensor``
=======  ===================================  =============================

The index arrays are shared by every result of one preparation (read-only
for numpy), so that ``out=`` can check a buffer's pattern by identity. A
bicoloring's products (pushforwards and pullbacks, two shapes) are
flattened and joined instead of stacked; a substitution (acyclic coloring)
solves for the entries on the host (``acyclic.py``) instead of gathering them.
"""

from __future__ import annotations

from ...families import FAMILIES, dtype_name


def decompressor(compression, family, like, dense_shape=None):
    """``decompress(products) -> result`` for ``family``; dense arrays shaped ``dense_shape`` when given."""
    arrays = FAMILIES[family]
    if (
        compression.kind == "bidirectional"
    ):  # pushforwards shaped like f(x), then pullbacks shaped like x
        ravel = arrays.ravel
        flat = lambda products: ravel(products, dtype_name(products[0]))  # noqa: E731
    else:
        stack = arrays.stack
        flat = lambda products: stack(products)  # noqa: E731 - the family's flat_take flattens it
    build = (
        arrays.sparse_builder(compression.rows, compression.cols, compression.shape, like)
        if dense_shape is None
        else arrays.dense_builder(
            compression.rows, compression.cols, compression.shape, dense_shape, like
        )
    )
    if compression.solve is not None:  # substitution, on the host
        solve, to_numpy, from_numpy = compression.solve, arrays.to_numpy, arrays.from_numpy
        return lambda products: build(from_numpy(solve(to_numpy(flat(products)).reshape(-1)), like))
    gather, take = arrays.index_array(compression.gather, like), arrays.flat_take
    if dense_shape is not None:
        return arrays.compiled(lambda products: build(take(flat(products), gather)), like)
    gather_data = arrays.compiled(lambda products: take(flat(products), gather), like)
    return lambda products: build(gather_data(products))


def assembler(compression, family, like, dense_shape=None):
    """``assemble(data) -> result`` from the entries' values in pattern order (numpy or JAX families).

    Used where the products and the gather already ran inside one compiled
    function (a dense adapter's ``sparse_jacobian`` hook, ``backends/jax/sparse.py``).
    """
    arrays = FAMILIES[family]
    if dense_shape is not None:
        scatter = arrays.dense_builder(
            compression.rows, compression.cols, compression.shape, dense_shape, like
        )
        return arrays.compiled(scatter, like)
    return arrays.sparse_builder(compression.rows, compression.cols, compression.shape, like)
