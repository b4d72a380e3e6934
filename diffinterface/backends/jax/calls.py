"""The prepared callables of the JAX adapter: results to numpy, the thread-local x64 switch
and the contexts as ``jax.jit`` sees them (canonical scalars, static values, mixed trees)."""

from __future__ import annotations

import contextlib

import jax
import numpy as np

from ...core.boundary import check_output
from ...families.jax import x64_call

#: JAX's x64 switch: ``swap_local``/``set_local`` flip it for this thread only.
_X64 = jax.enable_x64
_LEAF_TYPES = (np.ndarray, np.generic, int, float, complex, bool, jax.Array)


# -- results back to numpy -----------------------------------------------------------------------


def _owned(result):
    """The JAX array ``result`` as a numpy array the caller owns (writable).

    ``np.asarray`` would give a read-only view of JAX's buffer (on the CPU), or
    of the host copy JAX keeps: numpy in, numpy out promises arrays the user
    can write into and pass back as ``out=``, so the result is copied once.
    """
    return np.array(result)


def _to_numpy(result):
    """``result`` (an array or nested tuples of them) as numpy arrays the caller owns."""
    if isinstance(result, tuple):
        return tuple(_to_numpy(r) for r in result)
    return _owned(result)


def _pair_to_numpy(result):
    return _owned(result[0]), _owned(result[1])


def _numpy_batch_call(fn, batch, with_first):
    """The numpy-family call of a batched operator compiled with flat arguments.

    ``fn(x, *tangents, *ctx)`` returns the products stacked along a first axis
    (the single product for a batch of one), after ``first`` (value or gradient)
    when ``with_first``: one conversion to numpy, then numpy views per tangent.
    Flat numpy arguments and one output array dispatch faster than tuples.
    """
    asarray = _owned
    if batch == 1:
        if with_first:

            def call(x, tangents, *ctx):
                first, product = fn(x, *tangents, *ctx)
                return asarray(first), (asarray(product),)

        else:

            def call(x, tangents, *ctx):
                return (asarray(fn(x, *tangents, *ctx)),)

    elif with_first:

        def call(x, tangents, *ctx):
            first, products = fn(x, *tangents, *ctx)
            return asarray(first), _unstacked(asarray(products))

    else:

        def call(x, tangents, *ctx):
            return _unstacked(asarray(fn(x, *tangents, *ctx)))

    return call


def _unstacked(products):
    """The products stacked along the first axis, as a tuple of arrays (0-d arrays, not NumPy scalars)."""
    if products.ndim > 1:
        return tuple(products)
    return tuple(products[i, ...] for i in range(products.shape[0]))


def _wrap(fn, convert, wide, arity=None):
    """The prepared callable: ``fn`` itself, or ``fn`` with results to numpy and/or under x64.

    ``arity`` 1 (x alone, the common call) gets a one-argument wrapper: no
    argument tuple to pack and unpack per call.
    """
    if wide:
        if convert is None:
            return x64_call(fn, True)
        swap, restore = _X64.swap_local, _X64.set_local

        def call(*args):
            previous = swap(True)
            try:
                return convert(fn(*args))
            finally:
                restore(previous)

        return call
    if convert is None:
        return fn
    if arity == 1:

        def call_at(x):
            return convert(fn(x))

        return call_at

    def call(*args):
        return convert(fn(*args))

    return call


def _x64_scope(wide):
    """x64 on for this thread when ``wide`` (preparation only: the public context manager)."""
    return jax.enable_x64(True) if wide else contextlib.nullcontext()


# -- contexts as jax.jit sees them ---------------------------------------------------------------


def _scalar_like(value):
    """A Python number, a NumPy scalar or a 0-d numpy array: one kind of Constant (see below)."""
    cls = value.__class__
    if cls is float or cls is int:
        return True
    return isinstance(value, np.generic) or (cls is np.ndarray and value.ndim == 0)


def _canonical_scalar(value):
    """One traced form per dtype, so that a float, then an ``np.float64``, then a 0-d array compile once.

    float64 and int64 values become Python numbers (weakly typed for JAX, as a
    Python float in ``f`` would be); other dtypes 0-d arrays of that dtype.
    """
    cls = value.__class__
    if cls is float or cls is int:
        return value
    dtype = value.dtype
    if dtype == np.float64:
        return float(value)
    if dtype == np.int64:
        return int(value)
    return np.asarray(value)


def _canonical_scalars(fn, offset, positions, mixed=()):
    """``fn`` with the scalar-like contexts at ``positions`` (after ``offset`` arguments) made canonical,
    and the contexts at ``mixed`` wrapped as :class:`_Mixed`."""
    if not positions and not mixed:
        return fn
    positions = tuple(offset + i for i in positions)
    mixed = tuple(offset + i for i in mixed)

    def call(*args):
        args = list(args)
        for i in positions:
            args[i] = _canonical_scalar(args[i])
        for i in mixed:
            args[i] = _Mixed(args[i])
        return fn(*args)

    return call


def _traceable(value):
    """True when ``value`` is a pytree of arrays and numbers (a traced argument of jit)."""
    return all(isinstance(leaf, _LEAF_TYPES) for leaf in jax.tree_util.tree_leaves(value))


def _output_checked(f):
    """``f`` raising a TypeError naming it when it returns no array (jax.jvp accepts lists and None);
    under jit this runs only while tracing."""

    def checked(*args):
        return check_output(f, f(*args))

    return checked


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


class _Mixed:
    """A context value mixing arrays and other leaves (``{"mode": "sum", "scale": 2.0}``), for jit.

    Its arrays and numbers are traced; its other leaves (strings...) and its
    structure are the static part of the tree, so a new scale reuses the compiled
    code and a new mode recompiles. ``f`` receives the value itself, rebuilt.
    """

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _flatten_mixed(mixed):
    leaves, treedef = jax.tree_util.tree_flatten(mixed.value)
    traced = tuple(i for i, leaf in enumerate(leaves) if isinstance(leaf, _LEAF_TYPES))
    static = tuple((i, leaf) for i, leaf in enumerate(leaves) if not isinstance(leaf, _LEAF_TYPES))
    return [leaves[i] for i in traced], (treedef, traced, static)


def _unflatten_mixed(aux, children):
    treedef, traced, static = aux
    leaves = [None] * treedef.num_leaves
    for i, child in zip(traced, children):
        leaves[i] = child
    for i, leaf in static:
        leaves[i] = leaf
    return jax.tree_util.tree_unflatten(treedef, leaves)


jax.tree_util.register_pytree_node(_Mixed, _flatten_mixed, _unflatten_mixed)


def _mixed_positions(ctx):
    """Contexts that are neither traceable nor hashable: passed as :class:`_Mixed` trees."""
    return tuple(i for i, value in enumerate(ctx) if not _traceable(value) and not _hashable(value))


def _tree_to_numpy(tree):
    return jax.tree_util.tree_map(_owned, tree)


def _pair_tree_to_numpy(pair):
    return _owned(pair[0]), _tree_to_numpy(pair[1])
