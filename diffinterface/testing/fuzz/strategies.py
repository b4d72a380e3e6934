"""Hypothesis strategies: random programs, points, pytrees and sparse patterns.

>>> from hypothesis import find
>>> program = find(programs(), lambda p: len(p.steps) >= 2)
>>> len(program.steps)
2
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .operations import OPERATIONS
from .programs import Program

#: 0-d, size 1, vectors, matrices and 3-D arrays; at most 8 elements, so Hessians stay small
SHAPES = (
    (),
    (1,),
    (2,),
    (3,),
    (4,),
    (1, 1),
    (1, 3),
    (2, 2),
    (2, 3),
    (3, 2),
    (2, 1, 3),
    (2, 2, 2),
    (1, 2, 2),
)
DTYPES = ("float64", "float32")
#: a value larger than this is too large for a float32 comparison: the program is drawn again
MAX_SIZE = 24


@st.composite
def programs(draw, operations=tuple(OPERATIONS), max_steps=4, shapes=SHAPES):
    """A :class:`~.programs.Program` of up to ``max_steps`` steps from the named families of ``OPERATIONS``."""
    shape = draw(st.sampled_from(shapes))

    def pick(options):
        return draw(st.sampled_from(list(options)))

    values, steps = [("x", shape)], []
    for _ in range(draw(st.integers(0, max_steps))):
        name, current = values[-1]
        builder = pick([b for family in operations for b in OPERATIONS[family]])
        built = builder(pick, name, current, values)
        if built is None:
            continue
        step, result = built
        size = int(np.prod(result))
        if size == 0 or size > MAX_SIZE:
            continue
        steps.append(step)
        values.append((f"v{len(steps)}", tuple(result)))
    return Program(shape, tuple(steps))


def points(shape, dtype):
    """Points of ``shape`` in ``dtype`` with two decimals in [-1.5, 1.5] (so a failure prints them briefly)."""
    return st.integers(0, 2**32 - 1).map(
        lambda seed: np.random.default_rng(seed).uniform(-1.5, 1.5, shape).round(2).astype(dtype)
    )


#: the kinds of pytree leaves: one kind by the design (a 0-d array, a NumPy scalar, a Python float),
#: and arrays
LEAF_KINDS = ("0-d array", "numpy scalar", "python float", "vector", "matrix")


@st.composite
def leaves(draw):
    """One pytree leaf of a random kind and dtype (Python floats are float64)."""
    kind = draw(st.sampled_from(LEAF_KINDS))
    dtype = draw(st.sampled_from(DTYPES))
    value = (
        np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        .uniform(-1.5, 1.5, {"vector": (3,), "matrix": (2, 2)}.get(kind, ()))
        .round(2)
    )
    if kind == "python float":
        return float(value)
    if kind == "numpy scalar":
        return np.dtype(dtype).type(value)
    return np.asarray(value, dtype=dtype)


def trees(max_leaves=4):
    """Random pytrees: a dict, tuple or list at the top, nested containers below, at most ``max_leaves``
    leaves of mixed kinds."""
    children = st.recursive(leaves(), _containers, max_leaves=max_leaves)
    return _containers(children)


def _containers(children):
    return st.one_of(
        st.dictionaries(st.sampled_from("abcd"), children, min_size=1, max_size=2),
        st.lists(children, min_size=1, max_size=2).map(tuple),
        st.lists(children, min_size=1, max_size=2),
    )
