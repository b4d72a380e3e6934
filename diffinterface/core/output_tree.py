"""Pytrees as ``y``: the output plan of an ``f`` returning a pytree of arrays.

``jacobian``, ``pushforward`` and ``pullback`` (and their
``value_and_`` forms: the operators whose row has ``tree_output``) also take an ``f`` returning a pytree of arrays. At
preparation the output is learned by one evaluation of ``f`` through the
adapter (:func:`tree_output`, the transform of the preparation pipeline, only when the adapter
refuses the output as not an array: an array ``y`` pays nothing), and
:class:`OutputPlan` records it; the adapter then sees ``f`` returning the flat
output (leaves raveled and concatenated in the promoted dtype), and the
prepared methods unravel the results into y-trees and ravel the y-shaped
cotangents, which are checked and belong to the preparation's key. Every
backend goes through this flattened path today (JAX and torch could take
trees natively later). Layouts, as ``jax.jacobian``: a pushforward result is
a tree like y; a pullback result a tree like x; the Jacobian a tree like y
whose leaf ``[k]`` has shape ``y[k].shape + x.shape`` (for an array x) or is a
tree like x of ``y[k].shape + x[l].shape``. Each leaf keeps its dtype.

    >>> import numpy as np
    >>> import diffinterface as di
    >>> def f(x):
    ...     return {"double": 2 * x, "total": x.sum()}
    >>> J = di.jacobian(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]))
    >>> J["double"].round(6), J["total"].round(6)
    (array([[2., 0.],
           [0., 2.]]), array([1., 1.]))
    >>> (g,) = di.pullback(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]),
    ...                    ({"double": np.array([1.0, 0.0]), "total": np.array(1.0)},))
    >>> g.round(6)
    array([3., 1.])

The operator's module says how its methods take y-trees (``Rules.flat_y``).
"""

from __future__ import annotations

import numpy as np

from ..families import (
    FAMILIES,
    FLOAT_DTYPES,
    array_namespace,
    describe,
    dtype_name,
    family_of,
    from_numpy,
    is_array,
    shape_of,
    size_of,
)
from ..families import cast as _cast
from .boundary import explain
from .problem import Problem
from .transform import Step
from .tree_input import check_tree_seeds, flattened, native, x_tree
from .tree_key import optree_module, path_name
from .pytree import (
    _inside,
    _reshape,
    _promoted,
    cached_function,
)


