"""What kind of pytree a value is (core/tree_key.py): the key a preparation at a pytree records, what
it tells apart, and the one line naming the first difference that a mismatch report prints."""

from __future__ import annotations

import collections
import sys

import numpy as np
import pytest

from diffinterface.core.tree_key import (
    TreeKey,
    leaf_key,
    leaf_kind,
    optree_module,
    path_name,
    tree_key,
)

Pair = collections.namedtuple("Pair", "a b")


def test_a_path_is_named_as_one_indexes_the_tree():
    assert path_name(("layer", 0)) == "['layer'][0]"
    assert path_name(()) == "(root)"


def test_a_leaf_kind_is_its_family_dtype_and_shape_whatever_its_class():
    assert leaf_kind(0.5) == leaf_kind(np.float64(0.5)) == leaf_kind(np.array(0.5))
    assert leaf_kind(0.5) == ("numpy", "float64", ())
    assert leaf_kind(np.ones(2, dtype=np.float32)) == ("numpy", "float32", (2,))
    assert leaf_key(np.ones(2)) == ("numpy.ndarray", "float64", (2,))
    assert leaf_key(0.5) == ("builtins.float", "float64", ())


def test_trees_of_one_structure_and_leaf_kinds_have_equal_keys():
    key = tree_key({"a": np.ones(2), "b": 1.0})
    same = tree_key({"a": np.zeros(2), "b": np.float64(3.0)})
    assert key == same and hash(key) == hash(same)
    assert len({key, same}) == 1
    assert (
        isinstance(key, TreeKey) and repr(key) == "a tree of 2 leaves PyTreeSpec({'a': *, 'b': *})"
    )


@pytest.mark.parametrize(
    "other",
    [
        {"a": np.ones(3), "b": 1.0},
        {"a": np.ones(2, dtype=np.float32), "b": 1.0},
        {"a": np.ones(2), "c": 1.0},
        [np.ones(2), 1.0],
    ],
    ids=["a leaf of another shape", "another dtype", "another key", "another node type"],
)
def test_trees_differing_in_structure_or_a_leaf_kind_have_other_keys(other):
    key = tree_key({"a": np.ones(2), "b": 1.0})
    assert key != tree_key(other)
    assert not key == tree_key(other)


def test_a_key_equals_no_other_kind_of_value():
    key = tree_key({"a": 1.0})
    assert key != (key.spec, key.kinds)
    assert not key == (key.spec, key.kinds)


PREPARED = {"a": np.ones(2), "b": 1.0}


@pytest.mark.parametrize(
    "given, line",
    [
        (
            {"a": np.ones(3), "b": 1.0},
            "leaf ['a']: prepared numpy.ndarray float64 (2,), given numpy.ndarray float64 (3,)",
        ),
        (
            {"a": np.ones(2), "b": np.float32(1.0)},
            "leaf ['b']: prepared builtins.float float64 (), given numpy.float32 float32 ()",
        ),
        (
            {"a": np.ones(2)},
            "leaf ['b'] is missing from the given tree (prepared PyTreeSpec({'a': *, 'b': *}), "
            "given PyTreeSpec({'a': *}))",
        ),
        (
            {"a": np.ones(2), "b": 1.0, "c": 2.0},
            "leaf ['c'] was not prepared (prepared PyTreeSpec({'a': *, 'b': *}), "
            "given PyTreeSpec({'a': *, 'b': *, 'c': *}))",
        ),
    ],
    ids=["a leaf's shape", "a leaf's dtype", "a leaf missing", "a leaf more"],
)
def test_the_difference_names_the_first_leaf_that_differs(given, line):
    assert tree_key(PREPARED).difference(tree_key(given)) == line


def test_the_difference_of_node_types_names_both_structures():
    prepared = tree_key(Pair(np.ones(2), 1.0))
    given = tree_key((np.ones(2), 1.0))
    assert prepared.difference(given) == (
        f"the node types differ: prepared {prepared.spec}, given {given.spec}"
    )
    assert "Pair" in str(prepared.spec)


def test_the_difference_from_what_is_no_tree_says_what_was_given():
    prepared = tree_key(PREPARED)
    assert prepared.difference("numpy.ndarray float64 (2,)") == (
        "prepared a tree of 2 leaves PyTreeSpec({'a': *, 'b': *}), given numpy.ndarray float64 (2,)"
    )


def test_without_optree_a_pytree_names_the_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "optree", None)  # import optree raises ImportError
    with pytest.raises(ImportError) as info:
        optree_module()
    assert str(info.value) == (
        "x: a pytree x needs optree; install it with pip install 'diffinterface[pytree]'"
    )
