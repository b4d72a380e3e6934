"""The plans of a pytree x (core/pytree.py, core/tree_input.py) and of a pytree output
(core/output_tree.py): what they accept and refuse, by name; how they ravel, unravel and cast;
the flat functions they cache. NumPy and torch only."""

from __future__ import annotations

import collections

import numpy as np
import optree
import pytest

import diffinterface as di
from diffinterface.core import pytree
from diffinterface.core.output_tree import output_plan
from diffinterface.core.pytree import TreePlan, cached_function, write_tree_out


def _loss(t):
    return (t["a"] ** 2).sum()


# -- the plan of a pytree x ----------------------------------------------------------------------


def test_a_tree_plan_refuses_what_is_no_tree_of_float_arrays_naming_the_leaf():
    with pytest.raises(TypeError) as empty:
        TreePlan({})
    assert str(empty.value) == (
        "x: expected a float, an array or a pytree of arrays; got dict with no array leaves"
    )
    with pytest.raises(TypeError) as nested:
        TreePlan({"a": np.ones(2), "b": {"c": "text"}})
    assert str(nested.value) == (
        "x['b']['c']: expected a float, an array or a pytree of arrays; got str object"
    )
    with pytest.raises(TypeError) as root:
        TreePlan("text", name="tree")
    assert (
        str(root.value) == "tree: expected a float, an array or a pytree of arrays; got str object"
    )
    with pytest.raises(TypeError, match=r"^tree\['n'\]: expected a real floating-point array"):
        di.flatten({"n": np.arange(2)})


def test_a_tree_plan_takes_one_family_and_python_floats_join_it():
    import torch

    with pytest.raises(TypeError) as mixed:
        TreePlan({"a": np.ones(2), "b": torch.ones(2)})
    assert str(mixed.value) == (
        "x: expected every leaf in one array family; got leaves of ['numpy', 'torch']"
    )
    plan = TreePlan({"k": 2.0, "w": torch.ones(2, dtype=torch.float64)})
    assert plan.family == "torch"
    flat = plan.ravel({"k": 3.0, "w": torch.tensor([4.0, 5.0], dtype=torch.float64)})
    assert isinstance(flat, torch.Tensor) and flat.tolist() == [3.0, 4.0, 5.0]
    leaves = plan.array_leaves({"k": 3.0, "w": torch.zeros(2, dtype=torch.float64)})
    assert isinstance(leaves[0], torch.Tensor) and leaves[0].shape == () and float(leaves[0]) == 3.0
    numbers = TreePlan({"k": 2.0, "j": 1.0})
    assert numbers.family == "numpy" and numbers.like is None
    assert numbers.ravel({"k": 2.0, "j": 1.0}).tolist() == [1.0, 2.0]


def test_a_gradient_at_a_tree_of_python_floats():
    g = di.gradient(lambda t: t["a"] ** 2 * t["b"], di.AutoFiniteDiff(), {"a": 3.0, "b": 2.0})
    assert set(g) == {"a", "b"}
    assert np.isclose(float(g["a"]), 12.0) and np.isclose(float(g["b"]), 9.0)


def test_complex_leaves_are_checked_not_raveled():
    tree = {"z": np.ones(2, dtype=np.complex128)}
    with pytest.raises(TypeError, match=r"x\['z'\]: expected a real floating-point array"):
        TreePlan(tree)
    plan = TreePlan(tree, complex_leaves=True)
    assert plan.dtype is None and plan.dtypes == ("complex128",)


@pytest.mark.parametrize(
    ("dtypes", "promoted"),
    [
        (("float32", "float32"), "float32"),
        (("float32", "float64"), "float64"),
        (("float64", "float32"), "float64"),
        (("float16", "float32"), "float32"),
        (("float16", "float16"), "float16"),
    ],
)
def test_the_flat_dtype_is_the_widest_leaf_dtype(dtypes, promoted):
    plan = TreePlan([np.ones(1, dtype=d) for d in dtypes])
    assert plan.dtype == promoted
    assert plan.ravel([np.ones(1, dtype=d) for d in dtypes]).dtype == np.dtype(promoted)
    assert plan.mixed == (len(set(dtypes)) > 1)


