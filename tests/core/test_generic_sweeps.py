"""The core's generic multi-batch sweep (core/problem.py::Seeded), reached through an adapter that does
not bound its own sweeps (``Capabilities.bounds_sweeps`` False): every built-in adapter bounds its own,
so only a third-party one like this takes the core's path."""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import Adapter, Capabilities, Impl, Problem, Spec, get_adapter
from diffinterface.core.batching import record
from diffinterface.testing.batch_scenarios import OPERATORS, batch_cases


@dataclasses.dataclass(frozen=True)
class AutoUnboundedCentral(di.AbstractBackend):
    """Central differences whose primitive runs any batch of tangents it is given at once."""

    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None


class UnboundedCentralAdapter(Adapter):
    capabilities = Capabilities(mode="forward", approximate=True, bounds_sweeps=False)

    def output_spec(self, problem):
        return Spec.of(problem.f(problem.x, *problem.ctx))

    def prepare_pushforward(self, problem):
        f, prepared_for = problem.f, len(problem.tangents)

        def pushforward(x, tangents, *ctx):
            x = np.asarray(x)
            if len(tangents) != prepared_for:
                # as a primitive compiled for its batch would refuse
                raise ValueError(f"tangents: prepared for {prepared_for}, got {len(tangents)}")
            BATCHES.append(len(tangents))
            h = 1e-4 * max(1.0, float(np.max(np.abs(x), initial=0.0)))
            return tuple(
                ((np.asarray(f(x + h * t, *ctx)) - np.asarray(f(x - h * t, *ctx))) / (2 * h))
                for t in tangents
            )

        def value_and_pushforward(x, tangents, *ctx):
            return np.asarray(f(x, *ctx)), pushforward(x, tangents, *ctx)

        return self.with_own_batch_size(
            Impl(pushforward=pushforward, value_and_pushforward=value_and_pushforward)
        )

    def with_own_batch_size(self, impl):
        return impl


di.register_backend(AutoUnboundedCentral, UnboundedCentralAdapter)


@dataclasses.dataclass(frozen=True)
class AutoPairwiseCentral(di.AbstractBackend):
    """The same central differences, whose primitive takes at most two tangents a call, one per pass."""

    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None


class PairwiseCentralAdapter(UnboundedCentralAdapter):
    capabilities = Capabilities(mode="forward", approximate=True, max_batch=2, bounds_sweeps=True)

    def with_own_batch_size(self, impl):
        # its primitive runs one tangent per pass: its own batch size, which di.batch_size reports
        return record(impl, 1)


di.register_backend(AutoPairwiseCentral, PairwiseCentralAdapter)

#: the number of tangents of each primitive call, in order
BATCHES: list = []


@pytest.fixture(autouse=True)
def _fresh_batches():
    BATCHES.clear()


A = np.array([[1.0, 2.0, 0.0, -1.0], [0.5, 0.0, 3.0, 1.0], [0.0, -2.0, 1.0, 4.0]])


def _affine(x):
    return A @ x + 1.0


def test_the_adapter_leaves_its_sweeps_to_the_core():
    assert not di.core.get_adapter(AutoUnboundedCentral()).capabilities.bounds_sweeps


@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_a_pushforward_of_independent_tangents_in_several_batches(batch_size):
    # five tangents of R^4, any four linearly independent: a batch reusing
    # another's seeds, or dropping one, gives another matrix
    tangents = tuple(np.eye(4)) + (np.array([1.0, -2.0, 3.0, -4.0]),)
    backend = AutoUnboundedCentral(batch_size=batch_size)
    x = np.array([0.3, -1.0, 2.0, 0.5])
    for call in (
        lambda: di.pushforward(_affine, backend, x, tangents),
        lambda: di.pushforward(
            _affine,
            backend,
            x,
            tangents,
            prep=di.prepare_pushforward(_affine, backend, x, tangents),
        ),
        lambda: di.value_and_pushforward(_affine, backend, x, tangents)[1],
    ):
        got = np.stack(call())
        np.testing.assert_allclose(got, np.stack([A @ t for t in tangents]), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("batch_size", [1, 3])
def test_a_jacobian_in_several_batches(batch_size):
    backend = AutoUnboundedCentral(batch_size=batch_size)
    x = np.array([0.3, -1.0, 2.0, 0.5])
    prep = di.prepare_jacobian(_affine, backend, x)
    np.testing.assert_allclose(di.jacobian(_affine, backend, x, prep=prep), A, atol=1e-8)
    value, jacobian = di.value_and_jacobian(_affine, backend, x, prep=prep)
    np.testing.assert_allclose(value, _affine(x))
    np.testing.assert_allclose(jacobian, A, atol=1e-8)


@pytest.mark.parametrize("case", batch_cases({"unbounded": AutoUnboundedCentral()}), ids=str)
def test_the_kit_s_batch_cases_through_the_generic_path(case):
    if case.operator not in OPERATORS:
        pytest.fail(f"unexpected case {case}")
    case.check()


def _scaled_affine(x, c):
    return c * (A @ x) + 1.0


@pytest.mark.parametrize("batch_size", [None, 2])
def test_contexts_reach_every_batch(batch_size):
    backend = AutoUnboundedCentral(batch_size=batch_size)
    x, c = np.array([0.3, -1.0, 2.0, 0.5]), di.Constant(-2.0)
    for prep in (None, di.prepare_jacobian(_scaled_affine, backend, x, c)):
        np.testing.assert_allclose(
            di.jacobian(_scaled_affine, backend, x, c, prep=prep), -2.0 * A, atol=1e-8
        )
        value, jacobian = di.value_and_jacobian(_scaled_affine, backend, x, c, prep=prep)
        np.testing.assert_allclose(value, _scaled_affine(x, -2.0))
        np.testing.assert_allclose(jacobian, -2.0 * A, atol=1e-8)


@pytest.mark.parametrize(
    "backend, batches, batch_size",
    [
        # no batch_size: the sweep runs whole (its memory is not estimated: no seed_bytes)
        (AutoUnboundedCentral(), [4], 4),
        (AutoUnboundedCentral(memory_budget=2**20), [4], 4),
        (AutoUnboundedCentral(batch_size=3), [3, 1], 3),
        # an adapter's max_batch bounds the batches whatever the selector asks, and its
        # primitive's own batch size is the one reported
        (AutoPairwiseCentral(), [2, 2], 1),
        (AutoPairwiseCentral(batch_size=3), [2, 2], 1),
    ],
    ids=str,
)
def test_the_batches_a_sweep_runs_in_and_the_batch_size_reported(backend, batches, batch_size):
    x = np.array([0.3, -1.0, 2.0, 0.5])
    prep = di.prepare_jacobian(_affine, backend, x)
    assert di.batch_size(prep) == batch_size
    BATCHES.clear()
    np.testing.assert_allclose(di.jacobian(_affine, backend, x, prep=prep), A, atol=1e-8)
    assert BATCHES == batches
    BATCHES.clear()
    value, jacobian = di.value_and_jacobian(_affine, backend, x, prep=prep)
    assert BATCHES == batches
    np.testing.assert_allclose(jacobian, A, atol=1e-8)
    np.testing.assert_allclose(value, _affine(x))


def test_a_sweep_over_no_seeds_has_no_results_and_no_batch_size():
    x = np.array([0.3, -1.0, 2.0, 0.5])
    problem = Problem(get_adapter(AutoUnboundedCentral()), _affine, x, None, (), None)
    seeded = problem.seeded("pushforward", ())
    assert seeded.batch_size is None
    assert list(seeded.results(x)) == []
