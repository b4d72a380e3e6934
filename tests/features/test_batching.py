"""Batch sizes and memory budgets (issue #30): validation, the automatic choice, what preparations report.

That every sweep gives the same results for any batch size, on every backend,
is the kit's (``diffinterface/testing/batch_scenarios.py``, run by
``tests/core/test_conformance.py::test_batch_sizes``).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core.batching import (
    DEFAULT_MEMORY_BUDGET,
    WHOLE_SWEEP_SEEDS,
    choose_batch_size,
    cut,
)
from diffinterface.testing.counting import CountingFunction

BATCHED_SELECTORS = (
    di.AutoJAX,
    di.AutoTorch,
    di.AutoFiniteDiff,
    di.AutoTensorFlow,
    di.AutoAutograd,
)


@pytest.mark.parametrize("selector", BATCHED_SELECTORS, ids=lambda s: s.__name__)
@pytest.mark.parametrize("value", [0, -3])
def test_a_batch_size_below_one_is_refused_naming_it(selector, value):
    with pytest.raises(
        ValueError,
        match=rf"{selector.__name__}\(batch_size=...\) expected a positive int.*got {value}",
    ):
        selector(batch_size=value)


@pytest.mark.parametrize("selector", BATCHED_SELECTORS, ids=lambda s: s.__name__)
@pytest.mark.parametrize("value", [2.0, True, "8", np.float64(4)])
def test_a_batch_size_that_is_not_an_int_is_refused_naming_it(selector, value):
    with pytest.raises(
        TypeError, match=rf"{selector.__name__}\(batch_size=...\) expected a positive int"
    ):
        selector(batch_size=value)


@pytest.mark.parametrize("value", [0, -1, 1.5, "256MiB", False])
def test_a_memory_budget_that_is_not_a_positive_int_is_refused_naming_it(value):
    with pytest.raises(
        (TypeError, ValueError),
        match=r"AutoTorch\(memory_budget=...\) expected a positive int, in bytes",
    ):
        di.AutoTorch(memory_budget=value)


def test_numpy_integers_are_taken_and_the_new_fields_are_keyword_only():
    assert di.AutoJAX(batch_size=np.int64(4)).batch_size == 4
    with pytest.raises(TypeError, match="too many positional"):
        di.AutoTorch(None, False, 4)
    assert repr(di.AutoTorch(batch_size=4)) == "AutoTorch(mode=None, compile=False, batch_size=4)"
    assert di.AutoJAX(batch_size=4) != di.AutoJAX() and di.AutoJAX(batch_size=4) == di.AutoJAX(
        batch_size=4
    )


def test_autograd_takes_the_batch_fields_by_keyword_and_still_no_mode():
    assert (
        repr(di.AutoAutograd(batch_size=4)) == "AutoAutograd(batch_size=4)"
        and repr(di.AutoAutograd()) == "AutoAutograd()"
    )
    assert di.AutoAutograd(memory_budget=2**20).memory_budget == 2**20
    with pytest.raises(
        TypeError,
        match=r"AutoAutograd\(mode=...\): AutoAutograd takes only batch_size= and "
        r"memory_budget=; got mode='forward'\. It picks forward or reverse",
    ):
        di.AutoAutograd(mode="forward")
    with pytest.raises(
        TypeError,
        match=r"AutoAutograd\(...\): AutoAutograd takes only batch_size= and memory_budget=; got 4",
    ):
        di.AutoAutograd(4)  # keyword-only, as on every selector


def test_the_choice_follows_batch_size_then_the_budget():
    assert choose_batch_size(di.AutoJAX(batch_size=32), 10, lambda: 1) == 10
    assert (
        choose_batch_size(di.AutoJAX(batch_size=32), 1000, lambda: 1 / 0) == 32
    )  # no estimate asked
    # a small sweep without a budget runs whole, without an estimate
    assert choose_batch_size(di.AutoJAX(), WHOLE_SWEEP_SEEDS, lambda: 1 / 0) == WHOLE_SWEEP_SEEDS
    per_seed = DEFAULT_MEMORY_BUDGET // 100
    assert choose_batch_size(di.AutoJAX(), 1000, lambda: per_seed) == 100
    assert choose_batch_size(di.AutoJAX(memory_budget=10 * per_seed), 5, lambda: per_seed) == 5
    assert choose_batch_size(di.AutoJAX(memory_budget=per_seed // 2), 50, lambda: per_seed) == 1
    assert (
        choose_batch_size(di.AutoJAX(memory_budget=per_seed), 500, lambda: None) == 500
    )  # no estimate: whole
    assert cut((1, 2, 3, 4, 5, 6, 7), 3) == [(1, 2, 3), (4, 5, 6), (7,)]


def _wide(xp, w):
    """f(x) = tanh(x[:, None] * w[None, :]) ** 2 @ 1: each seed's tangent holds an n x m array (a matrix
    product's operand, which XLA does not fuse away as it does a sum's). ``xp`` None: x's namespace."""

    def f(x):
        ns = xp or di.array_namespace(x)
        return ns.matmul(
            ns.tanh(x[:, None] * ns.asarray(w)[None, :]) ** 2, ns.asarray(np.ones(len(w)))
        )

    return f


