"""Auxiliary outputs (core/aux.py): the capture that hands adapters f returning y and keeps the
aux of the evaluation at the call's x; every operator's form with aux, prepared and not, and the
evaluations aux costs. NumPy, finite differences and torch only."""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core.aux import AuxCapture, capture_of, join_aux, primal_of, split_aux
from diffinterface.core.operator_table import OPERATORS
from diffinterface.core.registry import get_adapter
from diffinterface.testing import CountingFunction


def f(x, c):
    # aux holds x's values and the context: an aux from a point other than x, or without the
    # context, differs
    return c * (x**3).sum(), {"x": x.copy(), "c": c}


def vector_f(x, c):
    return c * x**2, (x.copy(), c)


_PREPARED_BY = {
    "value_and_gradient": "gradient",
    "value_and_pushforward": "pushforward",
    "gradient_and_hvp": "hvp",
    "value_gradient_and_hessian": "hessian",
}


def _assert_aux_at(aux, x, c):
    assert aux["x"].tolist() == x.tolist() and aux["c"] == c


def test_the_capture_returns_y_and_keeps_the_aux_at_x():
    capture = AuxCapture(lambda x: (2 * x, x.tolist()), lambda v: v)
    assert capture.__name__ == "<lambda>"
    x = np.array([1.0, 2.0])
    capture.begin(x)
    assert capture(x + 0.5).tolist() == [3.0, 5.0]
    assert capture(x.copy()).tolist() == [2.0, 4.0]  # at x's values: its aux is kept
    capture(x + 1.0)
    assert capture.take(x, ()) == [1.0, 2.0]
    # a new call forgets the last aux: the recipe made no evaluation at x, so take makes one
    capture.begin(np.array([5.0, 6.0]))
    capture(np.array([5.5, 6.0]))
    assert capture.take(np.array([5.0, 6.0]), ()) == [5.0, 6.0]


def test_the_capture_matches_x_by_value_leaf_by_leaf_and_by_its_stand_in():
    capture = AuxCapture(lambda t: (t["a"].sum(), t["a"].tolist()), lambda v: v)
    x = {"a": np.array([1.0, 2.0]), "b": np.array(0.5)}
    capture.begin(x)
    capture({"a": np.array([1.0, 2.5]), "b": np.array(0.5)})
    capture({"a": np.array([1.0, 2.0])})  # another number of leaves: not x
    assert not capture._found
    capture({"a": np.array([1.0, 2.0]), "b": np.array(0.5)})
    assert capture.take(x, ()) == [1.0, 2.0]
    flat = np.array([1.0, 2.0, 0.5])
    capture.begin(x)
    capture.stand_in(flat)
    assert capture._at_x(flat) and capture._at_x(flat.copy())
    assert not capture._at_x(np.array([1.0, 2.0, 0.75]))
    assert not capture._at_x(object())


def test_put_keeps_a_native_adapters_aux_at_x_or_at_its_stand_in():
    capture = AuxCapture(lambda x: (x.sum(), "evaluated"), lambda v: v)
    x, other = np.ones(2), np.zeros(2)
    capture.begin(x)
    capture.put(other, "elsewhere")
    capture.put(x, "at x")
    assert capture.take(x, ()) == "at x"
    capture.begin(x)
    capture.put(other, "elsewhere")
    assert capture.take(x, ()) == "evaluated"
    capture.native = True
    capture.begin(x)
    capture.stand_in(other)
    capture.put(other, "stand-in")
    assert capture.take(x, ()) == "stand-in"


def test_noting_stand_in_notes_each_calls_x():
    capture = AuxCapture(lambda x: (x.sum(), x.tolist()), lambda v: v)
    seen = []
    method = capture.noting_stand_in(lambda x, *rest: seen.append((x, rest)) or "result")
    x = np.ones(2)
    assert method(x, 1, 2) == "result" and seen == [(x, (1, 2))]
    assert capture._stand_in is x


def test_with_aux_gives_the_pair_and_forgets_it():
    capture = AuxCapture(lambda x, c: (c * x, {"c": c}), lambda v: v)
    y, aux = capture.with_aux(capture, np.ones(2), (3.0,))
    assert y.tolist() == [3.0, 3.0] and aux == {"c": 3.0}
    assert not capture.want and capture.raw is None


