"""The preparation pipeline's own checks and routes, on numpy and finite differences (and torch
where another family is the point): what every call shares is refused by name before any
transform, the preparation records the call it was made for, and the public call serves
``out=``, ``y=`` and ``has_aux`` off the prepared fast path.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di

FD = di.AutoFiniteDiff()
X = np.array([1.0, 2.0])


def _sum_of_squares(x):
    return (x**2).sum()


def _square_into(y, x):
    y[:] = x**2


def _refusal(run):
    with pytest.raises(Exception) as info:
        run()
    return type(info.value), str(info.value)


# -- validate: what no transform owns, refused with the whole message ----------------------------


def test_what_every_call_shares_is_refused_by_name():
    f, x = _sum_of_squares, X
    cases = {
        "f": (
            lambda: di.gradient(3, FD, x),
            TypeError,
            "f: expected a callable; got int",
        ),
        "strict": (
            lambda: di.prepare_gradient(f, FD, x, strict=1),
            TypeError,
            "strict: expected True or False; got 1",
        ),
        "has_aux, unprepared": (
            lambda: di.gradient(f, FD, x, has_aux=1),
            TypeError,
            "has_aux: expected True or False; got 1",
        ),
        "has_aux, prepared": (
            lambda: di.prepare_gradient(f, FD, x, has_aux=None),
            TypeError,
            "has_aux: expected True or False; got None",
        ),
        "has_aux with y": (
            lambda: di.jacobian(_square_into, FD, x, y=np.zeros(2), has_aux=True),
            TypeError,
            "has_aux: two-argument functions f(y, x) write their output into y and return no "
            "aux; return (y, aux) from a one-argument f(x) instead",
        ),
    }
    for name, (run, kind, message) in cases.items():
        assert _refusal(run) == (kind, message), name


def test_an_output_buffer_y_is_one_array_of_x_family_and_written_only_where_the_backend_can():
    import torch

    x = X
    cases = {
        "a pytree": (
            {"a": np.zeros(2)},
            TypeError,
            "y: a two-argument f(y, x) writes into one array y; got a pytree dict. For a pytree "
            "output, return it from a one-argument f(x) instead",
        ),
        "another family": (
            torch.zeros(2, dtype=torch.float64),
            TypeError,
            "y: expected an output buffer of the same array family as x; got torch float64 "
            "array of shape (2,)",
        ),
        "a list": (
            [0.0, 0.0],
            TypeError,
            "y: expected an output buffer of the same array family as x; got list object",
        ),
    }
    for name, (y, kind, message) in cases.items():
        assert _refusal(lambda: di.jacobian(_square_into, FD, x, y=y)) == (kind, message), name
    y = np.zeros(2)
    assert _refusal(lambda: di.jacobian(_square_into, di.AutoAutograd(), x, y=y)) == (
        di.UnsupportedError,
        "y: AutoAutograd cannot differentiate two-argument functions f(y, x) that write into y "
        "(check_inplace(backend) is False); return the output from f instead",
    )
    assert not y.any()


def test_an_x_of_a_family_the_backend_does_not_differentiate_is_refused_naming_both():
    import torch

    x = torch.ones(2, dtype=torch.float64)
    assert _refusal(lambda: di.gradient(_sum_of_squares, di.AutoAutograd(), x)) == (
        TypeError,
        "x: AutoAutograd differentiates numpy or autograd arrays; got torch float64 array of "
        "shape (2,)",
    )


# -- the call off the fast path: prep of another type, out=, y=, has_aux ----------------------


def test_a_prep_that_is_not_a_preparation_is_refused_naming_the_operator():
    assert _refusal(lambda: di.gradient(_sum_of_squares, FD, X, prep="abc")) == (
        TypeError,
        "prep: expected the result of prepare_gradient(...); got str",
    )


def _cubes(x):
    return (x**3).sum()


def test_out_receives_the_derivatives_and_never_the_value():
    value, grad = di.value_and_gradient(_cubes, FD, X, out=(buffer := np.zeros(2)))
    assert grad is buffer
    np.testing.assert_allclose(value, 9.0)
    np.testing.assert_allclose(buffer, 3 * X**2, rtol=1e-6)
    buffers = (np.zeros(2), np.zeros((2, 2)))
    value, grad, hess = di.value_gradient_and_hessian(_cubes, FD, X, out=buffers)
    assert grad is buffers[0] and hess is buffers[1]
    np.testing.assert_allclose(value, 9.0)
    np.testing.assert_allclose(buffers[1], np.diag(6 * X), rtol=1e-4)
    # a pushforward of several tangents writes each into its own buffer, one of one into its own
    for tangents in ((X,), (X, 2 * X)):
        buffers = tuple(np.zeros(2) for _ in tangents)
        result = di.pushforward(np.sin, FD, X, tangents, out=buffers)
        assert isinstance(result, tuple) and all(r is b for r, b in zip(result, buffers))
        for b, t in zip(buffers, tangents):
            np.testing.assert_allclose(b, np.cos(X) * t, rtol=1e-6)


def test_y_receives_the_value_of_a_two_argument_f_with_or_without_out():
    y = np.zeros(2)
    J = di.jacobian(_square_into, FD, X, y=y)
    np.testing.assert_allclose(J, np.diag(2 * X), rtol=1e-6)
    np.testing.assert_allclose(y, X**2)
    y, out = np.zeros(2), np.zeros((2, 2))
    assert di.jacobian(_square_into, FD, X, y=y, out=out) is out
    np.testing.assert_allclose(out, np.diag(2 * X), rtol=1e-6)
    np.testing.assert_allclose(y, X**2)
    y, out = np.zeros(2), np.zeros((2, 2))
    value, J = di.value_and_jacobian(_square_into, FD, X, y=y, out=out)
    assert value is y and J is out
    np.testing.assert_allclose(y, X**2)
    y = np.zeros(2)
    products = di.pushforward(_square_into, FD, X, (X, 2 * X), y=y)
    assert isinstance(products, tuple) and len(products) == 2
    np.testing.assert_allclose(products[1], 4 * X**2, rtol=1e-6)
    np.testing.assert_allclose(y, X**2)
    y = np.zeros(2)
    value, products = di.value_and_pushforward(_square_into, FD, X, (X,), y=y)
    assert value is y and len(products) == 1
    np.testing.assert_allclose(products[0], 2 * X**2, rtol=1e-6)


def _with_aux(x):
    return (x**3).sum(), {"first": x[0]}


def test_out_with_has_aux_writes_the_derivatives_and_keeps_the_aux_beside_them():
    grad, aux = di.gradient(_with_aux, FD, X, has_aux=True, out=(buffer := np.zeros(2)))
    assert grad is buffer and aux == {"first": 1.0}
    np.testing.assert_allclose(buffer, 3 * X**2, rtol=1e-6)
    (value, aux), grad = di.value_and_gradient(
        _with_aux, FD, X, has_aux=True, out=(buffer := np.zeros(2))
    )
    assert grad is buffer and aux == {"first": 1.0}
    np.testing.assert_allclose(value, 9.0)
    np.testing.assert_allclose(buffer, 3 * X**2, rtol=1e-6)


# -- what f raises on the prepared path ----------------------------------------------------------


def _text_far_away(x):
    return "abc" if x[0] > 5 else (x**2).sum()


def _text_far_away_with_aux(x):
    return ("abc", 1) if x[0] > 5 else ((x**2).sum(), 2)


RETURNED_STR = "f: expected f to return an array or a number; it returned str object (f is {})"


@pytest.mark.parametrize("prepared", [True, False], ids=["prepared", "unprepared"])
def test_an_error_f_causes_is_explained_prepared_or_not_and_with_has_aux(prepared):
    for f, has_aux in ((_text_far_away, False), (_text_far_away_with_aux, True)):
        prep = di.prepare_gradient(f, FD, X, has_aux=has_aux) if prepared else None
        with pytest.raises(TypeError) as info:
            di.gradient(f, FD, 10 * X, prep=prep, has_aux=has_aux)
        assert str(info.value) == RETURNED_STR.format(f.__name__)
        assert isinstance(info.value.__cause__, Exception)  # the original error, chained


def test_an_error_f_raises_on_the_prepared_path_is_raised_as_it_is_after_one_more_evaluation():
    evaluations, error = [], ValueError("too far")

    def f(x):
        evaluations.append(x.copy())
        if x[0] > 5:
            raise error
        return (x**2).sum()

    prep = di.prepare_gradient(f, FD, X)
    evaluations.clear()
    with pytest.raises(ValueError) as info:
        di.gradient(f, FD, 10 * X, prep=prep)
    assert info.value is error
    # the failing evaluation, then the explanation's one look at f(x) (core/boundary.py)
    assert len(evaluations) == 2
    np.testing.assert_array_equal(evaluations[1], 10 * X)


# -- a pytree output met at the first call (autograd's jacobian learns it from each call) --------


def _tree_output(x):
    return {"twice": 2 * x, "sum": x.sum()}


def test_a_pytree_output_met_at_a_prepared_call_is_adopted_by_the_preparation():
    backend = di.AutoAutograd()
    prep = di.prepare_jacobian(_tree_output, backend, X)
    assert prep.ytree is None  # prepared without evaluating f
    for _ in range(2):  # the second call runs on the adopted plan
        J = di.jacobian(_tree_output, backend, X, prep=prep)
        assert J.keys() == {"twice", "sum"}
        np.testing.assert_allclose(J["twice"], 2 * np.eye(2))
        np.testing.assert_allclose(J["sum"], np.ones(2))
    assert prep.ytree is not None
    value, J = di.value_and_jacobian(_tree_output, backend, X, prep=prep)
    np.testing.assert_allclose(value["sum"], 3.0)


# -- build: seeds checked against the problem ------------------------------------------------


def test_seeds_of_another_dtype_kind_or_family_are_refused_with_the_whole_message():
    import torch

    own = "Convert it yourself: diffinterface does not change dtypes."
    family = "yourself (diffinterface does not guess which device or framework you meant)."
    f, x = np.sin, X
    cases = {
        "a float32 tangent": (
            lambda: di.pushforward(f, FD, x, (x.astype(np.float32),)),
            "tangents[0]: expected the dtype of x, float64 like x; got numpy float32 array of "
            f"shape (2,). {own}",
        ),
        "an integer tangent": (
            lambda: di.pushforward(f, FD, x, (x, np.arange(2))),
            "tangents[1]: expected a real floating-point array, float64 like x; got numpy int64 "
            f"array of shape (2,). {own}",
        ),
        "a torch tangent": (
            lambda: di.pushforward(f, FD, x, (torch.ones(2, dtype=torch.float64),)),
            "tangents[0]: expected a numpy array like x; got torch float64 array of shape (2,). "
            f"Convert it to x's family {family}",
        ),
        "a torch cotangent": (
            lambda: di.pullback(f, FD, x, (torch.ones(2, dtype=torch.float64),)),
            "cotangents[0]: expected a numpy array like the output y; got torch float64 array of "
            f"shape (2,). Convert it to the output y's family {family}",
        ),
        "a float32 cotangent": (
            lambda: di.pullback(f, FD, x, (x.astype(np.float32),)),
            "cotangents[0]: expected the dtype of the output y, float64 like the output y; got "
            f"numpy float32 array of shape (2,). {own}",
        ),
        "no cotangents": (
            lambda: di.pullback(f, FD, x, ()),
            "cotangents: expected a non-empty tuple of arrays shaped like the output y (a batch; "
            "for one, (cotangent,)); got tuple",
        ),
        "one cotangent, not in a tuple": (
            lambda: di.pullback(f, FD, x, x),
            "cotangents: expected a non-empty tuple of arrays shaped like the output y (a batch; "
            "for one, (cotangent,)); got numpy float64 array of shape (2,)",
        ),
        "a list of tangents": (
            lambda: di.pushforward(f, FD, x, [x]),
            "tangents: expected a non-empty tuple of arrays shaped like x (a batch; for one, "
            "(tangent,)); got list",
        ),
    }
    for name, (run, message) in cases.items():
        assert _refusal(run) == (TypeError, message), name


def _pair_far_away(x):
    return ((1, 2), 1) if x[0] > 5 else ((x**2).sum(), 2)


def test_a_has_aux_f_whose_y_is_a_pair_is_not_told_to_pass_has_aux():
    prep = di.prepare_gradient(_pair_far_away, FD, X, has_aux=True)
    with pytest.raises(TypeError) as info:
        di.gradient(_pair_far_away, FD, 10 * X, prep=prep, has_aux=True)
    assert str(info.value) == (
        "f: expected f to return an array or a number; it returned tuple object "
        "(f is _pair_far_away)"
    )


def _growing_tree(x):
    return {"a": x} if x[0] < 5 else {"a": x, "b": x}


def test_a_pytree_output_is_not_blamed_when_a_prepared_jacobian_fails():
    prep = di.prepare_jacobian(_growing_tree, FD, X)
    with pytest.raises(ValueError, match="f: returned a tree of another structure") as info:
        di.jacobian(_growing_tree, FD, 10 * X, prep=prep)
    assert "expected f to return an array" not in str(info.value)
    assert info.value.__cause__ is None  # the error as f's tree made it, not an explanation


def test_the_operators_of_each_order_in_the_table_order():
    from diffinterface.core.operator_table import OPERATORS, operators_of_order

    for order in (1, 2):
        names = operators_of_order(order)
        assert names == tuple(name for name in OPERATORS if OPERATORS[name].order == order)
        assert names and all(OPERATORS[name].order == order for name in names)
    assert set(operators_of_order(1)) | set(operators_of_order(2)) == set(OPERATORS)


def test_out_sharing_memory_with_x_is_refused_and_a_pytree_output_fills_a_tree_of_buffers():
    x = X.copy()
    assert _refusal(lambda: di.gradient(_cubes, FD, x, out=x)) == (
        ValueError,
        "out: the buffer shares memory with x, which diffinterface never modifies; pass a "
        "separate buffer",
    )
    np.testing.assert_array_equal(x, X)
    buffers = {"twice": np.zeros((2, 2)), "sum": np.zeros(2)}
    J = di.jacobian(_tree_output, FD, X, out=buffers)
    assert J["twice"] is buffers["twice"] and J["sum"] is buffers["sum"]
    np.testing.assert_allclose(buffers["twice"], 2 * np.eye(2), rtol=1e-6)
    np.testing.assert_allclose(buffers["sum"], np.ones(2), rtol=1e-6)


def test_an_error_f_causes_in_a_prepared_call_with_out_is_explained():
    prep = di.prepare_gradient(_text_far_away, FD, X)
    with pytest.raises(TypeError) as info:
        di.gradient(_text_far_away, FD, 10 * X, prep=prep, out=np.zeros(2))
    assert str(info.value) == RETURNED_STR.format("_text_far_away")
    assert isinstance(info.value.__cause__, Exception)


def test_an_unprepared_call_learns_a_pytree_output_its_preparation_did_not_evaluate():
    J = di.jacobian(_tree_output, di.AutoAutograd(), X)
    assert J.keys() == {"twice", "sum"}
    np.testing.assert_allclose(J["twice"], 2 * np.eye(2))
    np.testing.assert_allclose(J["sum"], np.ones(2))


def test_a_same_point_preparation_is_the_adapters_own():
    evaluations = []

    def f(x):
        evaluations.append(1)
        return di.array_namespace(x).sin(x)

    backend, cotangents = di.AutoAutograd(), (np.ones(2),)
    prep = di.prepare_pullback_same_point(f, backend, X, cotangents)
    evaluations.clear()
    for c in (1.0, 2.0):
        (product,) = di.pullback(f, backend, X, (c * np.ones(2),), prep=prep)
        np.testing.assert_allclose(product, c * np.cos(X))
    # autograd's same-point preparation recorded f's pass once, at preparation
    assert evaluations == []


def _tree_growing_away_from_x(x):
    return {"a": x} if x[0] == X[0] else {"a": x, "b": x}


def test_an_error_f_causes_while_an_unprepared_call_is_prepared_is_explained_the_same_way():
    assert _refusal(lambda: di.gradient(_pair_far_away, FD, 10 * X, has_aux=True)) == (
        TypeError,
        "f: expected f to return an array or a number; it returned tuple object "
        "(f is _pair_far_away)",
    )
    # a tree of arrays is what a jacobian's f may return: the error is not blamed on it
    with pytest.raises(ValueError) as info:
        di.jacobian(_tree_growing_away_from_x, FD, X)
    assert "expected f to return an array" not in str(info.value)
    assert info.value.__cause__ is None


def test_a_preparation_tells_the_output_it_learned():
    prep = di.prepare_jacobian(lambda x: x[:1] ** 2, FD, X.astype(np.float32))
    assert prep.spec.shape == (1,) and prep.spec.dtype == "float32"


def test_an_integer_x_is_refused_with_the_way_around():
    assert _refusal(lambda: di.gradient(_cubes, FD, np.arange(2))) == (
        TypeError,
        "x: expected a real floating-point array (float32 or float64); got numpy int64 array of "
        "shape (2,). Convert an integer x yourself (x.astype(float)): diffinterface does not "
        "change dtypes.",
    )


def test_a_traced_x_is_refused_naming_the_backend_that_needs_its_values():
    import torch

    def through(backend, operator=di.gradient):
        return lambda: torch.func.grad(lambda x: operator(_sum_of_squares, backend, x).sum())(
            torch.ones(2, dtype=torch.float64)
        )

    needs = (
        "AutoFiniteDiff takes its steps on the host, on x's values (on JAX arrays it computes "
        "in jax.numpy), and x is a traced torch value (inside a torch.func transform (vmap, "
        "grad, jacrev, jacfwd)), which has none. Inside the transform, differentiate with its "
        "framework's own backend"
    )
    kind, message = _refusal(through(FD))
    assert kind is TypeError and message.startswith(f"x: {needs}")
    kind, message = _refusal(through(di.SecondOrder(di.AutoTorch(), FD), di.hessian))
    assert kind is TypeError and message.startswith(f"x: SecondOrder cannot run here: {needs}")
    # a backend whose framework traces x needs no values
    np.testing.assert_allclose(through(di.AutoTorch())().numpy(), [2.0, 2.0])


def test_a_preparation_records_strict_and_has_aux_and_shows_them():
    backend = di.AutoFiniteDiff()
    prep = di.prepare_gradient(_with_aux, backend, X, has_aux=True)
    assert prep.strict is True and prep.has_aux is True and prep.operator == "gradient"
    assert repr(prep) == f"<gradient preparation for {backend!r} (has_aux)>"
    prep = di.prepare_gradient(_cubes, backend, X, strict=False)
    assert prep.strict is False and prep.has_aux is False
    assert repr(prep) == f"<gradient preparation for {backend!r} (strict=False)>"


def test_a_preparation_shows_the_batch_size_of_its_sweeps():
    backend = di.AutoFiniteDiff()
    prep = di.prepare_jacobian(np.sin, backend, X)
    size = prep.impl.batch_size
    assert isinstance(size, int) and size >= 1
    assert repr(prep) == f"<jacobian preparation for {backend!r}, batch_size={size}>"


_RAISING = [
    (di.AutoFiniteDiff(), "gradient", ValueError),
    (di.AutoFiniteDiff(), "gradient", TypeError),
    (di.AutoAutograd(), "jacobian", ValueError),
    (di.AutoAutograd(), "gradient", ValueError),
    (di.AutoAutograd(), "gradient", TypeError),
]


@pytest.mark.parametrize("backend, operator, kind", _RAISING)
def test_an_error_f_raises_at_a_prepared_call_costs_one_more_evaluation(backend, operator, kind):
    # only a TypeError from autograd's jacobian may be a pytree output met late, and is looked into
    evaluations, error = [], kind("too far")

    def f(x):
        evaluations.append(1)
        if x[0] > 5:
            raise error
        return (x**2).sum() if operator == "gradient" else x**2

    prep = getattr(di, f"prepare_{operator}")(f, backend, X)
    evaluations.clear()
    with pytest.raises(kind) as info:
        getattr(di, operator)(f, backend, 10 * X, prep=prep)
    assert info.value is error
    assert len(evaluations) == 2  # the failing call, and the explanation's look at f(x)


def test_a_late_pytree_output_that_is_none_is_explained_not_retried():
    backend = di.AutoAutograd()
    assert _refusal(lambda: di.jacobian(_text_far_away, backend, 10 * X)) == (
        TypeError,
        RETURNED_STR.format("_text_far_away"),
    )
    kind, message = _refusal(lambda: di.jacobian(lambda x: float(x[0]) * x, backend, X))
    assert kind is di.TracedArrayError and "autograd ArrayBox" in message