def _wide_jacobian(x, w):
    t = np.tanh(x[:, None] * w[None, :])
    return np.diag(np.sum(2 * t * (1 - t**2) * w[None, :], axis=1))


@pytest.mark.parametrize("framework", ["jax", "torch", "tensorflow"])
def test_a_memory_budget_bounds_the_batch_chosen_at_preparation(framework):
    xp = (
        None
        if framework == "tensorflow"
        else importlib.import_module(framework if framework == "torch" else "jax.numpy")
    )
    n, m = 100, 512
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=n), rng.normal(size=m)
    f = _wide(xp, w)
    selector = {"jax": di.AutoJAX, "torch": di.AutoTorch, "tensorflow": di.AutoTensorFlow}[
        framework
    ]
    whole = di.prepare_jacobian(f, selector(mode="forward"), x)
    # one seed's tangent of the n x m intermediate is n * m * 8 bytes: a budget of a few of them
    budget = 8 * n * m * 8
    backend = selector(mode="forward", memory_budget=budget)
    prep = di.prepare_jacobian(f, backend, x)
    chosen = di.batch_size(prep)
    assert 1 <= chosen < n
    assert f"batch_size={chosen}" in repr(prep)
    assert di.batch_size(whole) in (
        n,
        *range(chosen, n + 1),
    )  # the default budget allows at least as many
    np.testing.assert_allclose(
        di.jacobian(f, backend, x, prep=prep), _wide_jacobian(x, w), rtol=1e-10, atol=1e-12
    )


def test_the_jax_sweep_is_compiled_once_with_its_last_partial_batch():
    import jax.numpy as jnp

    counted = CountingFunction(lambda x: jnp.sin(x) * jnp.sum(x))
    x = np.linspace(0.1, 1.0, 10)
    backend = di.AutoJAX(mode="forward", batch_size=4)  # batches of 4, 4 and 2
    prep = di.prepare_jacobian(counted, backend, x)
    counted.take()
    first = di.jacobian(counted, backend, x, prep=prep)
    second = di.jacobian(counted, backend, x + 1, prep=prep)
    assert (
        counted.take() == 0
    )  # no trace per call: the partial batch lives in the compiled function
    expected = np.diag(np.cos(x + 1) * np.sum(x + 1)) + np.sin(x + 1)[:, None]
    np.testing.assert_allclose(second, expected, rtol=1e-12)
    assert di.batch_size(prep) == 4 and first.shape == (10, 10)


