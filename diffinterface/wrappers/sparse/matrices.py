"""Decompression: stacked compressed products -> the sparse (or dense) result in x's family.

:func:`decompressor` is called once at preparation and returns
``decompress(products) -> matrix``: the products (one per color, shaped like
f(x) or x) are stacked, their entries gathered in the pattern's row-major
order, and wrapped around index arrays built once:

=======  ===================================  =============================
family   sparse result                        dense result
=======  ===================================  =============================
numpy    ``scipy.sparse.csr_array``           ``numpy.ndarray``
jax      ``jax.experimental.sparse.BCOO``     ``jax.Array``
torch    sparse CSR ``torch.Tensor``          ``torch.Tensor``
=======  ===================================  =============================

The index arrays are shared by every result of one preparation (read-only
for numpy), so that ``out=`` can check a buffer's pattern by identity.
"""

from __future__ import annotations

import warnings

import numpy as np


def _indptr(rows, m):
    return np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))]).astype(np.int64)


def _readonly(a):
    a.flags.writeable = False
    return a


def decompressor(compression, family, like, dense_shape=None):
    """``decompress(products) -> result`` for ``family``; dense arrays shaped ``dense_shape`` when given."""
    build = {"numpy": _numpy, "jax": _jax, "torch": _torch}[family]
    return build(compression, like, dense_shape)


def _numpy(compression, like, dense_shape):
    gather = compression.gather
    m, n = compression.shape
    if dense_shape is not None:
        flat = compression.rows.astype(np.int64) * n + compression.cols

        def decompress(products):
            stacked = np.stack(products)
            result = np.zeros(m * n, dtype=stacked.dtype)
            result[flat] = stacked.reshape(-1)[gather]
            return result.reshape(dense_shape)

        return decompress

    from scipy.sparse import csr_array

    indices = _readonly(compression.cols.astype(np.int32))
    indptr = _readonly(_indptr(compression.rows, m).astype(np.int32))
    shape = (m, n)

    def decompress(products):
        data = np.stack(products).reshape(-1)[gather]
        matrix = csr_array((data, indices, indptr), shape=shape, copy=False)
        matrix.has_sorted_indices = True
        return matrix

    return decompress


def _jax(compression, like, dense_shape):
    import jax
    import jax.numpy as jnp
    from jax.experimental.sparse import BCOO

    m, n = compression.shape
    device = like.devices().pop() if hasattr(like, "devices") else None
    gather = jax.device_put(np.asarray(compression.gather, dtype=np.int32), device)
    # float64 products while x64 is off globally: the compiled gather must run under x64 (this
    # thread only), or JAX would truncate them to float32.
    wide = str(like.dtype) == "float64" and not jax.enable_x64.get_global()
    if dense_shape is not None:
        rows = jax.device_put(compression.rows, device)
        cols = jax.device_put(compression.cols, device)

        def scatter(products):
            data = jnp.stack(products).reshape(-1)[gather]
            return jnp.zeros((m, n), dtype=data.dtype).at[rows, cols].set(data).reshape(dense_shape)

        return _x64_call(jax.jit(scatter), wide)

    indices = jax.device_put(np.stack([compression.rows, compression.cols], axis=1), device)
    gather_data = _x64_call(jax.jit(lambda products: jnp.stack(products).reshape(-1)[gather]), wide)

    def decompress(products):
        return BCOO((gather_data(products), indices), shape=(m, n), indices_sorted=True, unique_indices=True)

    return decompress


def _x64_call(fn, wide):
    if not wide:
        return fn
    import jax

    swap, restore = jax.enable_x64.swap_local, jax.enable_x64.set_local

    def call(*args):
        previous = swap(True)
        try:
            return fn(*args)
        finally:
            restore(previous)

    return call


def _torch(compression, like, dense_shape):
    import torch

    m, n = compression.shape
    device = like.device
    gather = torch.from_numpy(compression.gather).to(device)
    if dense_shape is not None:
        flat = torch.from_numpy(compression.rows.astype(np.int64) * n + compression.cols).to(device)

        def decompress(products):
            stacked = torch.stack(products)
            result = torch.zeros(m * n, dtype=stacked.dtype, device=device)
            result[flat] = stacked.reshape(-1)[gather]
            return result.reshape(dense_shape)

        return decompress

    crow = torch.from_numpy(_indptr(compression.rows, m)).to(device)
    col = torch.from_numpy(compression.cols.astype(np.int64)).to(device)
    with warnings.catch_warnings():
        # torch warns once per process that sparse CSR is in beta: once here, silenced, and never in a call
        warnings.simplefilter("ignore", UserWarning)
        torch.sparse_csr_tensor(crow, col, torch.zeros(len(col)), size=(m, n))

    def decompress(products):
        data = torch.stack(products).reshape(-1)[gather]
        return torch.sparse_csr_tensor(crow, col, data, size=(m, n))

    return decompress


def assembler(compression, family, like, dense_shape=None):
    """``assemble(data) -> result`` from the entries' values in pattern order (numpy or JAX families).

    Used where the products and the gather already ran inside one compiled
    function (``fused.py``).
    """
    m, n = compression.shape
    if family == "numpy":
        if dense_shape is not None:
            flat = compression.rows.astype(np.int64) * n + compression.cols

            def assemble_dense(data):
                data = np.asarray(data)
                result = np.zeros(m * n, dtype=data.dtype)
                result[flat] = data
                return result.reshape(dense_shape)

            return assemble_dense
        from scipy.sparse import csr_array

        indices = _readonly(compression.cols.astype(np.int32))
        indptr = _readonly(_indptr(compression.rows, m).astype(np.int32))

        def assemble(data):
            matrix = csr_array((np.asarray(data), indices, indptr), shape=(m, n), copy=False)
            matrix.has_sorted_indices = True
            return matrix

        return assemble
    import jax
    import jax.numpy as jnp
    from jax.experimental.sparse import BCOO

    device = like.devices().pop() if hasattr(like, "devices") else None
    if dense_shape is not None:
        rows, cols = jax.device_put(compression.rows, device), jax.device_put(compression.cols, device)
        wide = str(like.dtype) == "float64" and not jax.enable_x64.get_global()
        scatter = jax.jit(lambda data: jnp.zeros((m, n), dtype=data.dtype).at[rows, cols].set(data).reshape(dense_shape))
        return _x64_call(scatter, wide)
    indices = jax.device_put(np.stack([compression.rows, compression.cols], axis=1), device)
    return lambda data: BCOO((data, indices), shape=(m, n), indices_sorted=True, unique_indices=True)
