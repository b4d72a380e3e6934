"""The one place a sweep's batch size is chosen (core/batching.py): each rule of
:func:`choose_batch_size` at its edges, the cutting of seeds, and ``di.batch_size``."""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import Impl
from diffinterface.core.batching import (
    DEFAULT_MEMORY_BUDGET,
    WHOLE_SWEEP_SEEDS,
    batch_bounds,
    choose_batch_size,
    cut,
    record,
)

MiB = 2**20


def _not_estimated():
    raise AssertionError("seed_bytes: the choice needed no estimate, yet asked for one")


def _choose(n, per_seed, **fields):
    return choose_batch_size(di.AutoFiniteDiff(**fields), n, per_seed)


@pytest.mark.parametrize("n, size, chosen", [(10, 4, 4), (3, 4, 3), (1, 4, 1), (0, 4, 1)])
def test_a_batch_size_asked_is_taken_up_to_the_seeds_and_at_least_one(n, size, chosen):
    assert _choose(n, _not_estimated, batch_size=size) == chosen


def test_a_small_sweep_runs_whole_without_an_estimate():
    assert _choose(WHOLE_SWEEP_SEEDS, _not_estimated) == WHOLE_SWEEP_SEEDS
    assert _choose(5, _not_estimated) == 5
    assert _choose(0, _not_estimated) == 1


def test_an_unprepared_call_runs_whole_unless_a_budget_is_given():
    n = 10 * WHOLE_SWEEP_SEEDS
    backend = di.AutoFiniteDiff()
    assert choose_batch_size(backend, n, _not_estimated, one_off=True) == n
    budgeted = di.AutoFiniteDiff(memory_budget=4 * MiB)
    assert choose_batch_size(budgeted, n, lambda: MiB, one_off=True) == 4


def test_a_large_sweep_fits_the_default_budget():
    n = WHOLE_SWEEP_SEEDS + 1
    assert _choose(n, lambda: DEFAULT_MEMORY_BUDGET // 32) == 32
    # not a divisor: the largest batch that fits, an int
    chosen = _choose(1000, lambda: 3 * MiB)
    assert chosen == DEFAULT_MEMORY_BUDGET // (3 * MiB) and type(chosen) is int
    assert _choose(n, lambda: 1) == n  # all fit
    assert _choose(n, lambda: 2 * DEFAULT_MEMORY_BUDGET) == 1  # one seed over budget: one at a time
    assert _choose(n, lambda: None) == n  # unknown: whole


def test_a_memory_budget_is_used_even_for_a_small_sweep():
    assert _choose(10, lambda: MiB, memory_budget=4 * MiB) == 4
    assert _choose(10, lambda: 3 * MiB, memory_budget=10 * MiB) == 3
    assert _choose(10, lambda: 100 * MiB, memory_budget=4 * MiB) == 1
    assert _choose(10, lambda: None, memory_budget=4 * MiB) == 10


def test_cut_and_batch_bounds():
    assert batch_bounds(5, 2) == [(0, 2), (2, 4), (4, 5)]
    assert batch_bounds(4, 4) == [(0, 4)]
    assert batch_bounds(0, 3) == []
    assert cut(tuple("abcde"), 3) == [("a", "b", "c"), ("d", "e")]


def test_record_marks_the_impl_it_returns():
    impl = Impl()
    assert record(impl, 3) is impl and impl.batch_size == 3


def test_batch_size_of_a_preparation():
    f = lambda x: (x**2).sum()
    assert di.batch_size(di.prepare_gradient(f, di.AutoFiniteDiff(), np.ones(3))) is None
    prep = di.prepare_jacobian(np.sin, di.AutoFiniteDiff(batch_size=2), np.ones(5))
    assert di.batch_size(prep) == prep.impl.batch_size and prep.impl.batch_size is not None


def test_batch_size_refuses_what_is_no_preparation():
    with pytest.raises(TypeError) as refused:
        di.batch_size(3)
    assert str(refused.value) == (
        "prep: expected a preparation (what prepare_<operator> returns); got int"
    )
