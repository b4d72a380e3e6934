"""AutoSparse over AutoJAX: one compiled function per sparse operator (the JAX adapter's
``sparse_jacobian`` / ``sparse_hessian`` hooks, which ``wrappers/sparse/adapter.py`` asks for).

With ``AutoJAX(jit=True)`` as the dense backend, the products over the seeds
(``vmap`` of ``jvp``, ``vjp`` or forward-over-reverse hvps) and the gather of
the entries are traced into one ``jax.jit`` function, as asdex does: a
prepared call is one dispatch plus wrapping the values into the result
(BCOO or scipy CSR), instead of the products' call, a gather call and the
wrapping. The functions differentiated are the dense adapter's own: ``f``,
and for Hessians its ``differentiable_value_and_gradient`` hook (see
``core/adapter.py``).

Preparation compiles ``jacobian`` / ``hessian``; the ``value_*`` variant is
compiled by ``jax.jit`` on its first call (one compilation saved for callers
that never ask for it).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ...families import family_of, is_array
from .calls import _owned, _wrap
from .transforms import _mapped


def _x64_call(fn, wide):
    return _wrap(fn, None, wide)


def can_fuse(adapter, problem):
    """True when the JAX adapter compiles this problem (jit, an explicit preparation), and f is
    one-argument with array contexts only."""
    return (
        adapter._compiles(problem)
        and problem.y is None
        and problem.family in ("numpy", "jax")
        and all(is_array(value) and family_of(value) in ("numpy", "jax") for value in problem.ctx)
    )


def _entries(compression, ncolors):
    """``entries(products)``: the pattern's entries read out of the products stacked ``(ncolors, ...)``.

    A two-dimensional gather of (color, position) pairs, as asdex reads its
    compressed matrix: XLA runs it faster than the same gather of flat positions
    out of the products reshaped to one dimension (``benchmarks/README.md``).
    """
    size = compression.product_size
    gather = np.asarray(compression.gather)
    pairs = np.stack([gather // size, gather % size], axis=1).astype(np.int32)
    numbers = lax.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1)
    )

    def entries(products):
        return lax.gather(
            products.reshape(ncolors, size),
            pairs,
            numbers,
            slice_sizes=(1, 1),
            mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS,
        )

    return entries


def _stacked_seeds(compression, matrix, shape):
    return jnp.asarray(matrix.reshape((len(matrix), *shape)))


def _compile(fn, problem, wide):
    jitted = jax.jit(fn)
    with jax.enable_x64(True) if wide else _nothing():
        jitted.lower(problem.x, *problem.ctx).compile()
    return jitted


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _inside_jit(compression, problem, dense_shape):
    """For JAX results, the BCOO is built inside the compiled function (cheaper per call than
    wrapping its values afterwards); None for the others."""
    if problem.family != "jax" or dense_shape is not None:
        return None
    from jax.experimental.sparse import BCOO

    indices = np.stack([compression.rows, compression.cols], axis=1)
    shape = compression.shape
    return lambda data: BCOO((data, indices), shape=shape, indices_sorted=True, unique_indices=True)


def _assembled(value_and_data, compression, problem, dense_shape, assembler):
    """``(value_and_result, assemble)``: wraps ``value_and_data`` (last item: the entries' values) so that
    it returns BCOO from inside the compiled function when it can, and what is left to assemble after
    (``assembler(compression, family, like, dense_shape)``, AutoSparse's)."""
    inside = _inside_jit(compression, problem, dense_shape)
    if inside is None:
        return value_and_data, assembler(compression, problem.family, problem.x, dense_shape)

    def value_and_result(x, *ctx):
        *first, data = value_and_data(x, *ctx)
        return (*first, inside(data))

    return value_and_result, lambda result: result


def fused_jacobian(problem, compression, seed_matrix, dense_shape, assembler, batch=None):
    """``(jacobian, value_and_jacobian)`` compiled as one function each; the colors' products in batches
    of ``batch`` (None: all at once)."""
    f, x_shape = problem.f, problem.x_shape
    spec = problem.spec
    wide = problem.x_dtype == "float64" and not jax.enable_x64.get_global()
    entries = _entries(compression, len(seed_matrix))
    with jax.enable_x64(wide):
        if compression.kind == "columns":
            seeds = _stacked_seeds(compression, seed_matrix, x_shape)

            def value_and_data(x, *ctx):
                g = lambda x: f(x, *ctx)  # noqa: E731
                if batch is None:
                    value, products = jax.vmap(
                        lambda s: jax.jvp(g, (x,), (s.astype(x.dtype),)), out_axes=(None, 0)
                    )(seeds)
                else:
                    value = g(x)
                    products = _mapped(
                        lambda s: jax.jvp(g, (x,), (s.astype(x.dtype),))[1], seeds, batch
                    )
                return value, entries(products)
        else:
            seeds = _stacked_seeds(compression, seed_matrix, spec.shape)

            def value_and_data(x, *ctx):
                value, pullback = jax.vjp(lambda x: f(x, *ctx), x)
                products = _mapped(lambda s: pullback(s.astype(value.dtype))[0], seeds, batch)
                return value, entries(products)

    return _compiled(value_and_data, compression, problem, dense_shape, assembler, wide)


def fused_hessian(
    problem, value_and_gradient, compression, seed_matrix, dense_shape, assembler, batch=None
):
    """``(hessian, value_gradient_and_hessian)``: forward-over-reverse hvps on the seeds (in batches of
    ``batch``; None: all at once) and the gather."""
    x_shape = problem.x_shape
    wide = problem.x_dtype == "float64" and not jax.enable_x64.get_global()
    entries = _entries(compression, len(seed_matrix))
    with jax.enable_x64(wide):
        seeds = _stacked_seeds(compression, seed_matrix, x_shape)

    def value_gradient_and_data(x, *ctx):
        vg = lambda x: value_and_gradient(x, *ctx)  # noqa: E731
        if batch is None:
            (value, gradient), (_, products) = jax.vmap(
                lambda s: jax.jvp(vg, (x,), (s.astype(x.dtype),)), out_axes=(None, 0)
            )(seeds)
        else:
            value, gradient = vg(x)
            products = _mapped(
                lambda s: jax.jvp(vg, (x,), (s.astype(x.dtype),))[1][1], seeds, batch
            )
        return value, gradient, entries(products)

    return _compiled(
        value_gradient_and_data,
        compression,
        problem,
        dense_shape,
        assembler,
        wide,
        with_gradient=True,
    )


def _compiled(
    value_and_data, compression, problem, dense_shape, assembler, wide, with_gradient=False
):
    """``(operator, value_and_operator)`` from ``value_and_data`` (the value, with the gradient when
    ``with_gradient``, then the entries' values): compiled, the entries assembled into the result, the
    value and gradient in x's family."""
    value_and_data, assemble = _assembled(
        value_and_data, compression, problem, dense_shape, assembler
    )
    data = _compile(lambda x, *ctx: value_and_data(x, *ctx)[-1], problem, wide)
    valued = jax.jit(value_and_data)
    # numpy results own their values (the CSR's data too, so that it can be passed back as ``out=``)
    to_array = _owned if problem.family == "numpy" else (lambda v: v)
    data_call, valued_call = _x64_call(data, wide), _x64_call(valued, wide)

    def operator(x, *ctx):
        return assemble(to_array(data_call(x, *ctx)))

    if with_gradient:

        def value_gradient_and_operator(x, *ctx):
            value, gradient, entries = valued_call(x, *ctx)
            return to_array(value), to_array(gradient), assemble(to_array(entries))

        return operator, value_gradient_and_operator

    def value_and_operator(x, *ctx):
        value, entries = valued_call(x, *ctx)
        return to_array(value), assemble(to_array(entries))

    return operator, value_and_operator
