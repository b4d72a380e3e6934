"""Same-point preparations beyond the kit's per-backend cases: wrappers, other families, contexts."""

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.same_point_scenarios import same_point_cases

WRAPPERS = {
    "second_order-fd-over-torch": di.SecondOrder(di.AutoFiniteDiff(), di.AutoTorch()),
    "second_order-jax-over-jax": di.SecondOrder(di.AutoJAX(), di.AutoJAX()),
    "sparse-fd": di.AutoSparse(
        di.AutoFiniteDiff(), sparsity_detector=di.DenseSparsityDetector(di.AutoFiniteDiff())
    ),
}


@pytest.mark.parametrize("case", same_point_cases(WRAPPERS), ids=lambda c: c.id)
def test_wrappers(case):
    case.check()


def _energy(x):
    xp = di.array_namespace(x)
    return xp.sum(xp.exp(x[1:] - x[:-1])) + xp.sum(x**4)


@pytest.mark.parametrize("family", ["jax", "torch"])
def test_framework_arrays_in_and_out(family):
    if family == "jax":
        import jax.numpy as jnp

        backend, x = di.AutoJAX(), jnp.linspace(0.1, 1.0, 6)
        t = jnp.ones(6)
    else:
        import torch

        backend, x = di.AutoTorch(), torch.linspace(0.1, 1.0, 6, dtype=torch.float64)
        t = torch.ones(6, dtype=torch.float64)
    prep = di.prepare_hvp_same_point(_energy, backend, x, (t,))
    got = di.hvp(_energy, backend, x, (t,), prep=prep)[0]
    assert type(got) is type(x)
    assert np.allclose(np.asarray(got), np.asarray(di.hvp(_energy, backend, x, (t,))[0]))


def test_contexts_are_part_of_the_point():
    f = lambda x, c: c * (x**3).sum()
    x, t = np.array([1.0, 2.0]), (np.ones(2),)
    prep = di.prepare_hvp_same_point(f, di.AutoJAX(), x, t, di.Constant(2.0))
    assert np.allclose(di.hvp(f, di.AutoJAX(), x, t, di.Constant(2.0), prep=prep)[0], [12.0, 24.0])
    with pytest.raises(di.PreparationMismatchError, match="contexts"):
        di.hvp(f, di.AutoJAX(), x, t, di.Constant(3.0), prep=prep)


def test_the_preparation_computed_once_what_depends_on_x():
    """After preparing, calls on torch and autograd do not evaluate f; JAX does not trace it again."""
    from diffinterface.testing.counting import CountingFunction

    for backend in (di.AutoTorch(), di.AutoAutograd(), di.AutoJAX()):
        f = CountingFunction(_energy)
        x = np.linspace(0.1, 1.0, 4)
        prep = di.prepare_hvp_same_point(f, backend, x, (np.ones(4),))
        f.take()
        for k in range(3):
            di.hvp(f, backend, x, (np.eye(4)[k],), prep=prep)
        assert f.take() == 0, backend


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "eager"])
def test_jax_same_point_sweeps_in_batches_of_batch_size(jit):
    def f(x):
        xp = di.array_namespace(x)
        return xp.sum(xp.sin(x) ** 3)

    x = np.linspace(0.0, 1.0, 5)
    tangents = tuple(np.eye(5))
    backend = di.AutoJAX(jit=jit, batch_size=2)
    prep = di.prepare_hvp_same_point(f, backend, x, tangents)
    assert di.batch_size(prep) == 2
    hvps = di.hvp(f, backend, x, tangents, prep=prep)
    np.testing.assert_allclose(np.stack(hvps), di.hessian(f, di.AutoJAX(), x), rtol=1e-12)


def _scaled(x, c):
    xp = di.array_namespace(x)
    return xp.sum(xp.asarray(c, dtype=x.dtype) * x**3)


@pytest.mark.parametrize("backend", [di.AutoTorch(), di.AutoFiniteDiff()], ids=repr)
def test_an_x_or_constant_changed_in_place_is_refused_naming_it(backend):
    # issue #48: some backends answered at the prepared values, others at the new ones
    x, c, t = np.array([1.0, 2.0]), np.ones(2), (np.ones(2),)
    prep = di.prepare_hvp_same_point(_scaled, backend, x, t, di.Constant(c))
    # equal values in other objects are the prepared point
    di.hvp(_scaled, backend, x.copy(), t, di.Constant(c.copy()), prep=prep)
    c[0] = 3.0
    with pytest.raises(di.PreparationMismatchError, match=r"contexts\[0\]: changed in place"):
        di.hvp(_scaled, backend, x, t, di.Constant(c), prep=prep)
    c[0] = 1.0  # back to the prepared values: served again
    di.hvp(_scaled, backend, x, t, di.Constant(c), prep=prep)
    x[1] = np.nan
    with pytest.raises(di.PreparationMismatchError, match=r"^x: changed in place"):
        di.hvp(_scaled, backend, x, t, di.Constant(c), prep=prep)


def test_a_nan_in_a_kept_array_matches_itself_and_a_list_changed_in_place_is_refused():
    backend, t = di.AutoFiniteDiff(), (np.ones(2),)
    x, c = np.array([1.0, 2.0]), np.array([np.nan, 1.0])
    f = lambda x, c: x * c[1]  # noqa: E731
    prep = di.prepare_pushforward_same_point(f, backend, x, t, di.Constant(c))
    di.pushforward(f, backend, x, t, di.Constant(c), prep=prep)
    weights = [1.0, 2.0]
    g = lambda x, w: x * w[1]  # noqa: E731
    prep = di.prepare_pushforward_same_point(g, backend, x, t, di.Constant(weights))
    weights[1] = 5.0
    with pytest.raises(di.PreparationMismatchError, match=r"contexts\[0\]: changed in place"):
        di.pushforward(g, backend, x, t, di.Constant(weights), prep=prep)


def test_a_cache_is_not_compared_and_strict_false_keeps_no_copies():
    backend, t = di.AutoFiniteDiff(), (np.ones(2),)
    x, cache = np.array([1.0, 2.0]), np.zeros(2)

    def f(x, buffer):
        buffer[...] = x * 2  # f writes its Cache at every call
        return buffer.sum() * x

    prep = di.prepare_pushforward_same_point(f, backend, x, t, di.Cache(cache))
    cache[...] = 7.0
    di.pushforward(f, backend, x, t, di.Cache(cache), prep=prep)
    prep = di.prepare_pushforward_same_point(np.sin, backend, x, t, strict=False)
    x[0] = 0.5  # the caller's risk without strict: nothing is copied to compare
    di.pushforward(np.sin, backend, x, t, prep=prep)
