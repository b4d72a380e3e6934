"""A same-point preparation moved to another point (core/same_point.py ``moved``, what the scipy
adaptors use from iterate to iterate): where it moves, it answers at the new point and refuses the
old one; where it cannot (no ``Impl.move``, a pytree x or output, methods wrapped around the
adapter's), ``moved`` says so with None."""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core.same_point import moved

X = np.linspace(0.1, 1.0, 4)
THERE = X + 0.5


def _vector(x):
    xp = di.array_namespace(x)
    return xp.sin(x) * x


def _energy(x):
    xp = di.array_namespace(x)
    return xp.sum(xp.sin(x) * x**2)


#: operator: (prepare, call, value_and_call, f, seeds)
OPERATORS = {
    "pushforward": (
        di.prepare_pushforward_same_point,
        di.pushforward,
        di.value_and_pushforward,
        _vector,
        (np.ones(4), np.eye(4)[1]),
    ),
    "pullback": (
        di.prepare_pullback_same_point,
        di.pullback,
        di.value_and_pullback,
        _vector,
        (np.ones(4), np.eye(4)[2]),
    ),
    "hvp": (
        di.prepare_hvp_same_point,
        di.hvp,
        di.gradient_and_hvp,
        _energy,
        (np.ones(4), np.eye(4)[0]),
    ),
}


def _close(got, expected):
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _close(g, e)
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_jax_preparation_moves_to_another_point(operator):
    prepare, plain, valued, f, seeds = OPERATORS[operator]
    backend = di.AutoJAX()
    prep = prepare(f, backend, X, seeds)
    there = moved(prep, THERE)
    assert there is not None and there.plan.movable
    assert (there.op, there.backend, there.strict) == (prep.op, prep.backend, prep.strict)
    # the output's spec where the preparation learned it (a pushforward's, a pullback's)
    assert (there.spec is None) == (prep.spec is None) == (operator == "hvp")
    if prep.spec is not None:
        assert (there.spec.shape, there.spec.dtype) == (prep.spec.shape, prep.spec.dtype)
    _close(plain(f, backend, THERE, seeds, prep=there), plain(f, backend, THERE, seeds))
    _close(valued(f, backend, THERE, seeds, prep=there), valued(f, backend, THERE, seeds))
    # the moved preparation is at the new point only; the first one still serves the first
    with pytest.raises(di.PreparationMismatchError):
        plain(f, backend, X, seeds, prep=there)
    _close(plain(f, backend, X, seeds, prep=prep), plain(f, backend, X, seeds))
    # and it moves again
    _close(plain(f, backend, X, seeds, prep=moved(there, X)), plain(f, backend, X, seeds))


def test_a_moved_non_strict_preparation_stays_non_strict():
    prep = di.prepare_hvp_same_point(_energy, di.AutoJAX(), X, (np.ones(4),), strict=False)
    assert moved(prep, THERE).strict is False


def test_what_cannot_move_is_prepared_again():
    seeds = (np.ones(4),)
    # no Impl.move: finite differences, or any preparation not made for one point
    assert (
        moved(di.prepare_pushforward_same_point(_vector, di.AutoFiniteDiff(), X, seeds), THERE)
        is None
    )
    assert moved(di.prepare_pushforward(_vector, di.AutoJAX(), X, seeds), THERE) is None
    # a pytree output, a pytree x: the methods are the trees', not the adapter's
    as_tree = lambda x: {"y": _vector(x)}
    prep = di.prepare_pushforward_same_point(as_tree, di.AutoJAX(), X, seeds)
    assert moved(prep, THERE) is None
    of_tree = lambda d: _energy(d["x"])
    prep = di.prepare_hvp_same_point(of_tree, di.AutoJAX(), {"x": X}, ({"x": np.ones(4)},))
    assert moved(prep, {"x": THERE}) is None


def test_methods_converting_foreign_contexts_do_not_move():
    import torch

    scaled = lambda x, c: _vector(x) * c
    c = di.Constant(torch.full((4,), 2.0, dtype=torch.float64))
    prep = di.prepare_pushforward_same_point(scaled, di.AutoJAX(), X, (np.ones(4),), c)
    assert callable(prep.plan.impl.move)  # the adapter could move, the conversions could not
    assert moved(prep, THERE) is None


def test_a_moved_strict_preparation_refuses_its_point_changed_in_place():
    backend, seeds = di.AutoJAX(), (np.ones(4),)
    prep = di.prepare_hvp_same_point(_energy, backend, X, seeds)
    point = THERE.copy()
    there = moved(prep, point)
    di.hvp(_energy, backend, point, seeds, prep=there)
    point[0] += 1.0
    with pytest.raises(di.PreparationMismatchError):
        di.hvp(_energy, backend, point, seeds, prep=there)