@pytest.mark.parametrize(
    "backend",
    [
        di.AutoTorch(mode="reverse", batch_size=3),
        di.AutoTorch(batch_size=3),
        di.AutoJAX(mode="reverse", batch_size=3),
        di.AutoTensorFlow(batch_size=3),
    ],
    ids=repr,
)
def test_second_order_sweeps_in_batches(backend):
    f = lambda x: (
        di.array_namespace(x).sum(di.array_namespace(x).sin(x) ** 2) * x[0]
    )  # tf tensors have no .sum
    x = np.linspace(0.2, 1.2, 8)
    prep = di.prepare_hessian(f, backend, x)
    h = di.hessian(f, backend, x, prep=prep)
    whole = di.hessian(f, type(backend)(mode=backend.mode), x)
    np.testing.assert_allclose(h, whole, rtol=1e-12, atol=1e-14)
    assert di.batch_size(prep) == 3


@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_the_tensorflow_sweep_is_traced_once_with_its_last_partial_batch(mode, batch_size):
    counted = CountingFunction(
        lambda x: di.array_namespace(x).sin(x) * di.array_namespace(x).sum(x)
    )
    x = np.linspace(0.1, 1.0, 10)
    backend = di.AutoTensorFlow(
        mode=mode, batch_size=batch_size
    )  # batches of 4, 4 and 2 (or ten of one)
    prep = di.prepare_jacobian(counted, backend, x)
    counted.take()
    di.jacobian(counted, backend, x, prep=prep)
    second = di.jacobian(counted, backend, x + 1, prep=prep)
    assert counted.take() == 0  # no trace per call: every batch lives in the one traced function
    expected = np.diag(np.cos(x + 1) * np.sum(x + 1)) + np.sin(x + 1)[:, None]
    np.testing.assert_allclose(second, expected, rtol=1e-12)
    assert di.batch_size(prep) == batch_size


def test_an_eager_tensorflow_forward_sweep_takes_one_seed_at_a_time():
    f = lambda x: di.array_namespace(x).sin(x) * di.array_namespace(x).sum(x)
    x = np.linspace(0.1, 1.0, 6)
    prep = di.prepare_jacobian(f, di.AutoTensorFlow(mode="forward", jit=False, batch_size=4), x)
    assert di.batch_size(prep) == 1
    np.testing.assert_allclose(
        di.jacobian(f, di.AutoTensorFlow(mode="forward", jit=False, batch_size=4), x, prep=prep),
        np.diag(np.cos(x) * np.sum(x)) + np.sin(x)[:, None],
        rtol=1e-12,
    )


def test_autograd_results_do_not_depend_on_the_batch_size_asked():
    f = lambda x: di.array_namespace(x).tanh(x) * di.array_namespace(x).sum(x**2)
    x = np.linspace(-0.9, 1.3, 9)
    jacobians = [di.jacobian(f, di.AutoAutograd(batch_size=size), x) for size in (1, 4, 9)]
    for jacobian in jacobians[1:]:
        np.testing.assert_array_equal(jacobian, jacobians[0])
    prep = di.prepare_hessian(
        f := (lambda x: di.array_namespace(x).sum(x**3)), di.AutoAutograd(memory_budget=1), x
    )
    assert di.batch_size(prep) == 1
    np.testing.assert_array_equal(
        di.hessian(f, di.AutoAutograd(memory_budget=1), x, prep=prep), np.diag(6 * x)
    )


def test_second_order_finite_differences_over_a_batched_jax_gradient():
    import jax.numpy as jnp

    f = lambda x: jnp.sum(jnp.sin(x) ** 2)
    x = np.linspace(0.1, 0.9, 9)
    batched = di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX(batch_size=4))
    whole = di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX())
    np.testing.assert_array_equal(di.hessian(f, batched, x), di.hessian(f, whole, x))
    np.testing.assert_allclose(di.hessian(f, batched, x), np.diag(2 * np.cos(2 * x)), atol=1e-6)


def test_a_backend_without_sweeps_reports_no_batch_size():
    prep = di.prepare_gradient(lambda x: (x**2).sum(), di.AutoTorch(batch_size=2), np.ones(3))
    assert di.batch_size(prep) is None
    assert (
        repr(prep) == "<gradient preparation for AutoTorch(mode=None, compile=False, batch_size=2)>"
    )
    with pytest.raises(TypeError, match="prep: expected a preparation"):
        di.batch_size("not a preparation")