def test_float16_and_bfloat16_meet_in_float32():
    import torch

    plan = TreePlan([torch.ones(1, dtype=torch.float16), torch.ones(1, dtype=torch.bfloat16)])
    assert plan.dtype == "float32"
    assert plan.dtypes == ("float16", "bfloat16") and plan.mixed
    assert TreePlan([torch.ones(1, dtype=torch.bfloat16)] * 2).dtype == "bfloat16"


def test_unravel_casts_each_leaf_back_and_keeps_a_complex_flat_array_complex():
    plan = TreePlan({"a": np.ones(2, dtype=np.float32), "b": np.ones((1, 1))})
    back = plan.unravel(np.array([1.0, 2.0, 3.0]))
    assert back["a"].dtype == np.float32 and back["a"].tolist() == [1.0, 2.0]
    assert back["b"].dtype == np.float64 and back["b"].shape == (1, 1)
    z = plan.unravel(np.array([1 + 1j, 2, 3 - 2j]))
    assert z["a"].dtype == np.complex64 and z["a"][0] == 1 + 1j
    assert z["b"].dtype == np.complex128 and z["b"][0, 0] == 3 - 2j
    one = TreePlan({"a": np.ones(2), "b": np.ones(1)})
    assert one.unravel(np.array([1 + 1j, 2, 3])).get("a").dtype == np.complex128


def test_unravel_last_and_square_follow_jax_layouts_and_promote_blocks():
    plan = TreePlan({"a": np.ones(2, dtype=np.float32), "b": np.ones((1, 3))})
    jac = plan.unravel_last(np.arange(10.0).reshape(2, 5), (2,))
    assert jac["a"].shape == (2, 2) and jac["a"].dtype == np.float32
    assert jac["b"].shape == (2, 1, 3) and jac["b"].dtype == np.float64
    assert jac["b"][1].ravel().tolist() == [7.0, 8.0, 9.0]
    h = plan.unravel_square(np.arange(25.0).reshape(5, 5))
    assert h["a"]["a"].shape == (2, 2) and h["a"]["a"].dtype == np.float32
    assert h["a"]["b"].shape == (2, 1, 3) and h["a"]["b"].dtype == np.float64
    assert h["b"]["a"].shape == (1, 3, 2) and h["b"]["a"].dtype == np.float64
    assert h["b"]["a"][0, 2].tolist() == [20.0, 21.0]
    assert h["b"]["b"].shape == (1, 3, 1, 3)


def test_a_plan_fits_trees_of_its_structure_and_leaf_kinds():
    plan = TreePlan({"a": np.ones(2), "s": np.array(1.0)})
    assert plan.fits({"a": np.zeros(2), "s": np.array(3.0)})
    assert plan.fits({"a": np.zeros(2), "s": np.float64(3.0)})  # a NumPy scalar for a 0-d array
    assert plan.fits({"a": np.zeros(2), "s": 3.0})
    assert not plan.fits({"a": np.zeros(3), "s": 1.0})
    assert not plan.fits({"a": np.zeros(2, dtype=np.float32), "s": 1.0})
    assert not plan.fits({"a": np.zeros(2), "s": np.float32(1.0)})
    assert not plan.fits({"a": np.zeros(2), "s": "one"})
    assert not plan.fits({"a": np.zeros(2), "t": 1.0})
    assert not plan.fits([np.zeros(2), 1.0])
    with pytest.raises(ValueError) as error:
        plan.check({"a": np.zeros(3), "s": 1.0}, "tangents[1]")
    assert str(error.value) == (
        "tangents[1]: expected a tree shaped like x; leaf ['a']: prepared numpy.ndarray float64 "
        "(2,), given numpy.ndarray float64 (3,)"
    )


