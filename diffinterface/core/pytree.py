"""Pytrees as ``x``: the flattening plan, decided once at preparation.

``x`` may be a pytree of arrays: nested tuples, lists and dicts,
namedtuples, and any node type registered with ``optree`` (the pytree
library of the ``pytree`` extra; its semantics are ``jax.tree_util``'s).
:class:`TreePlan` records the tree's structure and each leaf's path, shape and
dtype, and knows how to ravel the tree into one flat 1-D array and back.

Preparation (:mod:`diffinterface.core.prepare`) uses a plan in one of
two ways, chosen at preparation:

- the adapter takes the tree natively for this operator (``operator in
  adapter.capabilities.pytrees``, JAX's, torch's and TensorFlow's gradients): the plan only checks the
  calls (``problem.tree`` is the plan);
- otherwise the adapter sees a flat problem: ``f(unravel(flat), *ctx)`` at
  the flat ``x``, and :meth:`TreePlan.wrap` (the operator's ``Rules.flat_x``) ravels the tangents and unravels
  the results of every prepared call.

Leaves keep their dtypes: the flat array has the leaves' promoted dtype, and
each leaf is cast back to its own dtype inside ``f`` and in the results (a
flat problem's ``leaf_dtypes`` tell adapters that evaluate ``f`` at perturbed
points which entries are of which dtype, so each gets a step of its own).
Results use the layout of ``jax.jacobian`` / ``jax.hessian``: a gradient is a
tree like ``x``; a Jacobian of an array ``y`` is a tree like ``x`` whose leaf
``l`` has shape ``y.shape + l.shape``; a Hessian is a tree like ``x`` of trees
like ``x``, block ``[i][j]`` of shape ``leaf_i.shape + leaf_j.shape``.

    >>> import numpy as np
    >>> from diffinterface.core.pytree import flatten
    >>> flat, unravel = flatten({"w": np.ones((2, 2)), "b": np.zeros(2)})
    >>> flat
    array([0., 0., 1., 1., 1., 1.])
    >>> unravel(flat)["w"].shape
    (2, 2)

Pytrees as ``y`` (an ``f`` returning a pytree): :mod:`diffinterface.core.output_tree`.
"""

from __future__ import annotations

from typing import Callable

from collections import OrderedDict
import numpy as np

from .tree_key import TreeKey, leaf_key, leaf_kind, optree_module, path_name, tree_key
from ..families import (
    FAMILIES,
    NUMBERS,
    array_namespace,
    cast as _cast,
    describe,
    dtype_name,
    family_of,
    from_numpy,
    is_array,
    require_real_float,
    shape_of,
    size_of,
    write_out,
)

_FLAT_FUNCTIONS: OrderedDict = OrderedDict()
_FLAT_FUNCTIONS_SIZE = 128


def cached_function(key, build):
    """The function ``build()`` made for ``key`` (f and a plan), reused while it stays among the recent ones.

    A preparation at a pytree rebuilds its flat function each time; the same
    object each time lets the adapters' own caches (JAX's compiled functions)
    serve them. An unhashable ``f`` gets a fresh function.
    """
    try:
        cached = _FLAT_FUNCTIONS.get(key)
    except TypeError:  # an unhashable f: no cache
        return build()
    if cached is not None:
        _FLAT_FUNCTIONS.move_to_end(key)
        return cached
    _FLAT_FUNCTIONS[key] = function = build()
    if len(_FLAT_FUNCTIONS) > _FLAT_FUNCTIONS_SIZE:
        _FLAT_FUNCTIONS.popitem(last=False)
    return function


def _promoted(dtypes):
    order = ("float16", "bfloat16", "float32", "float64")
    if len(set(dtypes)) == 1:
        return dtypes[0]
    if set(dtypes) == {"float16", "bfloat16"}:
        return "float32"
    return max(dtypes, key=order.index)


_COMPLEX = {
    "float16": "complex64",
    "bfloat16": "complex64",
    "float32": "complex64",
    "float64": "complex128",
}


def _reshape(a, shape):
    """``a`` reshaped: by its method, or where its arrays have none (TensorFlow's tensors) by its family's namespace."""
    return a.reshape(shape) if hasattr(a, "reshape") else array_namespace(a).reshape(a, shape)


