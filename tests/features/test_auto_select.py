"""AutoSelect: the preparation picks the fastest candidate whose result agrees with the majority."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import diffinterface as di
from diffinterface.backends.zero import ZeroForwardAdapter
from diffinterface.core import registry
from diffinterface.frozen import Frozen

TORCH_MODES = [di.AutoTorch(mode="forward"), di.AutoTorch(mode="reverse")]
RNG = np.random.default_rng(0)
TALL = torch.tensor(RNG.standard_normal((3000, 4)))


def tall(x):  # R^4 -> R^3000: 4 pushforwards against 3000 pullbacks
    return torch.sin(TALL @ x)


def wide(x):  # R^3000 -> R^4: 4 pullbacks against 3000 pushforwards
    return torch.stack([x.sum(), (x**2).sum(), torch.sin(x).sum(), (x * torch.cos(x)).sum()])


def test_tall_jacobian_picks_forward_with_the_right_values():
    backend = di.AutoSelect(TORCH_MODES, time_budget=0.5)
    x = torch.tensor(RNG.standard_normal(4))
    prep = di.prepare_jacobian(tall, backend, x)
    assert di.selected_backend(prep) == di.AutoTorch(mode="forward"), str(di.explain(prep))
    expected = torch.cos(TALL @ x)[:, None] * TALL
    torch.testing.assert_close(di.jacobian(tall, backend, x, prep=prep), expected)


def test_wide_jacobian_picks_reverse_with_the_right_values():
    backend = di.AutoSelect(TORCH_MODES, time_budget=0.5)
    x = torch.tensor(RNG.standard_normal(3000))
    prep = di.prepare_jacobian(wide, backend, x)
    assert di.selected_backend(prep) == di.AutoTorch(mode="reverse"), str(di.explain(prep))
    expected = torch.stack(
        [torch.ones_like(x), 2 * x, torch.cos(x), torch.cos(x) - x * torch.sin(x)]
    )
    torch.testing.assert_close(di.jacobian(wide, backend, x, prep=prep), expected)


def test_a_torch_only_function_picks_torch_and_explain_says_why_the_others_were_skipped():
    backend = di.AutoSelect(time_budget=0.1)  # every installed backend
    x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    f = lambda x: torch.logsumexp(x, 0)
    prep = di.prepare_gradient(f, backend, x)
    assert isinstance(di.selected_backend(prep), di.AutoTorch)
    selection = di.explain(prep)
    table = str(selection)
    skipped = [row for row in selection.rows if not isinstance(row.backend, di.AutoTorch)]
    assert {type(row.backend) for row in skipped} >= {
        di.AutoJAX,
        di.AutoAutograd,
        di.AutoFiniteDiff,
    }
    for row in skipped:
        assert row.status in ("raised", "not installed") and row.reason, table
        assert row.reason in table
    assert "AutoFiniteDiff differentiates numpy or jax arrays; got torch" in table
    assert "<- chosen" in table and "chosen: AutoTorch(mode=" in table
    torch.testing.assert_close(di.gradient(f, backend, x, prep=prep), torch.softmax(x, 0))


class AutoWrong(di.AbstractBackend, Frozen):
    """A deliberately wrong backend: zeros, and not declared as a zero backend, so it competes (and is fastest)."""


@pytest.fixture
def wrong_backend_registered(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRATIONS", dict(registry._REGISTRATIONS))
    di.register_backend(AutoWrong, ZeroForwardAdapter)
    return AutoWrong()


def one_source(x):
    xp = di.array_namespace(x)
    return xp.sum(xp.sin(x) * x)


@pytest.mark.parametrize("listed", [False, True], ids=["default-candidates", "listed"])
def test_a_wrong_backend_is_never_picked(wrong_backend_registered, listed):
    wrong = wrong_backend_registered
    candidates = (
        [wrong, di.AutoFiniteDiff(), di.AutoAutograd(), di.AutoJAX(mode="reverse")]
        if listed
        else None
    )
    backend = di.AutoSelect(candidates, time_budget=0.1)
    x = np.array([0.3, 1.2, -0.7])
    prep = di.prepare_gradient(one_source, backend, x)
    rows = {row.backend: row for row in di.explain(prep).rows}
    assert rows[wrong].status == "disagreed" and "differs from the majority" in rows[wrong].reason
    assert di.selected_backend(prep) != wrong
    np.testing.assert_allclose(
        di.gradient(one_source, backend, x, prep=prep), np.sin(x) + x * np.cos(x), rtol=1e-6
    )


def test_no_majority_raises_with_the_table(wrong_backend_registered):
    backend = di.AutoSelect([wrong_backend_registered, di.AutoFiniteDiff()], time_budget=0.0)
    with pytest.raises(
        di.DifferentiationError, match=r"(?s)no majority agrees.*AutoWrong\(\).*larger rtol"
    ):
        di.prepare_gradient(one_source, backend, np.ones(3))


def test_no_candidate_prepares_raises_naming_each_reason():
    backend = di.AutoSelect([di.AutoFiniteDiff(), di.AutoAutograd()])
    with pytest.raises(
        TypeError,
        match=r"(?s)^x: AutoFiniteDiff differentiates numpy or jax arrays; got torch.*"
        r"every candidate of AutoSelect raised TypeError.*AutoAutograd\(\)\s+no",
    ):
        di.prepare_gradient(lambda x: x.sum(), backend, torch.ones(2, dtype=torch.float64))
    mixed = di.AutoSelect(
        [di.AutoFiniteDiff(), di.AutoTorch()]
    )  # torch raises another kind of error than numpy
    with pytest.raises(
        di.DifferentiationError, match=r"(?s)no candidate prepared.*AutoFiniteDiff\(\)\s+no"
    ):
        di.prepare_gradient(lambda x: np.asarray(x).sum() + "a", mixed, np.ones(2))


def test_the_prepared_call_is_the_chosen_backends_own():
    backend = di.AutoSelect([di.AutoFiniteDiff(), di.AutoTorch(mode="reverse")], time_budget=0.05)
    f = lambda x: np.sum(x**3)  # numpy code: only finite differences run it
    prep = di.prepare_gradient(f, backend, np.ones(3))
    chosen = di.prepare_gradient(f, di.AutoFiniteDiff(), np.ones(3))
    assert di.selected_backend(prep) == di.AutoFiniteDiff()
    assert type(prep.impl.chosen_impl) is type(chosen.impl)
    assert [m.__qualname__ for m in prep.methods] == [m.__qualname__ for m in chosen.methods]
    # the call with the AutoSelect selector passes the prepared check by identity
    assert prep.check.backend is backend and prep.backend is backend
    np.testing.assert_allclose(
        di.gradient(f, backend, np.full(3, 2.0), prep=prep), np.full(3, 12.0), rtol=1e-6
    )
    with pytest.raises(di.PreparationMismatchError, match=r"backend: MISMATCH"):
        di.gradient(f, di.AutoFiniteDiff(), np.ones(3), prep=prep)
    with pytest.raises(di.PreparationMismatchError, match=r"x: MISMATCH"):
        di.gradient(f, backend, np.ones(4), prep=prep)


CHEAP = di.AutoSelect(
    [di.AutoFiniteDiff(), di.AutoAutograd(), di.AutoJAX(mode="forward")], time_budget=0.02
)


def test_pytrees_contexts_and_out():
    import autograd.numpy as anp

    def f(params, scale):
        return anp.sum(anp.sin(params["a"]) * scale) + params["b"] ** 2

    params = {"a": np.array([0.1, 0.2]), "b": 1.5}
    prep = di.prepare_gradient(f, CHEAP, params, di.Constant(2.0))
    grads = di.gradient(f, CHEAP, params, di.Constant(2.0), prep=prep)
    np.testing.assert_allclose(grads["a"], 2 * np.cos(params["a"]), rtol=1e-6)
    np.testing.assert_allclose(grads["b"], 3.0, rtol=1e-6)
    value, _ = di.value_and_gradient(f, CHEAP, params, di.Constant(2.0), prep=prep)
    np.testing.assert_allclose(value, f(params, 2.0))
    jprep = di.prepare_jacobian(np.square, CHEAP, np.ones(3))
    out = np.empty((3, 3))
    result = di.jacobian(np.square, CHEAP, np.array([1.0, 2.0, 3.0]), prep=jprep, out=out)
    assert result is out
    np.testing.assert_allclose(out, np.diag([2.0, 4.0, 6.0]), atol=1e-6)


def test_two_argument_functions_keep_the_candidates_that_write_y():
    def f(y, x):
        y[:] = x**2

    backend = di.AutoSelect([di.AutoFiniteDiff(), di.AutoJAX(), di.AutoTorch()], time_budget=0.02)
    y = torch.zeros(2, dtype=torch.float64)
    x = torch.tensor([1.0, 3.0], dtype=torch.float64)
    prep = di.prepare_jacobian(f, backend, x, y=y)
    torch.testing.assert_close(di.jacobian(f, backend, x, prep=prep, y=y), torch.diag(2 * x))
    assert isinstance(di.selected_backend(prep), di.AutoTorch)


@pytest.mark.parametrize(
    "operator", ["pushforward", "pullback", "derivative", "hvp", "hessian", "second_derivative"]
)
def test_every_operator(operator):
    f = (
        (lambda x: np.sin(x) * 2.0)
        if operator in ("derivative", "second_derivative")
        else one_source
    )
    x = 0.7 if operator in ("derivative", "second_derivative") else np.array([0.3, 1.2])
    seeds = {
        "pushforward": (np.array([1.0, 0.0]),),
        "pullback": (np.asarray(1.0),),
        "hvp": (np.array([1.0, 0.0]),),
    }
    args = (seeds[operator],) if operator in seeds else ()
    prep = getattr(di, "prepare_" + operator)(f, CHEAP, x, *args)
    got = getattr(di, operator)(f, CHEAP, x, *args, prep=prep)
    expected = getattr(di, operator)(f, di.AutoAutograd(), x, *args)
    for g, e in zip(
        got if isinstance(got, tuple) else (got,),
        expected if isinstance(expected, tuple) else (expected,),
    ):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)


def test_unprepared_calls_select_each_time():
    x = np.array([0.3, 1.2])
    np.testing.assert_allclose(
        di.gradient(one_source, CHEAP, x), np.sin(x) + x * np.cos(x), rtol=1e-6
    )


def test_the_selector_is_frozen_and_validated():
    assert di.AutoSelect([di.AutoJAX()]) == di.AutoSelect((di.AutoJAX(),))
    assert hash(di.AutoSelect([di.AutoJAX()])) == hash(di.AutoSelect((di.AutoJAX(),)))
    with pytest.raises(
        TypeError, match=r"candidates=\.\.\.\) expected a list of backend selectors"
    ):
        di.AutoSelect(di.AutoJAX())
    with pytest.raises(ValueError, match="at least one"):
        di.AutoSelect([])
    with pytest.raises(TypeError, match=r"candidates\[1\]: expected a backend selector.*got 'jax'"):
        di.AutoSelect([di.AutoJAX(), "jax"])
    with pytest.raises(TypeError, match=r"not an AutoSelect"):
        di.AutoSelect([di.AutoSelect()])
    with pytest.raises(ValueError, match=r"candidates\[1\] repeats"):
        di.AutoSelect([di.AutoJAX(), di.AutoJAX()])
    with pytest.raises(
        ValueError, match=r"rtol=\.\.\.\) expected a positive finite number; got -1"
    ):
        di.AutoSelect(rtol=-1)
    with pytest.raises(
        TypeError, match=r"time_budget=\.\.\.\) expected a positive number; got '1'"
    ):
        di.AutoSelect(time_budget="1")


def test_explain_and_selected_backend_need_a_selected_preparation():
    prep = di.prepare_gradient(one_source, di.AutoFiniteDiff(), np.ones(2))
    with pytest.raises(
        TypeError, match=r"prep: explain expected a preparation made with di.AutoSelect"
    ):
        di.explain(prep)
    with pytest.raises(TypeError, match=r"prep: selected_backend expected .* got ndarray"):
        di.selected_backend(np.ones(2))


def test_inside_second_order():
    hessian = di.hessian(
        one_source, di.SecondOrder(di.AutoFiniteDiff(), CHEAP), np.array([0.3, 1.2])
    )
    expected = np.diag(2 * np.cos([0.3, 1.2]) - np.array([0.3, 1.2]) * np.sin([0.3, 1.2]))
    np.testing.assert_allclose(hessian, expected, rtol=1e-4, atol=1e-6)


KIT_BACKEND = di.AutoSelect(
    [di.AutoFiniteDiff(), di.AutoAutograd(), di.AutoTorch(mode="reverse")], time_budget=0.0
)


@pytest.mark.parametrize("scenarios", ["default", "second_order", "pytree", "edge"])
def test_the_kits_scenarios_pass_through_autoselect(scenarios):
    from diffinterface import testing

    chosen = getattr(testing, f"{scenarios}_scenarios")()
    report = testing.test_differentiation(
        {"auto-select": KIT_BACKEND}, chosen, raise_on_failure=False
    )
    assert report.passed and not report.failed, str(report)


def test_the_kits_bad_inputs_and_probes_pass_through_autoselect():
    """Bad arguments raise what a single backend raises; inside SecondOrder and AutoSparse it serves too."""
    from diffinterface.testing import bad_input_cases

    cases = bad_input_cases({"auto-select": KIT_BACKEND})
    failures = [
        result.message() for result in (case.run() for case in cases) if result.status != "passed"
    ]
    assert len(cases) > 20 and not failures, "\n".join(failures)


def test_bad_arguments_every_candidate_refuses_raise_their_own_error():
    with pytest.raises(TypeError, match=r"^f: expected f to return an array or a number"):
        di.gradient(lambda x: "abc", KIT_BACKEND, np.ones(2))


def test_inside_a_wrapper_the_first_candidate_that_prepares_serves():
    def f(x):
        xp = di.array_namespace(x)
        return xp.sin(x)

    backend = di.AutoSparse(
        di.AutoSelect([di.AutoAutograd(), di.AutoTorch()])
    )  # autograd takes no torch x
    x = torch.tensor([0.1, 0.2], dtype=torch.float64)
    jacobian = di.jacobian(f, backend, x)
    torch.testing.assert_close(jacobian.to_dense(), torch.diag(torch.cos(x)))


def _large_with_aux(x):
    xp = di.array_namespace(x)
    return 1e6 + xp.sum(xp.sin(x)), {"first": x[0]}


@pytest.mark.parametrize("has_aux", [False, True])
def test_each_part_of_a_value_and_result_agrees_on_its_own_scale(has_aux):
    """A derivative 13 % off beside a large f(x): the candidates disagree (f(x) no longer sets the
    scale of the whole comparison)."""
    f = _large_with_aux if has_aux else (lambda x: _large_with_aux(x)[0])
    x = np.array([0.5, -0.25, 1.0])
    wrong = di.AutoSelect([di.AutoFiniteDiff(), di.AutoFiniteDiff(abs_step=0.9)], time_budget=0)
    with pytest.raises(di.DifferentiationError, match="disagree"):
        di.value_and_gradient(f, wrong, x, has_aux=has_aux)
    right = di.AutoSelect([di.AutoFiniteDiff(), di.AutoAutograd()], time_budget=0)
    result = di.value_and_gradient(f, right, x, has_aux=has_aux)
    np.testing.assert_allclose(result[1], np.cos(x), rtol=1e-4)


def test_an_unprepared_call_does_not_spend_the_time_budget():
    """A one-off call picks without timing rounds (core/hand_over.py passes one_off on): f is
    evaluated a few dozen times, where a preparation with this budget times it for a second."""
    evaluations = []

    def f(x):
        evaluations.append(1)
        return np.sum(x**3)

    backend = di.AutoSelect(
        [di.AutoFiniteDiff(), di.AutoFiniteDiff(method="forward")], time_budget=1.0
    )
    np.testing.assert_allclose(di.gradient(f, backend, np.ones(3)), np.full(3, 3.0), rtol=1e-5)
    assert len(evaluations) <= 50