def test_flat_functions_are_cached_per_function_plan_and_arity(monkeypatch):
    monkeypatch.setattr(pytree, "_FLAT_FUNCTIONS", collections.OrderedDict())
    plan, other = TreePlan({"a": np.ones(2)}), TreePlan({"a": np.ones(3)})
    flat_f = plan.flat_function(_loss, two_argument=False)
    assert plan.flat_function(_loss, two_argument=False) is flat_f
    assert TreePlan({"a": np.zeros(2)}).flat_function(_loss, two_argument=False) is flat_f
    assert other.flat_function(_loss, two_argument=False) is not flat_f
    assert flat_f(np.array([1.0, 2.0])) == 5.0
    assert other.flat_function(_loss, two_argument=False)(np.array([1.0, 1.0, 2.0])) == 6.0

    def into(y, t):
        y[...] = 2 * t["a"]

    two = plan.flat_function(into, two_argument=True)
    y = np.zeros(2)
    two(y, np.array([1.0, 3.0]))
    assert y.tolist() == [2.0, 6.0]


def test_the_cache_keeps_the_most_recently_used_functions(monkeypatch):
    monkeypatch.setattr(pytree, "_FLAT_FUNCTIONS", collections.OrderedDict())
    size = pytree._FLAT_FUNCTIONS_SIZE
    first = cached_function("first", object)
    for i in range(size - 1):
        cached_function(i, object)
    assert cached_function("first", object) is first  # full, not over: kept, and now the newest
    cached_function("one more", object)
    assert len(pytree._FLAT_FUNCTIONS) == size
    assert cached_function("first", object) is first  # the oldest (0) went instead
    assert 0 not in pytree._FLAT_FUNCTIONS and 1 in pytree._FLAT_FUNCTIONS


def test_an_unhashable_function_gets_a_fresh_flat_function_and_its_gradient():
    class Loss:
        __hash__ = None

        def __call__(self, t):
            return (t["a"] ** 2).sum()

    f = Loss()
    plan = TreePlan({"a": np.ones(2)})
    assert plan.flat_function(f, False) is not plan.flat_function(f, False)
    g = di.gradient(f, di.AutoFiniteDiff(), {"a": np.array([1.0, 2.0])})
    np.testing.assert_allclose(g["a"], [2.0, 4.0], rtol=1e-6)


def test_tree_out_buffers_are_written_leaf_by_leaf_and_their_structure_checked():
    result = {"a": np.array([1.0, 2.0]), "b": (np.array(3.0),)}
    out = {"a": np.zeros(2), "b": (np.zeros(()),)}
    assert write_tree_out(out, result) is out
    assert out["a"].tolist() == [1.0, 2.0] and float(out["b"][0]) == 3.0
    with pytest.raises(ValueError) as error:
        write_tree_out({"a": np.zeros(2)}, result, "grad_out")
    assert str(error.value).startswith(
        "grad_out: expected buffers in a tree shaped like the result, PyTreeSpec("
    )
    with pytest.raises(ValueError, match=r"^grad_out\['a'\]"):
        write_tree_out({"a": np.zeros(3), "b": (np.zeros(()),)}, result, "grad_out")
    with pytest.raises(ValueError, match=r"^out\['a'\]: expected a buffer like the result"):
        write_tree_out({"a": np.zeros(3), "b": (np.zeros(()),)}, result)
    array_out = np.zeros(2)
    assert write_tree_out(array_out, np.array([4.0, 5.0])) is array_out
    assert array_out.tolist() == [4.0, 5.0]
    for name, args in (("out", ()), ("grad_out", ("grad_out",))):
        with pytest.raises(ValueError) as error:
            write_tree_out(np.zeros(3), np.ones(2), *args)
        assert str(error.value).startswith(name + ": expected a buffer like the result, a numpy")


# -- a pytree x at the operators (core/tree_input.py) --------------------------------------------


def test_a_tree_x_is_refused_by_a_backend_of_another_family_and_by_scalar_operators():
    import torch

    with pytest.raises(TypeError) as family:
        di.gradient(_loss, di.AutoAutograd(), {"a": torch.ones(2)})
    assert str(family.value) == (
        "x: AutoAutograd differentiates numpy or autograd arrays; got a tree of torch arrays"
    )
    with pytest.raises(ValueError) as scalar:
        di.derivative(lambda t: t["a"] * t["b"], di.AutoFiniteDiff(), {"a": 1.0, "b": 2.0})
    assert str(scalar.value) == (
        "x: derivative expects a scalar x (shape ()); got a tree of 2 leaves"
    )


