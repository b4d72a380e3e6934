"""AuxLeaves (core/aux_leaves.py): an aux value split into array leaves and kept ones, and put back.

Plain Python trees, so that the test also serves mutmut's forked children (docs/testing.md,
"Mutation testing"); each backend's native aux goes through it in the kit's aux scenarios.
"""

from __future__ import annotations

import numpy as np

from diffinterface.core.aux_leaves import AuxLeaves


def _flatten(tree):
    return list(tree.values()), list(tree)


def _unflatten(keys, leaves):
    return dict(zip(keys, leaves))


def _is_array(leaf):
    return isinstance(leaf, np.ndarray)


def test_split_keeps_the_other_leaves_by_position_and_join_puts_new_arrays_back():
    aux = {"label": "at x", "a": np.ones(2), "n": 3, "b": np.zeros(1), "none": None}
    layout, arrays = AuxLeaves.split(aux, _flatten, _unflatten, _is_array)
    assert [a.tolist() for a in arrays] == [[1.0, 1.0], [0.0]]
    assert layout.static == {0: "at x", 2: 3, 4: None}
    assert layout.positions == [1, 3]
    assert layout.size == 5
    assert layout.treedef == ["label", "a", "n", "b", "none"]
    joined = layout.join([np.full(2, 7.0), np.full(1, 8.0)])
    assert list(joined) == ["label", "a", "n", "b", "none"]
    assert joined["label"] == "at x" and joined["n"] == 3 and joined["none"] is None
    assert joined["a"].tolist() == [7.0, 7.0] and joined["b"].tolist() == [8.0]


def test_an_aux_of_arrays_only_or_of_none_round_trips():
    layout, arrays = AuxLeaves.split({"a": np.ones(1)}, _flatten, _unflatten, _is_array)
    assert layout.static == {} and layout.positions == [0]
    assert layout.join([np.zeros(1)])["a"].tolist() == [0.0]
    layout, arrays = AuxLeaves.split({"s": "only"}, _flatten, _unflatten, _is_array)
    assert arrays == [] and layout.positions == []
    assert layout.join([]) == {"s": "only"}
