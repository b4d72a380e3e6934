"""``has_aux=True`` beyond the kit's per-backend cases: wrappers, other families, pytrees, out=, refusals."""

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing import CountingFunction
from diffinterface.testing.aux_scenarios import aux_cases

WRAPPERS = {
    "second_order-fd-over-torch": di.SecondOrder(di.AutoFiniteDiff(), di.AutoTorch()),
    "second_order-torch-over-torch": di.SecondOrder(di.AutoTorch(), di.AutoTorch()),
    # torch.func's vmap(jvp) inside both: aux from jvp's own has_aux (backends/torch/aux.py)
    "second_order-torch_forward-over-torch_forward": di.SecondOrder(
        di.AutoTorch(mode="forward"), di.AutoTorch(mode="forward")
    ),
    # the inner's jacfwd under the outer's recording: aux from jacfwd's own has_aux, matched to x by value
    "second_order-torch_reverse-over-torch_forward": di.SecondOrder(
        di.AutoTorch(mode="reverse"), di.AutoTorch(mode="forward")
    ),
    "second_order-jax-over-jax": di.SecondOrder(di.AutoJAX(), di.AutoJAX()),
    "second_order-fd-over-jax": di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX()),
    "sparse-fd": di.AutoSparse(
        di.AutoFiniteDiff(), sparsity_detector=di.DenseSparsityDetector(di.AutoFiniteDiff())
    ),
    "sparse-jax": di.AutoSparse(di.AutoJAX(), sparsity_detector=di.TracerSparsityDetector()),
    "sparse-torch": di.AutoSparse(di.AutoTorch(), sparsity_detector=di.TracerSparsityDetector()),
    "sparse-torch_forward": di.AutoSparse(
        di.AutoTorch(mode="forward"), sparsity_detector=di.TracerSparsityDetector()
    ),
}


def _wrapper_cases():
    cases = aux_cases(WRAPPERS)
    # AutoSparse's results are sparse matrices: the kit's dense comparison suits its dense_result form only
    return [
        c
        for c in cases
        if not (c.backend_id.startswith("sparse") and c.operator in ("jacobian", "hessian"))
    ]


@pytest.mark.parametrize("case", _wrapper_cases(), ids=lambda c: c.id)
def test_wrappers_return_aux(case):
    case.check()


@pytest.mark.parametrize("backend_id", ["sparse-fd", "sparse-jax", "sparse-torch"])
def test_sparse_jacobian_and_hessian_with_aux(backend_id):
    backend = WRAPPERS[backend_id]
    x = np.linspace(0.3, 1.2, 4)

    def f(x):
        xp = di.array_namespace(x)
        return xp.sin(x) * x, ("tag", xp.sum(x))

    def g(x):
        xp = di.array_namespace(x)
        return xp.sum(xp.sin(x) * x * x), ("tag", xp.sum(x))

    jac, aux = di.jacobian(f, backend, x, has_aux=True)
    assert np.allclose(
        np.asarray(jac.todense()), di.jacobian(lambda x: f(x)[0], backend, x).todense()
    )
    assert aux[0] == "tag" and np.isclose(float(np.asarray(aux[1])), x.sum())
    prep = di.prepare_hessian(g, backend, x, has_aux=True)
    (value, aux), _gradient, hess = di.value_gradient_and_hessian(
        g, backend, 2 * x, prep=prep, has_aux=True
    )
    assert np.isclose(float(np.asarray(aux[1])), 2 * x.sum()) and np.isclose(
        float(value), g(2 * x)[0]
    )
    assert np.allclose(
        np.asarray(hess.todense()),
        di.hessian(lambda x: g(x)[0], backend, 2 * x).todense(),
        atol=1e-5,
    )