def test_prime_keeps_the_aux_of_an_evaluation_while_preparing():
    capture = AuxCapture(lambda x: (x.sum(), x.tolist()), lambda v: v)
    x = np.array([1.0, 2.0])
    capture.prime(x)
    capture(x)
    capture.begin(x)  # the call prepared for: the aux found while preparing stands
    assert capture._found and capture.take(x, ()) == [1.0, 2.0]
    capture.prime(x)
    capture(x)
    capture.begin(np.array([3.0, 4.0]))  # another x: forgotten
    assert not capture._found


def test_the_capture_of_a_function_and_the_primal_of_an_adapter():
    capture = AuxCapture(lambda x: (x, None), lambda v: v)
    assert capture_of(capture) is capture and capture_of(lambda x: x) is None
    value = np.ones(2)
    assert primal_of(get_adapter(di.AutoFiniteDiff()))(value) is value
    import torch

    tracked = torch.ones(2, requires_grad=True) * 2
    unwrapped = primal_of(get_adapter(di.AutoTorch()))(tracked)
    assert not unwrapped.requires_grad and unwrapped.tolist() == [2.0, 2.0]
    both = primal_of(get_adapter(di.SecondOrder(di.AutoTorch(), di.AutoAutograd())))
    assert not both(tracked).requires_grad


def test_f_not_returning_a_pair_is_refused_with_what_it_returned():
    for returned, given in (((1.0, 2.0, 3.0), "a tuple of 3"), (np.ones(2), "ndarray")):
        with pytest.raises(TypeError) as error:
            di.gradient(lambda x, r=returned: r, di.AutoFiniteDiff(), np.ones(2), has_aux=True)
        assert str(error.value) == (
            f"f: with has_aux=True, f must return a pair (y, aux); it returned {given}. "
            "Return (y, aux), or call without has_aux"
        )


@pytest.mark.parametrize("prepared", [False, True], ids=["unprepared", "prepared"])
def test_every_form_returns_the_aux_at_x_with_its_contexts(prepared):
    backend, x, c = di.AutoFiniteDiff(), np.array([1.0, 2.0]), 2.0
    t = (np.array([1.0, 0.0]),)
    ctx = (di.Constant(c),)

    def run(op, *args):
        prep = None
        if prepared:
            base = _PREPARED_BY.get(op, op)
            prep = getattr(di, "prepare_" + base)(
                f, backend, np.zeros(2), *args, *ctx, has_aux=True
            )
        return getattr(di, op)(f, backend, x, *args, *ctx, prep=prep, has_aux=True)

    grad, aux = run("gradient")
    _assert_aux_at(aux, x, c)
    np.testing.assert_allclose(grad, 3 * c * x**2, rtol=1e-6)
    (value, aux), grad = run("value_and_gradient")
    _assert_aux_at(aux, x, c)
    assert float(value) == 18.0
    (jvp,), aux = run("pushforward", t)
    _assert_aux_at(aux, x, c)
    assert float(jvp) == pytest.approx(6.0, rel=1e-6)
    (value, aux), (jvp,) = run("value_and_pushforward", t)
    _assert_aux_at(aux, x, c)
    (hvp,), aux = run("hvp", t)
    _assert_aux_at(aux, x, c)
    np.testing.assert_allclose(hvp, [12.0, 0.0], atol=1e-4)
    (grad, (hvp,)), aux = run("gradient_and_hvp", t)
    _assert_aux_at(aux, x, c)
    (value, aux), grad, hessian = run("value_gradient_and_hessian")
    _assert_aux_at(aux, x, c)
    assert float(value) == 18.0 and hessian.shape == (2, 2)