def test_finite_differences_and_autograd_sweep_one_seed_at_a_time():
    f = lambda x: di.array_namespace(x).sin(x) * x.sum()
    x = np.linspace(0.1, 1.0, 5)
    assert di.batch_size(di.prepare_jacobian(f, di.AutoFiniteDiff(batch_size=3), x)) == 1
    assert di.batch_size(di.prepare_jacobian(f, di.AutoAutograd(), x)) == 1


def test_an_unprepared_call_spends_no_evaluation_on_an_estimate():
    import torch

    f = CountingFunction(lambda x: torch.sin(x) * x.sum())
    x = np.linspace(0.1, 1.0, 100)  # more seeds than a sweep runs whole without an estimate
    counts = []
    for backend in (di.AutoTorch(mode="forward"), di.AutoTorch(mode="forward", batch_size=100)):
        f.take()
        di.jacobian(f, backend, x)
        counts.append(f.take())
    assert counts[0] == counts[1]
    f.take()
    di.prepare_jacobian(
        f, di.AutoTorch(mode="forward"), x
    )  # a preparation estimates: one evaluation more
    prepared = f.take()
    di.prepare_jacobian(f, di.AutoTorch(mode="forward", batch_size=100), x)
    assert prepared == f.take() + 1


def _gram_misfit(target):
    """``sum((Y @ Y.T - target) ** 2)``: XLA fuses one seed's forward product into a reduction that
    keeps no intermediate, where a batch of seeds materializes a Gram matrix per seed."""

    def f(y):
        xp = di.array_namespace(y)
        gram = xp.matmul(y, xp.permute_dims(y, (1, 0)))
        return xp.sum((gram - xp.asarray(target, dtype=y.dtype)) ** 2)

    return f


@pytest.mark.parametrize(
    "selector", [di.AutoJAX, di.AutoTorch, di.AutoTensorFlow], ids=lambda s: s.__name__
)
def test_a_forward_mode_gradient_sweeps_x_within_the_memory_budget(selector):
    # the gradient in forward mode is a sweep over x's entries: unbounded, pymanopt's low-rank example
    # (Y of 1000 x 5) asked XLA for 120 GB at once
    rng = np.random.default_rng(0)
    y, target = rng.normal(size=(100, 5)), rng.normal(size=(100, 100))
    backend, f = (
        selector(mode="forward", memory_budget=2**22),
        _gram_misfit(target),
    )  # a few Gram matrices
    prep = di.prepare_gradient(f, backend, y)
    assert 1 <= di.batch_size(prep) < y.size
    residual = y @ y.T - target
    np.testing.assert_allclose(
        di.gradient(f, backend, y, prep=prep), 2 * (residual + residual.T) @ y, rtol=1e-10
    )


def test_a_forward_over_forward_hvp_bounds_its_inner_gradient_sweep():
    # AutoJAX(mode="forward")'s hvp differentiates a forward-mode gradient: a sweep over x's entries
    # per tangent (pymanopt's low-rank example asked XLA for 240 GB); with a small budget the inner
    # sweep runs in batches, and the products stay exact
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    y, target, tangent = (
        rng.normal(size=(100, 5)),
        rng.normal(size=(100, 100)),
        rng.normal(size=(100, 5)),
    )
    f = _gram_misfit(target)
    backend = di.AutoJAX(mode="forward", memory_budget=2**20)
    (product,) = di.hvp(f, backend, y, (tangent,), prep=di.prepare_hvp(f, backend, y, (tangent,)))
    with jax.enable_x64(True):
        expected = jax.jvp(
            jax.grad(lambda z: jnp.sum((z @ z.T - target) ** 2)),
            (jnp.asarray(y),),
            (jnp.asarray(tangent),),
        )[1]
    np.testing.assert_allclose(product, np.asarray(expected), rtol=1e-10)