def test_torch_family_aux_is_detached_torch():
    import torch

    x = torch.linspace(0.3, 1.2, 3, dtype=torch.float64)

    def f(x):
        return (x**3).sum(), {"square": x**2}

    for backend in (di.AutoTorch(), di.AutoTorch(mode="forward")):
        (value, aux), grad = di.value_and_gradient(f, backend, x, has_aux=True)
        assert isinstance(aux["square"], torch.Tensor) and not aux["square"].requires_grad
        assert torch.allclose(aux["square"], x**2) and torch.allclose(grad, 3 * x**2)


def test_jax_family_compiled_aux_keeps_static_leaves():
    import jax.numpy as jnp

    x = jnp.linspace(0.3, 1.2, 3)

    def f(x):
        return jnp.sum(x**3), {"name": "cubic", "square": x**2, "n": 3}

    prep = di.prepare_gradient(f, di.AutoJAX(), x, has_aux=True)
    for point in (x, 2 * x):
        grad, aux = di.gradient(f, di.AutoJAX(), point, prep=prep, has_aux=True)
        assert aux["name"] == "cubic" and aux["n"] == 3
        assert np.allclose(aux["square"], point**2) and np.allclose(grad, 3 * point**2)


def test_pytree_x_with_aux():
    x = {"a": np.array([1.0, 2.0]), "b": 0.5}

    def f(p):
        return (p["a"] ** 2).sum() * p["b"], p["a"] * 10

    for backend in (di.AutoFiniteDiff(), di.AutoJAX(), di.AutoTorch()):
        grad, aux = di.gradient(f, backend, x, has_aux=True)
        assert np.allclose(np.asarray(aux), [10.0, 20.0])
        assert np.allclose(grad["a"], [1.0, 2.0], atol=1e-5) and np.isclose(
            grad["b"], 5.0, atol=1e-5
        )


def test_out_buffers_with_aux():
    x = np.array([1.0, 2.0])
    out = np.zeros(2)
    f = lambda x: ((x**2).sum(), "aux")
    grad, aux = di.gradient(f, di.AutoFiniteDiff(), x, out=out, has_aux=True)
    assert grad is out and np.allclose(out, [2.0, 4.0], atol=1e-6) and aux == "aux"
    (value, aux), grad = di.value_and_gradient(f, di.AutoFiniteDiff(), x, out=out, has_aux=True)
    assert grad is out and float(value) == 5.0 and aux == "aux"


def test_f_not_returning_a_pair_is_named():
    with pytest.raises(TypeError, match="has_aux=True, f must return a pair"):
        di.gradient(lambda x: (x**2).sum(), di.AutoFiniteDiff(), np.ones(2), has_aux=True)


def test_has_aux_must_be_a_bool():
    with pytest.raises(TypeError, match="has_aux: expected True or False"):
        di.gradient(lambda x: ((x**2).sum(), 1), di.AutoFiniteDiff(), np.ones(2), has_aux="yes")


def test_two_argument_f_refuses_aux():
    def f(y, x):
        y[...] = x**2

    with pytest.raises(TypeError, match="has_aux"):
        di.jacobian(f, di.AutoTorch(), np.ones(2), y=np.zeros(2), has_aux=True)


def test_inputs_untouched_and_fast_path_result():
    x = np.array([0.5, 1.5])
    before = x.copy()
    f = lambda x: ((x**2).sum(), x)
    prep = di.prepare_gradient(f, di.AutoJAX(), x, has_aux=True)
    grad, aux = di.gradient(f, di.AutoJAX(), x, prep=prep, has_aux=True)
    assert np.array_equal(x, before) and np.allclose(grad, 2 * x) and np.allclose(aux, x)


def test_auto_select_with_aux():
    backend = di.AutoSelect(candidates=[di.AutoFiniteDiff(), di.AutoTorch(), di.AutoJAX()])
    x = np.array([1.0, 2.0])
    f = lambda x: ((x**2).sum(), ("label", 2 * x))
    prep = di.prepare_gradient(f, backend, x, has_aux=True)
    (value, aux), grad = di.value_and_gradient(f, backend, 3 * x, prep=prep, has_aux=True)
    assert float(value) == 45.0 and aux[0] == "label" and np.allclose(np.asarray(aux[1]), 6 * x)
    assert np.allclose(grad, 6 * x, atol=1e-5)
    with pytest.raises(di.PreparationMismatchError, match="has_aux"):
        di.gradient(f, backend, x, prep=prep)