def _inside(flat, dtype):
    """The dtype a leaf of ``dtype`` takes inside f when the flat array is ``flat``.

    A complex flat array (complex-step differences) keeps leaves complex:
    casting to a real dtype would drop the imaginary part that carries the derivative.
    """
    return _COMPLEX[dtype] if dtype_name(flat).startswith("complex") else dtype


class TreePlan:
    """How one tree structure is raveled into a flat array and back (see the module docstring)."""

    def __init__(self, tree, name="x", complex_leaves=False):
        # complex_leaves: a plan that only checks trees (a complex x's, core/complex_convention.py),
        # never ravels
        optree = optree_module()
        paths, leaves, spec = optree.tree_flatten_with_path(tree)
        if not leaves:
            raise TypeError(
                f"{name}: expected a float, an array or a pytree of arrays; got {type(tree).__name__} "
                "with no array leaves"
            )
        families = set()
        for path, leaf in zip(paths, leaves):
            where = name + path_name(path) if path else name
            if not is_array(leaf):
                raise TypeError(
                    f"{where}: expected a float, an array or a pytree of arrays; got {describe(leaf)}"
                )
            if not (complex_leaves and dtype_name(leaf).startswith("complex")):
                require_real_float(leaf, where, "Convert it yourself")
            if leaf.__class__ is not float:  # a Python float takes the family of the other leaves
                families.add(family_of(leaf))
        if len(families) > 1:
            raise TypeError(
                f"{name}: expected every leaf in one array family; got leaves of {sorted(families)}"
            )
        self.spec = spec
        self.paths = tuple(paths)
        self.family = families.pop() if families else NUMBERS
        arrays = [leaf for leaf in leaves if leaf.__class__ is not float]
        self.like = arrays[0] if arrays else None
        self.shapes = tuple(shape_of(leaf) for leaf in leaves)
        self.dtypes = tuple(dtype_name(leaf) for leaf in leaves)
        self.sizes = tuple(size_of(s) for s in self.shapes)
        bounds = np.cumsum((0, *self.sizes))
        self.slices = tuple(slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]))
        self.size = int(bounds[-1])
        # The flat array's dtype: the widest leaf dtype, so that no leaf loses precision in it. Adapters
        # that evaluate f at perturbed points (finite differences) size each entry's step for its
        # leaf's dtype (``Problem.leaf_dtypes``), so a float32 leaf's step survives the cast back.
        self.dtype = None if complex_leaves else _promoted(self.dtypes)
        self.mixed = len(set(self.dtypes)) > 1
        self.key = TreeKey(
            spec,
            self.paths,
            tuple(leaf_key(leaf) for leaf in leaves),
            tuple(leaf_kind(leaf) for leaf in leaves),
        )
        self._checks = tuple(
            (leaf.__class__, getattr(leaf, "shape", ()), getattr(leaf, "dtype", None), kind)
            for leaf, kind in zip(leaves, self.key.kinds)
        )
        self._flatten = optree.tree_flatten
        self._unflatten = spec.unflatten

    # -- leaves -----------------------------------------------------------------------------------

    def leaves(self, tree):
        """The leaves of ``tree`` (assumed to fit the plan), in the plan's order."""
        return self._flatten(tree)[0]

    def unflatten(self, leaves):
        return self._unflatten(leaves)

    def array_leaves(self, tree):
        """The leaves of ``tree`` with Python floats as 0-d float64 arrays of the plan's family.

        Any leaf may be a float, not only those prepared as floats: a float and a
        0-d array are one kind (:func:`leaf_kind`).
        """
        leaves = self._flatten(tree)[0]
        for i, leaf in enumerate(leaves):
            if leaf.__class__ is float:
                leaves[i] = from_numpy(np.asarray(leaf), self.family, self.like)
        return leaves

    def fits(self, tree):
        """True when ``tree`` has the prepared structure and leaves (the cheap per-call check)."""
        leaves, spec = self._flatten(tree)
        if spec != self.spec:
            return False
        for leaf, (cls, shape, dtype, kind) in zip(leaves, self._checks):
            if leaf.__class__ is not cls:
                # another class of the same kind (a NumPy scalar for a 0-d array): the slower test
                if not is_array(leaf) or leaf_kind(leaf) != kind:
                    return False
            elif getattr(leaf, "shape", ()) != shape or getattr(leaf, "dtype", None) != dtype:
                return False
        return True

    def check(self, tree, name):
        """Raise a ValueError naming the leaf where ``tree`` does not fit the plan (tangents)."""
        if not self.fits(tree):
            raise ValueError(
                f"{name}: expected a tree shaped like x; {self.key.difference(tree_key(tree))}"
            )

    # -- ravel / unravel --------------------------------------------------------------------------

    def ravel(self, tree):
        """The leaves of ``tree`` as one flat 1-D array of the promoted dtype, in the tree's family."""
        return FAMILIES[self.family].ravel(self.array_leaves(tree), self.dtype)

    def unravel(self, flat):
        """The tree of the plan's structure from a flat array (any family, traced values included)."""
        if self.mixed:
            return self._unflatten(
                [
                    _cast(_reshape(flat[s], shape), _inside(flat, d))
                    for s, shape, d in zip(self.slices, self.shapes, self.dtypes)
                ]
            )
        return self._unflatten(
            [_reshape(flat[s], shape) for s, shape in zip(self.slices, self.shapes)]
        )

    def unravel_last(self, a, lead):
        """``a`` of shape ``lead + (size,)`` as a tree of leaves shaped ``lead + leaf.shape`` (Jacobians)."""
        return self._unflatten(
            [
                _cast(_reshape(a[..., s], (*lead, *shape)), d)
                for s, shape, d in zip(self.slices, self.shapes, self.dtypes)
            ]
        )

    def unravel_square(self, h):
        """``h`` of shape ``(size, size)`` as a tree of trees, block ``[i][j]`` shaped ``leaf_i + leaf_j``."""
        rows = []
        for si, shape_i, di in zip(self.slices, self.shapes, self.dtypes):
            row = [
                _cast(_reshape(h[si, sj], (*shape_i, *shape_j)), _promoted((di, dj)))
                for sj, shape_j, dj in zip(self.slices, self.shapes, self.dtypes)
            ]
            rows.append(self._unflatten(row))
        return self._unflatten(rows)

    def flat_function(self, f, two_argument):
        """``f`` as a function of the flat array (``f(y, flat, *ctx)`` when ``two_argument``), cached."""
        unravel = self.unravel

        def build():
            flat_f: Callable
            if two_argument:

                def flat_f(y, flat, *ctx):
                    return f(y, unravel(flat), *ctx)

            else:

                def flat_f(flat, *ctx):
                    return f(unravel(flat), *ctx)

            return flat_f

        return cached_function((f, self.key, two_argument), build)

    # -- prepared methods over the flat problem ---------------------------------------------------

    def wrap(self, op, methods, problem):
        """(plain, valued) prepared methods of ``op`` taking and returning trees, over the flat ``methods``."""
        wrap = op.rules.flat_x
        if wrap is None:
            raise ValueError(f"x: {op.name} expects a scalar x; got a tree")
        return wrap(self, *methods, problem)


