"""An aux value split into the leaves a framework transform can return and those it cannot.

A backend whose transforms take ``has_aux`` (JAX, torch.func, a traced
TensorFlow function) hands them aux's arrays only; strings, Python numbers and
numpy constants are kept from the evaluation itself and put back around each
call's arrays. Every backend's native-aux class does that split with its own
tree utilities through :class:`AuxLeaves`.

    >>> def flatten(tree):  # a framework's: optree.tree_flatten, jax.tree_util.tree_flatten
    ...     return list(tree.values()), list(tree)
    >>> def unflatten(keys, leaves):
    ...     return dict(zip(keys, leaves))
    >>> layout, arrays = AuxLeaves.split(
    ...     {"norm": 5.0, "label": "at x"}, flatten, unflatten, lambda leaf: isinstance(leaf, float)
    ... )
    >>> arrays, layout.static
    ([5.0], {1: 'at x'})
    >>> layout.join([6.0])
    {'norm': 6.0, 'label': 'at x'}
"""

from __future__ import annotations

from typing import Any, Callable


class AuxLeaves:
    """The layout of one aux value: its ``treedef``, its ``static`` leaves by position (those that are
    not arrays, kept as they are) and the ``positions`` of its array leaves."""

    __slots__ = ("treedef", "static", "positions", "size", "unflatten")

    def __init__(self, treedef: Any, static: dict, positions: list, size: int, unflatten: Callable):
        self.treedef, self.static, self.positions = treedef, static, positions
        self.size, self.unflatten = size, unflatten

    @classmethod
    def split(
        cls, aux: Any, flatten: Callable, unflatten: Callable, is_array: Callable
    ) -> tuple[AuxLeaves, list]:
        """``(layout, array leaves)`` of ``aux``: ``flatten(aux) -> (leaves, treedef)``,
        ``unflatten(treedef, leaves)`` its inverse, ``is_array(leaf)`` the leaves a transform returns."""
        leaves, treedef = flatten(aux)
        positions = [i for i, leaf in enumerate(leaves) if is_array(leaf)]
        static = {i: leaf for i, leaf in enumerate(leaves) if not is_array(leaf)}
        return cls(treedef, static, positions, len(leaves), unflatten), [
            leaves[i] for i in positions
        ]

    def join(self, arrays) -> Any:
        """The aux with ``arrays`` (one per array position, in order) put back among the static leaves."""
        leaves = [self.static.get(i) for i in range(self.size)]
        for i, array in zip(self.positions, arrays):
            leaves[i] = array
        return self.unflatten(self.treedef, leaves)