def _cubes(x):
    return (x**3).sum()


def _sines(x):
    return di.array_namespace(x).sin(x)


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "eager"])
def test_jax_evaluates_f_once_with_aux(jit):
    """JAX's own has_aux: f is traced (compiled) or evaluated (eager) as often as without aux, per function."""
    backend, x, t = di.AutoJAX(jit=jit), np.linspace(0.3, 1.2, 3), (np.ones(3), np.arange(3.0))
    for name, f, seeds in (
        ("gradient", _cubes, ()),
        ("hvp", _cubes, (t,)),
        ("hessian", _cubes, ()),
        ("pushforward", _sines, (t,)),
        ("pullback", _sines, (t,)),
        ("jacobian", _sines, ()),
    ):
        counts = []
        for has_aux in (False, True):
            g = CountingFunction(
                (lambda x, f=f: (f(x), {"tag": "t", "norm": (x * x).sum()})) if has_aux else f
            )
            prep = getattr(di, "prepare_" + name)(g, backend, x, *seeds, has_aux=has_aux)
            out = getattr(di, name)(g, backend, 2 * x, *seeds, prep=prep, has_aux=has_aux)
            counts.append(g.take())
            if has_aux:
                assert out[1]["tag"] == "t" and np.isclose(float(out[1]["norm"]), 4 * (x * x).sum())
        assert counts[1] == counts[0], (name, counts)


def test_kit_finds_an_extra_evaluation_for_aux(monkeypatch):
    """The kit's aux case fails a backend that evaluates f once more for the aux (JAX without its has_aux)."""
    from diffinterface.backends.jax import aux as jax_aux

    monkeypatch.setattr(
        jax_aux, "_native", lambda problem: None
    )  # the core's capture alone: f again per call
    result = aux_cases({"jax": di.AutoJAX()}, ["gradient"])[0].run()
    assert result.status == "failed" and "evaluated f" in result.message()


@pytest.mark.parametrize(
    "backend",
    [
        di.AutoTorch(mode="forward"),
        di.AutoTorch(mode="forward", batch_size=2),
        di.AutoTorch(batch_size=2),
    ],
    ids=["forward", "forward-chunked", "both-chunked"],
)
@pytest.mark.parametrize("name", ["pushforward", "pullback", "jacobian", "gradient"])
def test_torch_vmap_recipes_take_aux_from_their_evaluation(backend, name):
    """torch.func's vmap(jvp) (several tangents, forward-mode Jacobians, chunked or not) returns aux itself: f is
    evaluated as often as without aux; aux tensors come back plain (readable, no recording), other leaves and
    tensors f did not compute as the very objects."""
    import torch

    constant = torch.ones(3, dtype=torch.float64)
    scalar = name == "gradient"

    def f(x):
        y = (x**3).sum() if scalar else torch.sin(x) * x
        return y, {
            "constant": constant,
            "x": x,
            "sum": (x * x).sum(),
            "label": "at x",
            "scale": 0.5,
            "none": None,
        }

    x = torch.linspace(0.3, 1.2, 3, dtype=torch.float64)
    seeds = (
        (tuple(torch.eye(3, dtype=torch.float64)),) if name in ("pushforward", "pullback") else ()
    )
    counts, results = [], []
    for has_aux in (False, True):
        g = CountingFunction(f if has_aux else (lambda x: f(x)[0]))
        prep = getattr(di, "prepare_" + name)(g, backend, x, *seeds, has_aux=has_aux)
        g.take()
        valued = getattr(di, di.core.OPERATORS[name].valued)
        results.append(
            (
                getattr(di, name)(g, backend, 2 * x, *seeds, prep=prep, has_aux=has_aux),
                valued(g, backend, 2 * x, *seeds, prep=prep, has_aux=has_aux),
            )
        )
        counts.append(g.take())
    assert counts[1] == counts[0], counts
    (plain, valued_plain), ((plain_aux, aux), ((value, valued_aux), *derivatives)) = results
    for got, wanted in (
        (plain_aux, plain),
        (value, valued_plain[0]),
        (derivatives, valued_plain[1:]),
    ):
        got, wanted = torch.utils._pytree.tree_leaves(got), torch.utils._pytree.tree_leaves(wanted)
        assert len(got) == len(wanted) and all(torch.equal(a, b) for a, b in zip(got, wanted))
    for aux in (aux, valued_aux):
        assert (
            aux["constant"] is constant
            and aux["label"] == "at x"
            and aux["scale"] == 0.5
            and aux["none"] is None
        )
        for key, wanted in (("x", 2 * x), ("sum", (4 * x * x).sum())):
            assert type(aux[key]) is torch.Tensor and not aux[key].requires_grad
            assert np.allclose(aux[key].numpy(), wanted.numpy(), rtol=1e-15)


