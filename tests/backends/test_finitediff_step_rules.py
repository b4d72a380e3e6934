"""AutoFiniteDiff's step rules (``backends/finitediff/steps.py``) entry by entry, and the traced rules
against the host ones.

Written against the survivors of a mutation run (docs/testing.md, "Mutation testing"): each test pins
a value a changed operator, argument or constant of a rule would move.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import diffinterface as di
from diffinterface.backends.finitediff.adapter import FiniteDiffAdapter
from diffinterface.backends.finitediff.steps import (
    exact_in_leaves,
    traceable_coordinate_steps,
    traceable_step_rule,
)

REL, ABS = 1e-3, 1e-6


def _adapter(method="central", rel=REL, absolute=ABS):
    return FiniteDiffAdapter(di.AutoFiniteDiff(method=method, rel_step=rel, abs_step=absolute))


def _problem(size, dtype="float64", leaf_dtypes=None):
    return SimpleNamespace(x_size=size, x_dtype=dtype, leaf_dtypes=leaf_dtypes)


#: a flat x of a float64 leaf (entries 0, 1) and a float32 leaf (entry 2)
MIXED = ((slice(0, 2), "float64"), (slice(2, 3), "float32"))


def test_rel_and_abs_steps_of_the_selector_and_the_defaults():
    assert _adapter()._rel_abs(np.dtype("float64")) == (REL, ABS)
    # abs_step defaults to rel_step; rel_step to the method's power of the dtype's eps
    assert _adapter(absolute=None)._rel_abs(np.dtype("float64")) == (REL, REL)
    eps32 = float(np.finfo(np.float32).eps)
    rel, absolute = _adapter("forward", rel=None, absolute=None)._rel_abs(np.dtype("float32"))
    assert rel == absolute == eps32 ** (1 / 2)


def test_step_along_a_tangent_scales_with_x_on_its_support_only():
    adapter = _adapter()
    x = np.array([2.0, -4.0, 100.0])
    # max |x_i| over t's support (entries 0, 1) is 4; the tangent's largest entry 2 divides
    assert adapter._step(x, np.array([1.0, -2.0, 0.0])) == pytest.approx(REL * 4 / 2, rel=1e-15)
    # under the absolute step, the absolute step
    assert adapter._step(np.array([1e-6, 0.0, 0.0]), np.array([1.0, 0.0, 0.0])) == ABS
    # a zero tangent takes the absolute step
    assert adapter._step(x, np.zeros(3)) == ABS


def test_entry_steps_of_a_tree_whose_leaves_have_several_dtypes():
    adapter = _adapter(rel=None, absolute=None)
    rel, absolute = adapter._entry_rel_abs(_problem(3, leaf_dtypes=MIXED))
    r64 = float(np.finfo(np.float64).eps) ** (1 / 3)
    r32 = float(np.finfo(np.float32).eps) ** (1 / 3)
    np.testing.assert_array_equal(rel, [r64, r64, r32])
    np.testing.assert_array_equal(absolute, [r64, r64, r32])
    # one dtype: scalars
    assert adapter._entry_rel_abs(_problem(3)) == adapter._rel_abs(np.dtype("float64"))


def test_step_along_a_tangent_per_entry():
    adapter = _adapter(rel=None, absolute=None)
    step = adapter._step_rule(np.dtype("float64"), _problem(3, leaf_dtypes=MIXED))
    r64 = float(np.finfo(np.float64).eps) ** (1 / 3)
    r32 = float(np.finfo(np.float32).eps) ** (1 / 3)
    x = np.array([3.0, 5.0, 0.5])
    # support {0}: rel_64 * 3 over the float64 entry only, divided by |t_0| = 2
    assert step(x, np.array([2.0, 0.0, 0.0])) == pytest.approx(r64 * 3 / 2, rel=1e-15)
    # support {2}: the float32 entry's own steps, max(rel_32 * 0.5, abs_32), divided by 4
    assert step(x, np.array([0.0, 0.0, -4.0])) == pytest.approx(r32 / 4, rel=1e-15)
    # support {1, 2}: the largest over both
    assert step(x, np.array([0.0, 1.0, 1.0])) == pytest.approx(max(r64 * 5, r32), rel=1e-15)
    # a zero tangent: the largest absolute step
    assert step(x, np.zeros(3)) == pytest.approx(r32, rel=1e-15)


def test_coordinate_steps_scalar_below_the_floor_else_per_entry():
    adapter = _adapter()
    steps_at = adapter._coordinate_steps(_problem(3), np.dtype("float64"))
    small = steps_at(np.array([1e-4, -2e-4, 0.0]))  # every rel |x_i| under abs: one scalar
    assert np.ndim(small) == 0 and small == ABS and small.dtype == np.float64
    empty = steps_at(np.zeros(0))
    assert np.ndim(empty) == 0 and empty == ABS
    np.testing.assert_array_equal(steps_at(np.array([2.0, -4.0, 0.0])), [REL * 2.0, REL * 4.0, ABS])
    in32 = adapter._coordinate_steps(_problem(2, "float32"), np.dtype("float32"))(
        np.array([2.0, 1e-5], dtype=np.float32)
    )
    assert in32.dtype == np.float32


def test_coordinate_steps_are_exact_in_each_leaf_dtype():
    adapter = _adapter(rel=1e-3, absolute=1e-3)
    steps_at = adapter._coordinate_steps(_problem(3, leaf_dtypes=MIXED), np.dtype("float64"))
    flat = np.array([0.1, 3.0, 0.1])
    steps = steps_at(flat)
    assert steps.dtype == np.float64
    # the float64 entries: max(rel |x_i|, abs)
    np.testing.assert_array_equal(steps[:2], [1e-3, 3e-3])
    # the float32 entry: the step by which x + h, cast to float32, moves it
    moved = np.float64(np.float32(flat[2] + 1e-3)) - flat[2]
    assert steps[2] == moved and steps[2] != 1e-3


@pytest.mark.parametrize("leaf_dtypes", [None, MIXED], ids=["one dtype", "two dtypes"])
def test_traced_step_rule_equals_the_host_rule(leaf_dtypes):
    adapter = _adapter(rel=None, absolute=None)
    problem = _problem(3, leaf_dtypes=leaf_dtypes)
    host = adapter._step_rule(np.dtype("float64"), problem)
    traced = traceable_step_rule(*adapter._entry_rel_abs(problem), np.dtype("float64"))
    x = np.array([3.0, -5.0, 0.5])
    tangents = np.array([[2.0, 0.0, 0.0], [0.0, 1.0, -1.0], [0.0, 0.0, 4.0], [0.0, 0.0, 0.0]])
    got = traced(np, x, tangents)
    assert got.shape == (4,)
    np.testing.assert_allclose(got, [host(x, t) for t in tangents], rtol=1e-15)


@pytest.mark.parametrize("leaf_dtypes", [None, MIXED], ids=["one dtype", "two dtypes"])
def test_traced_coordinate_steps_equal_the_host_steps(leaf_dtypes):
    adapter = _adapter(rel=1e-3, absolute=1e-3)
    problem = _problem(3, leaf_dtypes=leaf_dtypes)
    host = adapter._coordinate_steps(problem, np.dtype("float64"))
    traced = traceable_coordinate_steps(
        *adapter._entry_rel_abs(problem), np.dtype("float64"), leaf_dtypes
    )
    flat = np.array([0.1, 3.0, 0.1])
    got = traced(np, flat)
    assert got.dtype == np.float64 and got.shape == (3,)
    np.testing.assert_array_equal(got, np.broadcast_to(host(flat), (3,)))


def test_exact_in_leaves_keeps_the_wide_leaf_and_moves_the_narrow_one():
    flat, steps = np.array([0.1, 0.1]), np.array([1e-3, 1e-3])
    got = exact_in_leaves(
        np, flat, steps, ((slice(0, 1), "float64"), (slice(1, 2), "float32")), "float64"
    )
    assert got[0] == 1e-3
    assert got[1] == np.float64(np.float32(0.1 + 1e-3)) - 0.1


#: a flat float32 x of a float32 leaf (entry 0) and a float16 leaf (entry 1)
NARROW = ((slice(0, 1), "float32"), (slice(1, 2), "float16"))


def test_steps_in_float32_take_its_eps_and_keep_its_dtype():
    adapter = _adapter(rel=None, absolute=None)
    r32 = float(np.finfo(np.float32).eps) ** (1 / 3)
    x, t = np.array([2.0, 0.0], np.float32), np.array([1.0, 0.0], np.float32)
    assert adapter._step(x, t) == pytest.approx(r32 * 2, rel=1e-6)
    assert adapter._step_rule(np.dtype("float32"))(x, t) == pytest.approx(r32 * 2, rel=1e-6)

    problem = _problem(2, "float32", leaf_dtypes=NARROW)
    flat = np.array([3.0, 0.1], np.float32)
    host = adapter._coordinate_steps(problem, np.dtype("float32"))(flat)
    assert host.dtype == np.float32
    r16 = float(np.finfo(np.float16).eps) ** (1 / 3)
    step16 = np.float32(max(r16 * 0.1, r16))
    assert host[1] == np.float32(np.float16(flat[1] + step16)) - flat[1]
    rel, absolute = adapter._entry_rel_abs(problem)
    traced = traceable_coordinate_steps(rel, absolute, np.dtype("float32"), NARROW)(np, flat)
    assert traced.dtype == np.float32
    np.testing.assert_array_equal(traced, host)
    steps = traceable_step_rule(rel, absolute, np.dtype("float32"))(
        np, flat, np.eye(2, dtype=np.float32)
    )
    assert steps.dtype == np.float32
    one = traceable_step_rule(r32, r32, np.dtype("float32"))(np, flat, np.eye(2, dtype=np.float32))
    assert one.dtype == np.float32
    scalar = traceable_coordinate_steps(r32, r32, np.dtype("float32"))(np, flat)
    assert scalar.dtype == np.float32


def test_coordinate_steps_at_the_floor_exactly_are_one_scalar():
    steps_at = _adapter(rel=1e-3, absolute=1e-3)._coordinate_steps(_problem(2), np.dtype("float64"))
    assert np.ndim(steps_at(np.array([1.0, -0.5]))) == 0  # rel * max|x| == abs: one scalar step


def test_traced_step_rule_on_a_matrix_x():
    adapter = _adapter()
    x = np.array([[1.0, -3.0], [2.0, 0.5]])
    tangents = np.stack([np.eye(2), np.zeros((2, 2))])
    got = traceable_step_rule(REL, ABS, np.dtype("float64"))(np, x, tangents)
    np.testing.assert_allclose(got, [adapter._step(x, t) for t in tangents], rtol=1e-15)