@pytest.mark.parametrize("op", [di.pushforward, di.value_and_pushforward])
def test_tangents_of_a_tree_x_that_are_no_tuple_of_trees_are_named(op):
    x = {"a": np.ones(2)}

    def f(t):
        return t["a"] ** 2

    for tangents, given in (({"a": np.ones(2)}, "dict"), ((), "tuple"), ([x], "list")):
        with pytest.raises(TypeError) as error:
            op(f, di.AutoFiniteDiff(), x, tangents)
        assert str(error.value) == (
            "tangents: expected a non-empty tuple of trees shaped like x (a batch); got " + given
        )
    with pytest.raises(ValueError, match=r"^tangents\[1\]: expected a tree shaped like x; leaf"):
        op(f, di.AutoFiniteDiff(), x, (x, {"a": np.ones(3)}))


def test_a_mixed_dtype_tree_gets_each_leafs_own_step():
    # a float32 leaf beside a float64 one: its derivative is as accurate as float32 allows, which a
    # step sized for float64 would not give after the cast back
    x = {"a": np.array([1.5, 2.0], dtype=np.float32), "b": np.array([0.5])}
    g = di.gradient(
        lambda t: (t["a"].astype(np.float64) ** 2).sum() + (t["b"] ** 3).sum(),
        di.AutoFiniteDiff(),
        x,
    )
    assert g["a"].dtype == np.float32 and g["b"].dtype == np.float64
    np.testing.assert_allclose(g["a"], [3.0, 4.0], rtol=1e-3)
    np.testing.assert_allclose(g["b"], [0.75], rtol=1e-8)


# -- a pytree output (core/output_tree.py) -------------------------------------------------------


def test_an_output_plan_names_a_leaf_that_is_no_float_array():
    with pytest.raises(TypeError) as error:
        output_plan({"y": np.ones(2), "n": np.arange(2)}, "numpy")
    assert str(error.value).startswith(
        "f: expected f to return an array, a number or a pytree of real floating-point arrays; "
        "its output['n'] is "
    )
    with pytest.raises(TypeError, match=r"its output\['s'\] is str"):
        output_plan({"y": np.ones(2), "s": "text"}, "numpy")


def test_an_output_plan_is_made_for_trees_of_arrays_only():
    assert output_plan(np.ones(2), "numpy") is None
    assert output_plan([1.0, 2], "numpy") is None  # numbers only: an output that forgot np.array
    assert output_plan([], "numpy") is None
    assert output_plan("text", "numpy") is None
    plan = output_plan({"y": np.ones((2, 1), dtype=np.float32), "c": 1.0}, "numpy")
    assert plan.shapes == ((), (2, 1)) and plan.dtypes == ("float64", "float32")
    assert plan.size == 3 and plan.dtype == "float64"
    assert repr(plan) == "a tree of 2 leaves {['c']: float64 (), ['y']: float32 (2, 1)}"
    single = output_plan((np.ones(2, dtype=np.float32),), "numpy")
    assert single.dtype == "float32" and single.size == 2