def test_kit_holds_torch_forward_mode_to_its_count(monkeypatch):
    """Without taking aux out of vmap(jvp), forward-mode torch evaluates f once more per call: the kit's case fails
    (AutoTorch declares no operator in aux_evaluated_again)."""
    from diffinterface.backends.torch import adapter, jacobians

    for module in (adapter, jacobians):
        monkeypatch.setattr(module, "native_aux", lambda problem: None)
    assert not di.core.get_adapter(di.AutoTorch(mode="forward")).capabilities.aux_evaluated_again
    result = aux_cases({"torch-forward": di.AutoTorch(mode="forward")}, ["gradient"])[0].run()
    assert result.status == "failed" and "evaluated f 2 times" in result.message()


def _forward_over_reverse_torch_cases():
    pair = {
        "second_order-torch_forward-over-torch_reverse": di.SecondOrder(
            di.AutoTorch(mode="forward"), di.AutoTorch(mode="reverse")
        )
    }
    # a batch of tangents (hvp with 3, hessian) runs the inner's reverse pass under the outer's vmap(jvp), where
    # aux cannot leave: those evaluate f once more (docs/aux-outputs.md); the other operators are held to the kit
    return [c for c in aux_cases(pair, ("gradient", "second_derivative", "hvp")) if c.n_seeds == 1]


@pytest.mark.parametrize("case", _forward_over_reverse_torch_cases(), ids=lambda c: c.id)
def test_torch_forward_over_reverse_takes_aux_from_its_evaluation(case):
    case.check()


def test_torch_forward_over_reverse_batch_evaluates_once_more_with_right_aux():
    backend = di.SecondOrder(di.AutoTorch(mode="forward"), di.AutoTorch(mode="reverse"))
    x = np.linspace(0.3, 1.2, 3)
    tangents = (np.ones(3), np.arange(3.0), -np.ones(3))

    def f(x):
        xp = di.array_namespace(x)
        return xp.sum(xp.sin(x) * x * x), {"double": 2 * x}

    counted, counted_plain = CountingFunction(f), CountingFunction(lambda x: f(x)[0])
    prep = di.prepare_hvp(counted, backend, x, tangents, has_aux=True)
    prep_plain = di.prepare_hvp(counted_plain, backend, x, tangents)
    counted.take(), counted_plain.take()
    (gradient, hvps), aux = di.gradient_and_hvp(
        counted, backend, 2 * x, tangents, prep=prep, has_aux=True
    )
    expected_gradient, expected = di.gradient_and_hvp(
        counted_plain, backend, 2 * x, tangents, prep=prep_plain
    )
    assert counted.take() <= counted_plain.take() + 1
    assert np.allclose(aux["double"], 4 * x) and not getattr(aux["double"], "requires_grad", False)
    assert np.allclose(gradient, expected_gradient) and all(
        np.allclose(a, b) for a, b in zip(hvps, expected)
    )
