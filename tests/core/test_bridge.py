"""What bridges between frameworks share (core/bridge.py): arrays crossing families, contexts, each
framework's rules found by its name; numpy, torch and autograd (no JAX compiles)."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

import diffinterface as di
from diffinterface.core.bridge import (
    HOST_FAMILY,
    FrameworkBridge,
    context_signature,
    converted_contexts,
    inner_family,
    third_order,
    to_family,
    wide,
)


def test_the_inner_family_of_a_framework_is_its_rules_or_the_host():
    assert HOST_FAMILY == "numpy"
    assert inner_family(None) == "numpy"  # no framework traces: finite differences
    assert inner_family("torch") == "torch"
    assert inner_family("autograd") == "numpy"  # rules with the default inner family
    assert inner_family("no such framework") == "numpy"


def test_arrays_cross_families_sharing_memory_where_they_can():
    a = np.array([1.0, 2.0, 3.0])
    assert to_family(a, "numpy") is a
    scalar = to_family(2.0, "numpy")
    assert scalar.dtype == np.float64 and scalar.shape == () and float(scalar) == 2.0
    t = to_family(a, "torch")
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float64
    t[0] = 7.0  # the tensor is a view of the numpy array
    assert a[0] == 7.0
    back = to_family(torch.ones(2, requires_grad=True) * 2, "numpy")  # detached first
    assert isinstance(back, np.ndarray) and back.tolist() == [2.0, 2.0]
    view = torch.zeros(2, dtype=torch.float64)
    np_view = to_family(view, "numpy")
    np_view[1] = 5.0
    assert view[1].item() == 5.0
    # a family without rules receives numpy arrays as they are, torch's as numpy views
    assert to_family(a, "a family without rules") is a
    assert isinstance(to_family(view, "a family without rules"), np.ndarray)
    # rules that receive nothing refuse by name
    with pytest.raises(TypeError, match="^x: cannot hand a torch array to a bridged function$"):
        to_family(view, "autograd")


def test_the_default_rules_suit_a_framework_whose_arrays_are_numpy_s():
    rules = FrameworkBridge()
    a = np.ones(2)
    assert rules.inner_family == "numpy" and rules.keeps_contexts is False
    assert rules.plain(a) is a and rules.to_numpy(a) is a
    assert rules.to_numpy([1.0, 2.0]).tolist() == [1.0, 2.0]
    assert isinstance(rules.wide("float64"), contextlib.nullcontext)
    assert rules.output_spec(None, a, ()) is None
    assert rules.krylov("gmres", None, (2,), 1e-8, 0.0, 10) is None
    with pytest.raises(TypeError, match=r"^x: cannot hand a torch array to a bridged function$"):
        rules.receive(a, "torch")
    with pytest.raises(NotImplementedError):
        rules.call(None, a, ())
    assert isinstance(wide("numpy", "float64"), contextlib.nullcontext)
    assert isinstance(wide("torch", "float64"), contextlib.nullcontext)


def test_a_context_signature_holds_the_kind_family_dtype_and_shape_of_each_value():
    contexts = (
        di.Constant(np.ones((2, 3), np.float32)),
        di.Cache(torch.zeros(4, dtype=torch.float64)),
        di.Constant("a string"),
    )
    assert context_signature(contexts) == (
        (di.Constant, "numpy", "float32", (2, 3)),
        (di.Cache, "torch", "float64", (4,)),
        (di.Constant, str),
    )


def test_contexts_reach_the_inner_in_its_family_and_a_cache_writable():
    read_only = np.ones(2)
    read_only.flags.writeable = False
    contexts = (
        di.Constant(2.0),
        di.Constant(3),
        di.Constant("label"),
        di.Constant(torch.ones(2, dtype=torch.float32)),
        di.Cache(read_only),
        di.Constant(read_only),
    )
    number, integer, label, constant, cache, kept = converted_contexts(contexts, "numpy")
    assert number is contexts[0] and integer is contexts[1] and label is contexts[2]
    assert type(constant) is di.Constant and isinstance(constant.value, np.ndarray)
    assert constant.value.dtype == np.float32 and constant.value.tolist() == [1.0, 1.0]
    assert type(cache) is di.Cache and cache.value.flags.writeable
    assert cache.value.tolist() == [1.0, 1.0]
    assert kept.value is read_only  # a Constant is only read
    (to_torch,) = converted_contexts((di.Cache(np.zeros(3)),), "torch")
    assert isinstance(to_torch.value, torch.Tensor) and type(to_torch) is di.Cache


def test_a_framework_whose_rules_keep_contexts_hands_them_over_as_they_are():
    import autograd
    from autograd.numpy.numpy_boxes import ArrayBox

    seen = []

    def f(x):
        assert isinstance(x, ArrayBox)
        (converted,) = converted_contexts((di.Constant(x),), "numpy")
        seen.append(converted.value)
        return (x**2).sum()

    autograd.grad(f)(np.ones(2))
    assert isinstance(seen[0], ArrayBox)


def test_a_third_derivative_through_a_bridge_is_refused_naming_what_needs_it():
    error = third_order("a Hessian of the Hessian")
    assert isinstance(error, di.UnsupportedError)
    assert str(error) == (
        "DifferentiateWith: a Hessian of the Hessian would need third derivatives of f, which "
        "the bridge does not provide (first and second order only)"
    )
