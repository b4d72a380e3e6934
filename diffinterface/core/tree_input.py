"""Pytrees as ``x``: the call goes on over one flat array, unless the adapter takes the tree as it is.

A pytree ``x`` (nested tuples, lists, dicts of arrays) is raveled into one
flat array of the leaves' promoted dtype (:class:`~diffinterface.core.pytree.TreePlan`);
f, the tangents and (for finite differences) each leaf's dtype follow, so
the adapter prepares an ordinary array problem, and the operator's rules
(``Rules.flat_x``) make its methods take and return trees. An adapter that
lists the operator in ``pytrees`` (and whose ``takes_tree`` agrees) gets the
tree itself, with its plan as ``problem.tree``.

    >>> import numpy as np, diffinterface as di
    >>> g = di.gradient(lambda t: (t["a"] ** 2).sum() + t["b"], di.AutoFiniteDiff(),
    ...                 {"a": np.ones(2), "b": 3.0})
    >>> g["a"].round(6), round(float(g["b"]), 6)
    (array([2., 2.]), 1.0)
"""

from __future__ import annotations

from ..families import is_array
from .pytree import TreePlan
from .transform import Step


def x_tree(x, adapter, op):
    """The flattening plan of a pytree ``x``, checked against the adapter and the operator."""
    tree = TreePlan(x)
    capabilities = adapter.capabilities
    if (
        tree.family not in capabilities.families
        and tree.family not in capabilities.traceable_families
    ):
        raise TypeError(
            f"x: {type(adapter.backend).__name__} differentiates {' or '.join(adapter.capabilities.all_families)} "
            f"arrays; got a tree of {tree.family} arrays"
        )
    if op.scalar_x:
        raise ValueError(
            f"x: {op.name} expects a scalar x (shape ()); got a tree of {len(tree.shapes)} leaves"
        )
    return tree


def check_tree_seeds(seeds, plan, name, like):
    """Raise unless ``seeds`` is a non-empty tuple of trees that ``plan`` (of x or of y) fits."""
    if not isinstance(seeds, tuple) or not seeds:
        raise TypeError(
            f"{name}: expected a non-empty tuple of trees shaped like {like} (a batch); "
            f"got {type(seeds).__name__}"
        )
    for i, seed in enumerate(seeds):
        plan.check(seed, f"{name}[{i}]")


def native(tree, adapter, op):
    """True when the adapter prepares ``op`` at the pytree x itself (its plan: ``tree``)."""
    return adapter.takes_tree(op.name, tree)


def flattened(draft, tree):
    """``draft`` over the flat x of ``tree``: f of the flat array, flat tangents, each leaf's dtype."""
    call = draft.call
    seeds = call.seeds
    if call.op.seeds == "tangents":
        seeds = tuple(tree.ravel(t) for t in seeds)
    flat_f = tree.flat_function(call.f, two_argument=call.y is not None)
    flat_x = tree.ravel(call.x)
    if draft.aux is not None:  # the flat x an evaluation sees while preparing is the call's
        draft.aux.stand_in(flat_x)
    return draft._replace(
        call=call._replace(f=flat_f, x=flat_x, seeds=seeds),
        leaf_dtypes=tuple(zip(tree.slices, tree.dtypes)) if tree.mixed else None,
    )


def tree_input(draft, setting):
    """The transform of a pytree x: flat for the adapter, trees for the caller."""
    call = draft.call
    if is_array(call.x):
        return None
    op, adapter = call.op, setting.adapter
    tree = x_tree(call.x, adapter, op)
    if op.seeds == "tangents":
        check_tree_seeds(call.seeds, tree, "tangents", "x")
    if native(tree, adapter, op):

        def keep_tree(built):
            return built._replace(tree=tree)

        return Step(draft._replace(tree=tree), keep_tree)
    aux = draft.aux

    def wrap(built):
        own = built.methods
        if aux is not None:  # each call's flat copy of x stands for the call's x (core/aux.py)
            own = tuple(map(aux.noting_stand_in, own))
        return built._replace(methods=tree.wrap(op, own, built.problem), tree=tree)

    return Step(flattened(draft, tree), wrap)
