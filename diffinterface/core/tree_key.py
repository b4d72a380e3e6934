"""What kind of pytree a value is: its structure and each leaf's family, dtype and shape.

A preparation at a pytree records its :class:`TreeKey`; a call's tree fits
when its key is equal (a Python float, a NumPy scalar and a 0-d array of one
dtype are one kind, :func:`leaf_kind`), and the mismatch report names the
first leaf that differs (:meth:`TreeKey.difference`).

    >>> import numpy as np
    >>> tree_key({"a": np.ones(2)}) == tree_key({"a": np.zeros(2)})
    True
    >>> tree_key({"a": np.ones(2)}).difference(tree_key({"a": np.ones(3)}))
    "leaf ['a']: prepared numpy.ndarray float64 (2,), given numpy.ndarray float64 (3,)"
"""

from __future__ import annotations

from ..families import dtype_name, family_of, shape_of


def optree_module():
    try:
        import optree
    except ImportError as error:  # pragma: no cover - optree is in the pytree extra
        raise ImportError(
            "x: a pytree x needs optree; install it with pip install 'diffinterface[pytree]'"
        ) from error
    return optree


def path_name(path):
    """``('layer', 0)`` -> ``['layer'][0]``, as one indexes the tree."""
    return "".join(f"[{p!r}]" for p in path) or "(root)"


def leaf_key(leaf):
    """(class, dtype, shape) of a leaf, as the messages name it."""
    cls = leaf.__class__
    return (cls.__module__ + "." + cls.__qualname__, dtype_name(leaf), shape_of(leaf))


def leaf_kind(leaf):
    """(family, dtype, shape): what a leaf must keep from preparation to call.

    Classes of one family are one kind: a Python float, a NumPy scalar and a
    0-d ndarray (numpy arithmetic turns one into another: ``np.array(0.7) -
    0.1 * g`` is an ``np.float64``), a torch ``Parameter`` and the ``Tensor``
    a functional update gives.

    >>> import numpy as np
    >>> leaf_kind(0.5) == leaf_kind(np.float64(0.5)) == leaf_kind(np.array(0.5))
    True
    """
    return (family_of(leaf), dtype_name(leaf), shape_of(leaf))


class TreeKey:
    """The comparable description of a tree (structure and leaves) in a preparation's key."""

    __slots__ = ("spec", "paths", "leaves", "kinds")

    def __init__(self, spec, paths, leaves, kinds):
        # leaves name each leaf's class (for the messages); kinds are what is compared (leaf_kind)
        self.spec, self.paths, self.leaves, self.kinds = spec, paths, leaves, kinds

    def __eq__(self, other):
        return isinstance(other, TreeKey) and self.spec == other.spec and self.kinds == other.kinds

    def __hash__(self):
        return hash((self.spec, self.kinds))

    def __repr__(self):
        return f"a tree of {len(self.leaves)} leaves {self.spec}"

    def difference(self, given):
        """One line naming the first leaf where ``given`` differs from this (prepared) tree."""
        if not isinstance(given, TreeKey):
            return f"prepared {self!r}, given {given}"
        prepared_paths, given_paths = (
            dict(zip(self.paths, self.leaves)),
            dict(zip(given.paths, given.leaves)),
        )
        prepared_kinds, given_kinds = (
            dict(zip(self.paths, self.kinds)),
            dict(zip(given.paths, given.kinds)),
        )
        for path, leaf in prepared_paths.items():
            if path not in given_paths:
                return f"leaf {path_name(path)} is missing from the given tree (prepared {self.spec}, given {given.spec})"
            if given_kinds[path] != prepared_kinds[path]:
                (_, d0, s0), (_, d1, s1) = leaf, given_paths[path]
                return (
                    f"leaf {path_name(path)}: prepared {leaf[0]} {d0} {s0}, "
                    f"given {given_paths[path][0]} {d1} {s1}"
                )
        for path in given_paths:
            if path not in prepared_paths:
                return f"leaf {path_name(path)} was not prepared (prepared {self.spec}, given {given.spec})"
        return f"the node types differ: prepared {self.spec}, given {given.spec}"


def tree_key(tree):
    """The :class:`TreeKey` of ``tree`` (its structure and leaves' type, dtype and shape)."""
    optree = optree_module()
    paths, leaves, spec = optree.tree_flatten_with_path(tree)
    return TreeKey(
        spec,
        tuple(paths),
        tuple(leaf_key(leaf) for leaf in leaves),
        tuple(leaf_kind(leaf) for leaf in leaves),
    )