class OutputPlan:
    """How a pytree output ``f(x)`` is raveled into one flat 1-D array and back.

    Learned at preparation from one evaluation of ``f`` by the adapter (leaves
    may then be traced values: only their shapes and dtypes are kept).
    ``family`` is the user's (x's) family: results and cotangents live there.
    The flat output has the leaves' promoted dtype; each leaf's part is cast
    back to that leaf's dtype in the results.
    """

    def __init__(self, paths, leaves, spec, family):
        self.spec, self.paths, self.family = spec, tuple(paths), family
        for path, leaf in zip(paths, leaves):
            if not is_array(leaf) or (
                leaf.__class__ is not float and dtype_name(leaf) not in FLOAT_DTYPES
            ):
                raise TypeError(
                    f"f: expected f to return an array, a number or a pytree of real floating-point "
                    f"arrays; its output{path_name(path)} is {describe(leaf)}"
                )
        self.shapes = tuple(shape_of(leaf) for leaf in leaves)
        self.dtypes = tuple(
            "float64" if leaf.__class__ is float else dtype_name(leaf) for leaf in leaves
        )
        self.sizes = tuple(size_of(s) for s in self.shapes)
        bounds = np.cumsum((0, *self.sizes))
        self.slices = tuple(slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]))
        self.size = int(bounds[-1])
        self.dtype = _promoted(self.dtypes)
        self._leaves = tuple(zip(self.shapes, self.dtypes))
        self._flatten = optree_module().tree_flatten
        self._unflatten = spec.unflatten

    def __repr__(self):
        leaves = ", ".join(
            f"{path_name(p)}: {d} {s}" for p, (s, d) in zip(self.paths, self._leaves)
        )
        return f"a tree of {len(self.paths)} leaves {{{leaves}}}"

    # -- the flat output inside f (any family, traced values included) ----------------------------

    def ravel_output(self, out):
        """``f``'s output tree as one flat array of the promoted dtype (complex leaves stay complex)."""
        leaves, spec = self._flatten(out)
        if spec != self.spec:
            # unflattening the old structure would return the derivatives under the old keys
            raise ValueError(
                f"f: returned a tree of another structure than at the preparation: expected "
                f"{self.spec}; got {spec}. Prepare again for this output"
            )
        xp = array_namespace(*leaves)
        parts = []
        for leaf in leaves:
            if leaf.__class__ is float:
                leaf = xp.asarray(leaf)
            parts.append(xp.reshape(_cast(leaf, _inside(leaf, self.dtype)), (-1,)))
        return parts[0] if len(parts) == 1 else xp.concat(parts)

    def flat_output(self, f, two_argument=False):
        """``f`` returning the flat output array, cached like :meth:`TreePlan.flat_function`."""
        if two_argument:
            raise TypeError(
                "y: a two-argument f(y, x) writes an array y; a pytree output needs f(x) returning it"
            )
        ravel = self.ravel_output

        def build():
            def flat_output_f(x, *ctx):
                return ravel(f(x, *ctx))

            return flat_output_f

        return cached_function(("output", f, self.spec, self._leaves), build)

    # -- the user's side: cotangents in, results out ----------------------------------------------

    def check(self, tree, name):
        """Raise naming ``name`` and the first leaf where ``tree`` is not shaped like ``f(x)``."""
        try:
            paths, leaves, spec = optree_module().tree_flatten_with_path(tree)
        except Exception:  # noqa: BLE001 - an unflattenable value is reported as such
            paths, leaves, spec = (), (), None
        if spec != self.spec:
            raise ValueError(
                f"{name}: expected a tree shaped like the output y = f(x), {self.spec}; "
                f"got {spec if spec is not None else type(tree).__name__}"
            )
        for path, leaf, (shape, dtype) in zip(paths, leaves, self._leaves):
            where = name + path_name(path)
            if not is_array(leaf) or shape_of(leaf) != shape:
                raise ValueError(
                    f"{where}: expected an array of shape {shape} like y{path_name(path)}; "
                    f"got {describe(leaf)}"
                )
            if leaf.__class__ is not float and family_of(leaf) != self.family:
                raise TypeError(
                    f"{where}: expected a {self.family} array like x; got {describe(leaf)}"
                )
            if dtype_name(leaf) != dtype and leaf.__class__ is not float:
                raise TypeError(
                    f"{where}: expected dtype {dtype} like y{path_name(path)}; got {describe(leaf)}. "
                    "Convert it yourself: diffinterface does not change dtypes."
                )

    def fits(self, tree):
        """True when ``tree`` has the output's structure and leaf shapes and dtypes (the per-call check)."""
        try:
            leaves, spec = self._flatten(tree)
        except Exception:  # noqa: BLE001 - not a tree
            return False
        if spec != self.spec:
            return False
        for leaf, (shape, dtype) in zip(leaves, self._leaves):
            if getattr(leaf, "shape", ()) != shape or (
                leaf.__class__ is not float and dtype_name(leaf) != dtype
            ):
                return False
        return True

    def ravel(self, tree):
        """A (checked) cotangent tree as one flat array of the promoted dtype, in the user's family."""
        leaves = self._flatten(tree)[0]
        like = next((leaf for leaf in leaves if leaf.__class__ is not float), None)
        leaves = [
            from_numpy(np.asarray(leaf), self.family, like) if leaf.__class__ is float else leaf
            for leaf in leaves
        ]
        return FAMILIES[self.family].ravel(leaves, self.dtype)

    def unravel(self, flat):
        """The output tree from a flat array: each leaf reshaped and cast back to its own dtype."""
        return self._unflatten(
            [_cast(_reshape(flat[s], shape), d) for s, (shape, d) in zip(self.slices, self._leaves)]
        )

    def unravel_first(self, jacobian, x_tree):
        """A flat-output Jacobian (leading axis of size ``size``) as a y-tree of blocks, as ``jax.jacobian``.

        ``jacobian`` is an array ``(size, *x.shape)``, or for a pytree x a tree
        like x of arrays ``(size, *leaf.shape)`` (``x_tree`` its plan); block
        ``[y_leaf]`` is then shaped ``y_leaf.shape + x.shape`` (or a tree like x
        of ``y_leaf.shape + x_leaf.shape``).
        """

        def block(s, shape, dtype, a):
            return _cast(_reshape(a[s], (*shape, *a.shape[1:])), _promoted((dtype, dtype_name(a))))

        if x_tree is None:
            return self._unflatten(
                [block(s, shape, d, jacobian) for s, (shape, d) in zip(self.slices, self._leaves)]
            )
        x_leaves = x_tree.leaves(jacobian)
        return self._unflatten(
            [
                x_tree.unflatten([block(s, shape, d, a) for a in x_leaves])
                for s, (shape, d) in zip(self.slices, self._leaves)
            ]
        )

    def wrap(self, op, methods, x_tree):
        """(plain, valued) methods of ``op`` taking and returning y-trees, over the flat-output ``methods``."""
        wrap = op.rules.flat_y
        if wrap is None:  # pragma: no cover - only operators with tree_output get here
            raise ValueError(f"f: {op.name} needs f to return an array; it returns {self!r}")
        return wrap(self, *methods, x_tree)