def test_a_prepared_call_at_a_new_x_returns_that_calls_aux():
    backend = di.AutoFiniteDiff()
    prep = di.prepare_jacobian(vector_f, backend, np.zeros(2), di.Constant(1.0), has_aux=True)
    for x in (np.array([1.0, 2.0]), np.array([3.0, 4.0])):
        jac, (seen, c) = di.jacobian(
            vector_f, backend, x, di.Constant(3.0), prep=prep, has_aux=True
        )
        assert seen.tolist() == x.tolist() and c == 3.0
        np.testing.assert_allclose(jac, np.diag(6 * x), rtol=1e-6)
    (value, (seen, c)), jac = di.value_and_jacobian(
        vector_f, backend, np.array([5.0, 6.0]), di.Constant(2.0), has_aux=True
    )
    assert seen.tolist() == [5.0, 6.0] and value.tolist() == [50.0, 72.0]
    (vjp,), (seen, c) = di.pullback(
        vector_f, backend, np.array([1.0, 1.0]), (np.ones(2),), di.Constant(4.0), has_aux=True
    )
    assert seen.tolist() == [1.0, 1.0] and c == 4.0


def _counts(backend, x, prepared):
    """Evaluations of f by a gradient without aux and with it (at 2x when prepared at x)."""

    def g(x):
        return (x**2).sum()

    plain = CountingFunction(g)
    with_aux = CountingFunction(lambda x: (g(x), x.copy()))
    at = 2 * x if prepared else x
    preps = (None, None)
    if prepared:
        preps = (
            di.prepare_gradient(plain, backend, x),
            di.prepare_gradient(with_aux, backend, x, has_aux=True),
        )
        plain.count = with_aux.count = 0
    di.gradient(plain, backend, at, prep=preps[0])
    _, aux = di.gradient(with_aux, backend, at, prep=preps[1], has_aux=True)
    assert aux.tolist() == at.tolist()
    return plain.count, with_aux.count


def test_aux_costs_an_evaluation_only_where_no_evaluation_at_x_is_made():
    x = np.array([0.5, 1.5, 2.5])
    central, forward = di.AutoFiniteDiff(), di.AutoFiniteDiff(method="forward")
    # forward differences evaluate f at x: its aux is that evaluation's
    plain, with_aux = _counts(forward, x, prepared=True)
    assert with_aux == plain
    # central differences do not: one evaluation more for a prepared call...
    plain, with_aux = _counts(central, x, prepared=True)
    assert with_aux == plain + 1
    # ...but none for an unprepared one, whose preparation evaluated f at x already
    plain, with_aux = _counts(central, x, prepared=False)
    assert with_aux == plain


def test_split_and_join_aux_are_inverses_for_every_form():
    gradient, hvp = OPERATORS["gradient"], OPERATORS["hvp"]
    assert split_aux(gradient, False, ("g", "aux")) == ("g", "aux")
    assert join_aux(gradient, False, "g", "aux") == ("g", "aux")
    assert join_aux(gradient, True, ("v", "g"), "aux") == (("v", "aux"), "g")
    assert split_aux(gradient, True, (("v", "aux"), "g")) == (("v", "g"), "aux")
    assert split_aux(hvp, True, (("g", "h"), "aux")) == (("g", "h"), "aux")
    assert join_aux(hvp, True, ("g", "h"), "aux") == (("g", "h"), "aux")


@pytest.mark.parametrize("op", ["value_and_gradient", "gradient_and_hvp"])
def test_a_valued_form_takes_its_aux_from_its_own_evaluation_at_x(op):
    x, backend = np.array([0.5, 1.5]), di.AutoFiniteDiff()
    seeds = ((np.array([1.0, 0.0]),),) if op == "gradient_and_hvp" else ()

    def g(x):
        return (x**3).sum()

    plain = CountingFunction(g)
    with_aux = CountingFunction(lambda x: (g(x), x.copy()))
    prepare = getattr(di, "prepare_" + _PREPARED_BY[op])
    prep_plain = prepare(plain, backend, x, *seeds)
    prep_aux = prepare(with_aux, backend, x, *seeds, has_aux=True)
    plain.count = with_aux.count = 0
    getattr(di, op)(plain, backend, 2 * x, *seeds, prep=prep_plain)
    result = getattr(di, op)(with_aux, backend, 2 * x, *seeds, prep=prep_aux, has_aux=True)
    aux = result[0][1] if op == "value_and_gradient" else result[1]
    assert aux.tolist() == (2 * x).tolist()
    assert with_aux.count == plain.count
