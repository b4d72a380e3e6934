"""The core's generic multi-batch sweep (core/problem.py::Seeded), reached through an adapter that does
not bound its own sweeps (``Capabilities.bounds_sweeps`` False): every built-in adapter bounds its own,
so only a third-party one like this takes the core's path."""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import Adapter, Capabilities, Impl, Spec
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
        f = problem.f
        calls = self.calls = []

        def pushforward(x, tangents, *ctx):
            x = np.asarray(x)
            calls.append(len(tangents))
            h = 1e-4 * max(1.0, float(np.max(np.abs(x), initial=0.0)))
            return tuple(
                ((np.asarray(f(x + h * t, *ctx)) - np.asarray(f(x - h * t, *ctx))) / (2 * h))
                for t in tangents
            )

        def value_and_pushforward(x, tangents, *ctx):
            return np.asarray(f(x, *ctx)), pushforward(x, tangents, *ctx)

        return Impl(pushforward=pushforward, value_and_pushforward=value_and_pushforward)


di.register_backend(AutoUnboundedCentral, UnboundedCentralAdapter)

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