def flatten(tree):
    """``(flat, unravel)``: the leaves of ``tree`` as one flat 1-D array, and the function undoing it.

    The flat array is in the leaves' family (numpy, torch or JAX) with their
    promoted dtype; ``unravel(flat)`` rebuilds the tree, each leaf in its own
    dtype, from any flat array of that size (traced values included, so it may
    be used inside a differentiated function).

    Parameters
    ----------
    tree : pytree of arrays
        Nested tuples, lists, dicts, namedtuples (and ``optree``-registered nodes) of
        arrays and numbers of one family.

    Returns
    -------
    flat : array
        1-D, the leaves raveled in tree order.
    unravel : callable
        ``unravel(flat) -> tree`` with the structure, shapes and dtypes of ``tree``.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> params = {"k": 2.0, "x0": np.array([0.5, 1.5])}
    >>> flat, unravel = di.flatten(params)
    >>> flat
    array([2. , 0.5, 1.5])
    >>> unravel(flat * 2)["x0"]
    array([1., 3.])
    """
    plan = TreePlan(tree, "tree")
    return plan.ravel(tree), plan.unravel


def write_tree_out(out, result, name="out"):
    """``out=`` for tree results: ``out`` has the result's structure; each leaf is written in place."""
    if is_array(result):
        return write_out(out, result, name)
    optree = optree_module()
    paths, results, spec = optree.tree_flatten_with_path(result)
    buffers, out_spec = optree.tree_flatten(out)
    if out_spec != spec:
        raise ValueError(
            f"{name}: expected buffers in a tree shaped like the result, {spec}; got {out_spec}"
        )
    for path, buffer, leaf in zip(paths, buffers, results):
        write_out(buffer, leaf, name + path_name(path))
    return out
