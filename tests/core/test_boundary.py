"""The boundary of f (core/boundary.py): what f returned that is no array, and an error raised
inside f while a framework traced it, each explained by name, on the backends that evaluate on the
host."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import diffinterface as di

X = np.array([0.5, 1.5, 2.5])


def returns_a_string(x):
    return "abc"


def returns_a_pair(x):
    return x.sum(), "aux"


def returns_a_pair_as_y(x):
    return (x.sum(), x.sum()), "aux"


BACKENDS = [di.AutoFiniteDiff(), di.AutoTorch(), di.AutoAutograd()]
IDS = ["finitediff", "torch", "autograd"]


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_an_output_that_is_no_array_is_named_with_what_it_is(backend):
    with pytest.raises(TypeError) as raised:
        di.gradient(returns_a_string, backend, X)
    assert str(raised.value) == (
        "f: expected f to return an array or a number; it returned str object "
        "(f is returns_a_string)"
    )
    # a list of numbers is an output that forgot to be an array, even where trees are taken
    with pytest.raises(TypeError, match=r"it returned list object \(f is \S*<lambda>\)$"):
        di.jacobian(lambda x: [1.0, 2.0], backend, X)


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_a_pair_returned_without_has_aux_is_named_with_the_fix(backend):
    with pytest.raises(TypeError) as raised:
        di.gradient(returns_a_pair, backend, X)
    assert str(raised.value).endswith(
        "it returned tuple object (f is returns_a_pair). If f returns (y, aux), pass has_aux=True"
    )
    # with has_aux, a pair returned as y is no forgotten has_aux
    with pytest.raises(TypeError) as raised:
        di.gradient(returns_a_pair_as_y, backend, X, has_aux=True)
    assert str(raised.value).endswith("it returned tuple object (f is returns_a_pair_as_y)")


def test_a_tree_of_float_arrays_is_an_output_a_jacobian_takes_and_no_other_tree_is():
    # torch traces x; np.sin cannot take the tensor: the output, a tree of arrays at a numpy x,
    # is not the cause
    with pytest.raises(
        di.TracedArrayError, match=r"cannot take the torch tensor.*\(Can't call numpy\(\)"
    ):
        di.jacobian(lambda x: {"a": np.sin(x), "b": np.cos(x)}, di.AutoTorch(), X)
    # a tree holding a string, or integers, is
    for bad in (lambda x: {"a": np.sin(x), "b": "s"}, lambda x: {"a": np.sin(x).astype(int)}):
        with pytest.raises(TypeError, match=r"it returned dict object \(f is \S*<lambda>\)$"):
            di.jacobian(bad, di.AutoTorch(), X)
    # a gradient takes no tree: a tree of float arrays is the cause there
    with pytest.raises(TypeError, match=r"it returned dict object \(f is \S*<lambda>\)$"):
        di.gradient(lambda x: {"a": np.sin(x).sum()}, di.AutoTorch(), X)


def test_an_error_raised_inside_numpy_s_own_code_names_the_traced_array():
    # np.median runs numpy's Python code on autograd's ArrayBox, and fails there with a ValueError
    with pytest.raises(
        di.TracedArrayError,
        match=r"^f: \S*<lambda> raised ValueError while AutoAutograd\(\) differentiated it: it "
        r"called a function that cannot take the autograd ArrayBox it received as x",
    ):
        di.gradient(lambda x: np.median(x), di.AutoAutograd(), X)


def test_an_output_of_another_framework_names_the_traced_array():
    # torch took x's values out of autograd's graph; at a numpy x, f returns a torch tensor
    with pytest.raises(
        di.TracedArrayError,
        match=r"^f: \S*<lambda> raised TypeError while AutoAutograd\(\) differentiated it: it "
        r"called a function that cannot take the autograd ArrayBox it received as x",
    ):
        di.gradient(lambda x: torch.as_tensor(x).sum(), di.AutoAutograd(), X)


def reversed_sum(x):
    return x[::-1].sum()


def test_a_limit_its_framework_declares_is_named_with_the_way_around():
    backend = di.AutoTorch()
    with pytest.raises(ValueError) as raised:
        di.gradient(reversed_sum, backend, X)
    assert str(raised.value) == (
        f"f: {backend} cannot differentiate reversed_sum: torch does not support slicing with a "
        "negative step (x[::-1]) (torch: step must be greater than zero); reverse with "
        "xp.flip(x, axis=...) instead, which every backend differentiates"
    )

    def reversed_then_wrapped(x):
        try:
            return x[::-1].sum()
        except ValueError:
            # implicitly chained: the framework's error is the context, not the cause
            raise RuntimeError("could not reverse x")

    # the framework's error, in the chain of one f raised while handling it, is found there
    with pytest.raises(ValueError, match=r"torch does not support slicing with a negative step"):
        di.gradient(reversed_then_wrapped, backend, X)
    with pytest.raises(ValueError, match=r"^f: AutoAutograd\(\) cannot differentiate .*unary plus"):
        di.gradient(lambda x: (+x).sum(), di.AutoAutograd(), X)


def raising_its_own(message):
    """An f raising its own error where a framework traces x; at a numpy x, a tree of arrays."""

    def f(x):
        if isinstance(x, np.ndarray):
            return {"a": x * 2.0}
        raise ValueError(message)

    return f


@pytest.mark.parametrize(
    "backend, message",
    [
        (di.AutoTorch(), "f refuses this x"),
        # words of torch's declared limit are not autograd's
        (di.AutoAutograd(), "step must be greater than zero, says f"),
    ],
    ids=["torch", "autograd"],
)
def test_an_error_of_f_s_own_stands_as_it_is(backend, message):
    f = raising_its_own(message)
    with pytest.raises(ValueError) as raised:
        di.jacobian(f, backend, X)
    assert str(raised.value) == message
    with pytest.raises(ValueError) as raised:
        di.gradient(lambda x: f(x)["a"].sum(), backend, X)
    assert str(raised.value) == message


def test_numpy_s_error_in_the_chain_of_one_f_raised_names_the_traced_array():
    def median_then_wrapped(x):
        try:
            return np.median(x)
        except ValueError:
            raise RuntimeError("no median")  # implicitly chained

    with pytest.raises(di.TracedArrayError, match=r"raised RuntimeError while AutoAutograd"):
        di.gradient(median_then_wrapped, di.AutoAutograd(), X)


def test_an_error_of_f_at_a_tree_x_of_one_leaf_stands_on_finite_differences():
    # finite differences compute in the namespace of a JAX x: the boundary reads x's family
    def f(x):
        raise ValueError("f refuses this x")

    for x in ({"a": X}, X):
        with pytest.raises(ValueError, match="^f refuses this x$"):
            di.gradient(f, di.AutoFiniteDiff(), x)


def writes_into_its_arguments(x, c):
    x[0] = 99.0
    c[0] = 99.0
    return "abc"


def test_what_f_returned_is_found_on_copies_of_its_arguments():
    x, c = X.copy(), np.ones(3)
    with pytest.raises(
        TypeError, match=r"it returned str object \(f is writes_into_its_arguments\)$"
    ):
        di.gradient(writes_into_its_arguments, di.AutoTorch(), x, di.Constant(c))
    assert x.tolist() == X.tolist() and c.tolist() == [1.0, 1.0, 1.0]
    # at a torch x, and beside a context that is no array
    with pytest.raises(TypeError, match=r"it returned str object"):
        di.gradient(returns_a_string, di.AutoTorch(), torch.tensor(X))
    with pytest.raises(TypeError, match=r"it returned str object"):
        di.gradient(lambda x, s: s.upper(), di.AutoTorch(), X, di.Constant("a label"))


def test_a_function_of_another_framework_refusing_the_traced_array_names_it():
    with pytest.raises(di.TracedArrayError) as raised:
        di.gradient(lambda x: torch.sin(x).sum(), di.AutoAutograd(), X)
    message = str(raised.value)
    assert "while AutoAutograd() differentiated it" in message
    assert "cannot take the autograd ArrayBox it received as x" in message
    # the framework's own words are kept
    assert "must be Tensor, not ArrayBox" in message


def test_finite_differences_trace_nothing_an_error_of_f_stands():
    # f returns torch tensors and fails away from x: finite differences ran it on numpy points
    def f(x):
        if x[0] != X[0]:
            raise ValueError("f refuses points away from x")
        return torch.as_tensor(x).sum()

    with pytest.raises(ValueError, match="^f refuses points away from x$"):
        di.gradient(f, di.AutoFiniteDiff(), X)