def test_an_output_plan_ravels_outputs_and_cotangents_and_unravels_results():
    plan = output_plan({"y": np.ones(2, dtype=np.float32), "c": 1.0}, "numpy")
    flat = plan.ravel_output({"y": np.array([2.0, 3.0], dtype=np.float32), "c": 4.0})
    assert flat.dtype == np.float64 and flat.tolist() == [4.0, 2.0, 3.0]
    z = plan.ravel_output({"y": np.array([1j, 2], dtype=np.complex64), "c": 1.0})
    assert z.dtype == np.complex128 and z[1] == 1j
    cotangent = plan.ravel({"y": np.array([5.0, 6.0], dtype=np.float32), "c": 7.0})
    assert cotangent.dtype == np.float64 and cotangent.tolist() == [7.0, 5.0, 6.0]
    narrow = output_plan([np.ones(2, dtype=np.float32), np.ones(1, dtype=np.float32)], "numpy")
    flat = narrow.ravel([np.ones(2, dtype=np.float32), np.full(1, 3.0, dtype=np.float32)])
    assert flat.dtype == np.float32 and flat.tolist() == [1.0, 1.0, 3.0]
    back = plan.unravel(np.array([1.0, 2.0, 3.0]))
    assert back["y"].dtype == np.float32 and back["y"].tolist() == [2.0, 3.0]
    assert back["c"].dtype == np.float64 and back["c"].shape == ()
    one = output_plan([np.ones(2)], "numpy")
    assert one.ravel_output([np.array([1.0, 2.0])]).tolist() == [1.0, 2.0]
    jac = plan.unravel_first(np.arange(6.0).reshape(3, 2), None)
    assert jac["c"].shape == (2,) and jac["y"].shape == (2, 2) and jac["y"].dtype == np.float64
    x_plan = TreePlan({"p": np.ones(1, dtype=np.float32), "q": np.ones(2, dtype=np.float32)})
    tree_jac = plan.unravel_first(
        {"p": np.ones((3, 1), dtype=np.float32), "q": np.ones((3, 2), dtype=np.float32)}, x_plan
    )
    assert tree_jac["y"]["q"].shape == (2, 2) and tree_jac["y"]["q"].dtype == np.float32
    assert tree_jac["c"]["p"].shape == (1,) and tree_jac["c"]["p"].dtype == np.float64


def test_an_output_plan_fits_and_checks_cotangents():
    plan = output_plan({"y": np.ones(2, dtype=np.float32), "c": np.array(1.0)}, "numpy")
    good = {"y": np.zeros(2, dtype=np.float32), "c": 1.0}
    assert plan.fits(good) and plan.fits({"y": np.zeros(2, dtype=np.float32), "c": np.zeros(())})
    plan.check(good, "cotangents[0]")
    assert not plan.fits({"y": np.zeros(2), "c": 1.0})
    assert not plan.fits({"y": np.zeros(3, dtype=np.float32), "c": 1.0})
    assert not plan.fits({"y": np.zeros(2, dtype=np.float32)})
    assert not plan.fits({"y": np.zeros(2, dtype=np.float32), "c": 1.0, "d": 1.0})
    with pytest.raises(ValueError) as structure:
        plan.check({"y": np.zeros(2, dtype=np.float32)}, "cotangents[0]")
    assert str(structure.value) == (
        "cotangents[0]: expected a tree shaped like the output y = f(x), "
        "PyTreeSpec({'c': *, 'y': *}); got PyTreeSpec({'y': *})"
    )
    with pytest.raises(ValueError) as shape:
        plan.check({"y": np.zeros(3, dtype=np.float32), "c": 1.0}, "cotangents[0]")
    assert str(shape.value).startswith(
        "cotangents[0]['y']: expected an array of shape (2,) like y['y']; got "
    )
    with pytest.raises(TypeError) as dtype:
        plan.check({"y": np.zeros(2), "c": 1.0}, "cotangents[0]")
    assert str(dtype.value).startswith(
        "cotangents[0]['y']: expected dtype float32 like y['y']; got "
    )
    assert str(dtype.value).endswith("Convert it yourself: diffinterface does not change dtypes.")
    import torch

    with pytest.raises(TypeError) as family:
        plan.check({"y": torch.zeros(2), "c": 1.0}, "cotangents[0]")
    assert str(family.value).startswith(
        "cotangents[0]['y']: expected a numpy array like x; got torch"
    )


def test_a_tree_output_with_a_python_float_leaf_at_the_operators():
    def f(x):
        return {"double": 2 * x, "first": float(x[0])}

    x = np.array([1.0, 2.0])
    jac = di.jacobian(f, di.AutoFiniteDiff(), x)
    np.testing.assert_allclose(jac["double"], 2 * np.eye(2), atol=1e-6)
    assert jac["first"].shape == (2,)
    (g,) = di.pullback(
        lambda x: {"double": 2 * x, "total": x.sum()},
        di.AutoFiniteDiff(),
        x,
        ({"double": np.array([1.0, 0.0]), "total": 1.0},),
    )
    np.testing.assert_allclose(g, [3.0, 1.0], rtol=1e-6)
    with pytest.raises(
        ValueError, match=r"^cotangents\[0\]: expected a tree shaped like the output"
    ):
        di.pullback(
            lambda x: {"double": 2 * x, "total": x.sum()},
            di.AutoFiniteDiff(),
            x,
            ({"double": np.array([1.0, 0.0])},),
        )