def output_plan(out, family):
    """The :class:`OutputPlan` of an output ``out`` of f, or None when ``out`` is an array (or not a tree)."""
    if is_array(out):
        return None
    try:
        paths, leaves, spec = optree_module().tree_flatten_with_path(out)
    except Exception:  # noqa: BLE001 - not a tree: the caller reports the original error
        return None
    if not leaves or spec.num_nodes == 1:
        return None
    if all(leaf.__class__ in (float, int) for leaf in leaves):
        # a list of plain numbers is an output that forgot to be an array (no leaf can depend on x):
        # the caller's "f returned a list" error says so better than a tree of constants would
        return None
    return OutputPlan(paths, leaves, spec, family)


def tree_output(draft, setting):
    """The transform of a pytree output: the adapter sees f returning one flat array.

    The output is learned here, through the adapter's own evaluation (which an
    array output pays anyway: the spec learned goes on with the draft), and
    only when the adapter refuses it as not an array is f probed for its
    tree. An adapter that learns f's output from each call
    (``output_from_each_call``) is not asked here, unless ``learn_output``:
    a pytree output then shows up at the first call (core/call.py).
    """
    call = draft.call
    op, adapter = call.op, setting.adapter
    if not op.tree_output or call.y is not None:
        return None
    x_plan = None if is_array(call.x) else x_tree(call.x, adapter, op)
    if x_plan is not None and native(x_plan, adapter, op):
        return None
    if (
        x_plan is None
        and not setting.learn_output
        and draft.spec is None
        and op.name in adapter.capabilities.output_from_each_call
    ):
        return None  # learning the output here would cost an evaluation the native recipe does not make
    if x_plan is not None and op.seeds == "tangents":
        # flattening ravels the tangents: checked first, so that a wrong one is named (as tree_input's
        # check would, later), not raveled into a framework's error
        check_tree_seeds(call.seeds, x_plan, "tangents", "x")
    problem = Problem.of(draft if x_plan is None else flattened(draft, x_plan), setting)
    try:
        plan, spec = _learned(problem)
    except _LeafRefusal as refusal:
        raise refusal.args[0] from None
    except Exception as error:
        better = explain(error, adapter, problem.f, problem.x, problem.ctx, None, trees=True)
        if better is None:
            raise
        raise better from error
    if plan is None:
        return Step(draft._replace(spec=spec))
    seeds = call.seeds
    if op.seeds == "cotangents":
        check_tree_seeds(seeds, plan, "cotangents", "the output y = f(x)")
        seeds = tuple(plan.ravel(c) for c in seeds)

    def wrap(built):
        return built._replace(methods=plan.wrap(op, built.methods, x_plan), ytree=plan)

    rewritten = call._replace(f=plan.flat_output(call.f), seeds=seeds)
    return Step(draft._replace(call=rewritten, spec=spec, ytree=plan), wrap)


class _LeafRefusal(Exception):
    """The plan's refusal of a leaf of f's output tree (its ``args[0]``): it names the leaf, which the
    boundary's reading of f's output (a tree holding a leaf that is no float array) would not."""


def _learned(problem):
    """``(plan, spec)``: the :class:`OutputPlan` of a pytree output (None for an array) and the flat spec.

    An array output is learned by the adapter, as it would be anyway; only
    when the adapter refuses it as not an array is f probed once, through the
    adapter's own evaluation (JAX traces it, so leaves may be tracers: only
    their shapes and dtypes are kept).
    """
    try:
        return None, problem.spec
    except TypeError as error:
        refusal = error
    plans, failures = [], []
    f = problem.f

    def probe(*args):
        out = f(*args)
        try:
            plan = output_plan(out, problem.family)
        except TypeError as error:  # a leaf that is no float array: the plan names it
            failures.append(error)
            raise
        if plan is None:
            return out
        plans.append(plan)
        return plan.ravel_output(out)

    try:
        spec = problem.replace(f=probe, _spec=None).spec
    except TypeError:
        if failures:
            raise _LeafRefusal(failures[0]) from None
        if not plans:
            raise refusal from None
        raise
    if not plans:
        raise refusal
    return plans[-1], spec