def test_a_tree_output_with_contexts_at_a_tree_x():
    def f(t, c):
        return {"scaled": c * t["a"], "total": (t["a"] * t["b"]).sum()}

    x = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    jac = di.jacobian(f, di.AutoFiniteDiff(), x, di.Constant(3.0))
    np.testing.assert_allclose(jac["scaled"]["a"], 3 * np.eye(2), atol=1e-6)
    np.testing.assert_allclose(jac["scaled"]["b"], np.zeros((2, 2)), atol=1e-6)
    np.testing.assert_allclose(jac["total"]["a"], [3.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(jac["total"]["b"], [1.0, 2.0], rtol=1e-6)
    (g,) = di.pullback(
        f,
        di.AutoFiniteDiff(),
        x,
        ({"scaled": np.array([1.0, 0.0]), "total": 1.0},),
        di.Constant(2.0),
    )
    np.testing.assert_allclose(g["a"], [5.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(g["b"], [1.0, 2.0], rtol=1e-6)


def test_a_tree_output_needs_a_one_argument_f():
    plan = output_plan({"y": np.ones(2)}, "numpy")
    with pytest.raises(TypeError) as error:
        plan.flat_output(lambda y, x: None, two_argument=True)
    assert str(error.value) == (
        "y: a two-argument f(y, x) writes an array y; a pytree output needs f(x) returning it"
    )


@pytest.mark.parametrize("backend", [di.AutoFiniteDiff(), di.AutoTorch()], ids=["fd", "torch"])
def test_a_tree_output_with_a_leaf_that_is_no_float_array_is_refused_naming_the_leaf(backend):
    def f(x):
        return {"double": 2 * x, "count": np.arange(2)}

    with pytest.raises(TypeError) as error:
        di.jacobian(f, backend, np.ones(2))
    assert str(error.value) == (
        "f: expected f to return an array, a number or a pytree of real floating-point arrays; "
        "its output['count'] is numpy int64 array of shape (2,)"
    )


@pytest.mark.parametrize("backend", [di.AutoFiniteDiff(), di.AutoTorch()], ids=["fd", "torch"])
def test_a_prepared_tree_output_whose_keys_change_is_refused_not_relabelled(backend):
    # unflattened into the prepared structure, the derivatives would come back under the old key
    key = ["a"]

    def f(x):
        return {key[0]: 2 * x}

    x = np.array([1.0, 2.0])
    prep = di.prepare_jacobian(f, backend, x)
    np.testing.assert_allclose(di.jacobian(f, backend, x + 1, prep=prep)["a"], 2 * np.eye(2))
    key[0] = "b"
    with pytest.raises(ValueError) as error:
        di.jacobian(f, backend, x + 1, prep=prep)
    assert "f: returned a tree of another structure than at the preparation: expected " in str(
        error.value
    )
    structure = optree.tree_structure
    assert f"{structure({'a': 0})!r}; got {structure({'b': 0})!r}" in str(error.value)


def test_autograd_learns_a_jacobians_output_from_each_call_at_no_extra_evaluation():
    # autograd's jacobian learns f's output from the call itself: preparing it evaluates nothing,
    # and a tree output is found at the first call
    from diffinterface.testing import CountingFunction

    backend, x = di.AutoAutograd(), np.array([1.0, 2.0])
    f = CountingFunction(lambda x: 2 * x)
    np.testing.assert_allclose(di.jacobian(f, backend, x), 2 * np.eye(2))
    assert f.count == 1
    f.count = 0
    prep = di.prepare_jacobian(f, backend, x)
    assert f.count == 0
    di.jacobian(f, backend, x, prep=prep)
    assert f.count == 1
    tree_f = CountingFunction(lambda x: {"double": 2 * x, "total": (x**2).sum()})
    prep = di.prepare_jacobian(tree_f, backend, x)
    assert tree_f.count == 0
    for jac in (di.jacobian(tree_f, backend, x), di.jacobian(tree_f, backend, x, prep=prep)):
        np.testing.assert_allclose(jac["double"], 2 * np.eye(2))
        np.testing.assert_allclose(jac["total"], [2.0, 4.0])


def test_a_torch_output_tree_with_a_python_float_leaf():
    import torch

    plan = output_plan({"y": torch.ones(2, dtype=torch.float64), "c": 1.0}, "torch")
    flat = plan.ravel_output({"y": torch.tensor([4.0, 5.0], dtype=torch.float64), "c": 3.0})
    assert isinstance(flat, torch.Tensor) and flat.tolist() == [3.0, 4.0, 5.0]
    jac = di.jacobian(
        lambda x: {"y": 2 * x, "c": 1.0}, di.AutoTorch(), torch.ones(2, dtype=torch.float64)
    )
    assert jac["y"].tolist() == [[2.0, 0.0], [0.0, 2.0]] and jac["c"].tolist() == [0.0, 0.0]


def test_a_tree_outputs_failure_is_explained_with_f_its_contexts_and_its_framework():
    def numbers(x, c):
        return [c, 2.0]

    with pytest.raises(TypeError) as error:
        di.jacobian(numbers, di.AutoFiniteDiff(), np.ones(2), di.Constant(1.0))
    assert str(error.value).startswith(
        "f: expected f to return an array or a number; it returned list object (f is "
    )
    assert str(error.value).endswith(".numbers)")
    import torch

    def through_numpy(x):
        # a tree of float arrays, but one leaf taken out of torch's recording
        return {"y": torch.as_tensor(np.sin(np.asarray(x))), "z": x**2}

    with pytest.raises(
        di.TracedArrayError, match=r"^f: .*through_numpy raised RuntimeError while AutoTorch"
    ):
        di.jacobian(through_numpy, di.AutoTorch(), torch.ones(2, dtype=torch.float64))


def test_a_tree_x_with_contexts_and_a_two_argument_f():
    x = {"a": np.array([1.0, 2.0]), "b": np.array([0.5])}

    def f(t, c):
        return c * ((t["a"] ** 2).sum() + t["b"][0])

    g = di.gradient(f, di.AutoFiniteDiff(), x, di.Constant(3.0))
    np.testing.assert_allclose(g["a"], [6.0, 12.0], rtol=1e-6)
    np.testing.assert_allclose(g["b"], [3.0], rtol=1e-6)

    def into(y, t, c):
        y[...] = c * t["a"] * t["b"]

    jac = di.jacobian(into, di.AutoFiniteDiff(), x, di.Constant(2.0), y=np.zeros(2))
    np.testing.assert_allclose(jac["a"], np.eye(2), atol=1e-6)
    np.testing.assert_allclose(jac["b"], [[2.0], [4.0]], rtol=1e-6)
    jac = di.jacobian(lambda t: t["a"] * t["b"], di.AutoFiniteDiff(), x)
    assert jac["a"].shape == (2, 2) and jac["b"].shape == (2, 1)


def test_a_python_float_leaf_fits_a_plan_made_at_a_float():
    plan = TreePlan({"k": 2.0, "w": np.ones(2)})
    assert plan.fits({"k": 3.0, "w": np.zeros(2)})
    assert plan.fits({"k": np.float64(3.0), "w": np.zeros(2)})
    assert not plan.fits({"k": np.ones(1), "w": np.zeros(2)})


def test_hvp_tangents_at_a_tree_x_are_checked():
    x = {"a": np.ones(2)}

    def f(t):
        return (t["a"] ** 3).sum()

    with pytest.raises(TypeError) as error:
        di.hvp(f, di.AutoFiniteDiff(), x, {"a": np.ones(2)})
    assert str(error.value) == (
        "tangents: expected a non-empty tuple of trees shaped like x (a batch); got dict"
    )
    with pytest.raises(ValueError, match=r"^tangents\[0\]: expected a tree shaped like x; leaf"):
        di.hvp(f, di.AutoFiniteDiff(), x, ({"a": np.ones(3)},))
    (h,) = di.hvp(f, di.AutoFiniteDiff(), x, ({"a": np.array([1.0, 0.0])},))
    np.testing.assert_allclose(h["a"], [6.0, 0.0], atol=1e-4)


def test_torch_takes_a_tree_x_of_its_gradient_natively_and_checks_each_call():
    import torch

    x = {"w": torch.ones(2, dtype=torch.float64), "b": torch.zeros(1, dtype=torch.float64)}

    def f(t):
        return (t["w"] ** 2).sum() + t["b"].sum()

    prep = di.prepare_gradient(f, di.AutoTorch(), x)
    g = di.gradient(
        f, di.AutoTorch(), {"w": torch.full((2,), 3.0, dtype=torch.float64), "b": x["b"]}, prep=prep
    )
    assert g["w"].tolist() == [6.0, 6.0] and g["b"].tolist() == [1.0]
    with pytest.raises(di.PreparationMismatchError, match=r"x: MISMATCH, leaf \['w'\]"):
        di.gradient(
            f, di.AutoTorch(), {"w": torch.ones(3, dtype=torch.float64), "b": x["b"]}, prep=prep
        )


def test_aux_at_a_tree_x_costs_no_evaluation_where_the_recipe_evaluates_f_at_x():
    from diffinterface.testing import CountingFunction

    x = {"a": np.array([0.5, 1.5]), "b": np.array([2.0])}
    backend = di.AutoFiniteDiff(method="forward")

    def g(t):
        return (t["a"] ** 2).sum() * t["b"][0]

    plain = CountingFunction(g)
    with_aux = CountingFunction(lambda t: (g(t), t["a"].copy()))
    prep_plain = di.prepare_gradient(plain, backend, x)
    prep_aux = di.prepare_gradient(with_aux, backend, x, has_aux=True)
    plain.count = with_aux.count = 0
    at = {"a": np.array([1.0, 2.0]), "b": np.array([3.0])}
    di.gradient(plain, backend, at, prep=prep_plain)
    grad, aux = di.gradient(with_aux, backend, at, prep=prep_aux, has_aux=True)
    assert aux.tolist() == [1.0, 2.0] and with_aux.count == plain.count
    np.testing.assert_allclose(grad["a"], [6.0, 12.0], rtol=1e-5)
    plain.count = with_aux.count = 0
    di.gradient(plain, backend, at)
    _, aux = di.gradient(with_aux, backend, at, has_aux=True)
    assert aux.tolist() == [1.0, 2.0] and with_aux.count == plain.count


def test_a_leaf_of_another_dtype_is_refused_with_the_advice():
    with pytest.raises(TypeError) as error:
        TreePlan({"n": np.arange(2)})
    assert str(error.value) == (
        "x['n']: expected a real floating-point array (float32 or float64); got numpy int64 array "
        "of shape (2,). Convert it yourself: diffinterface does not change dtypes."
    )
    assert TreePlan({"a": np.ones(2), "b": np.ones((3, 1))}).size == 5


def test_bfloat16_beside_a_wider_dtype_takes_the_wider():
    import torch

    plan = TreePlan([torch.ones(1, dtype=torch.bfloat16), torch.ones(1, dtype=torch.float32)])
    assert plan.dtype == "float32"
    plan = TreePlan([torch.ones(1, dtype=torch.float64), torch.ones(1, dtype=torch.bfloat16)])
    assert plan.dtype == "float64"


def test_a_tuple_and_a_list_of_the_same_leaves_get_their_own_flat_functions():
    def f(t):
        # a list doubles the loss: each structure must reach f as itself
        return (t[0] ** 2).sum() * (2.0 if isinstance(t, list) else 1.0)

    a = np.array([1.0, 2.0])
    g_tuple = di.gradient(f, di.AutoFiniteDiff(), (a,))
    g_list = di.gradient(f, di.AutoFiniteDiff(), [a])
    np.testing.assert_allclose(g_tuple[0], [2.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(g_list[0], [4.0, 8.0], rtol=1e-6)
    assert isinstance(g_list, list) and isinstance(g_tuple, tuple)
