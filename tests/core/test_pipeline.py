"""The preparation is a fold over feature transforms: validated once, built once, wrapped in reverse.

A feature from outside the package is one transform and one registration;
every preparation builds the adapter's implementation exactly once, whatever
features the call uses; and an unprepared call runs the code of only the few
core modules its route needs (a feature it does not use costs it nothing).
"""

from __future__ import annotations

import sys
from collections import namedtuple

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import build as build_module
from diffinterface.core.prepare import TRANSFORMS, register_transform, unregister_transform
from diffinterface.core.transform import Step
from diffinterface.testing.backends import BACKENDS


def _negated(draft, setting):
    """A toy feature: every derivative comes back negated (the value stays f's)."""
    n_values = draft.call.op.n_values

    def wrap(built):
        plain, valued = built.methods

        def negated_plain(*args):
            return -plain(*args)

        def negated_valued(*args):
            result = valued(*args)
            return (*result[:n_values], *(-r for r in result[n_values:]))

        return built._replace(methods=(negated_plain, negated_valued))

    return Step(draft, wrap)


@pytest.fixture
def negating():
    transform = register_transform(_negated, when=lambda call, adapter: call.contexts == ())
    try:
        yield transform
    finally:
        unregister_transform(transform)


@pytest.mark.parametrize("backend", list(BACKENDS.values()), ids=list(BACKENDS))
def test_a_transform_registered_from_outside_reaches_every_operator(backend, negating):
    def f(x):
        return di.array_namespace(x).sum(x**3)

    x = np.array([1.0, 2.0])
    assert TRANSFORMS[-1] is negating
    np.testing.assert_allclose(di.gradient(f, backend, x), -3 * x**2, rtol=1e-5)
    value, grad = di.value_and_gradient(f, backend, x)
    np.testing.assert_allclose(value, 9.0, rtol=1e-6)
    np.testing.assert_allclose(grad, -3 * x**2, rtol=1e-5)
    np.testing.assert_allclose(di.hessian(f, backend, x), -np.diag(6 * x), rtol=1e-4, atol=1e-4)
    # its `when` keeps it off the calls it does not apply to
    g = di.gradient(lambda x, c: di.array_namespace(x).sum(c * x**3), backend, x, di.Constant(1.0))
    np.testing.assert_allclose(g, 3 * x**2, rtol=1e-5)


def test_a_registered_transform_goes_where_it_is_told_and_is_refused_when_misnamed():
    transform = register_transform(_negated, before="tree_input")
    try:
        names = [t.name for t in TRANSFORMS]
        assert names.index("_negated") == names.index("tree_input") - 1
    finally:
        unregister_transform(transform)
    assert "_negated" not in [t.name for t in TRANSFORMS]
    with pytest.raises(ValueError, match="before: expected one of"):
        register_transform(_negated, before="no such transform")
    with pytest.raises(TypeError, match="rewrite, when: expected callables"):
        register_transform("not a function")


Point = namedtuple("Point", "a b")

_FEATURED_CALLS = {
    "array": lambda b: di.prepare_gradient(lambda x: (x**2).sum(), b, np.ones(3)),
    "aux": lambda b: di.prepare_gradient(
        lambda x: ((x**2).sum(), x[0]), b, np.ones(3), has_aux=True
    ),
    "pytree x": lambda b: di.prepare_gradient(
        lambda p: (p.a**2).sum() + p.b, b, Point(np.ones(2), 1.0)
    ),
    "pytree output": lambda b: di.prepare_jacobian(
        lambda x: {"twice": 2 * x, "sum": x.sum()}, b, np.ones(2)
    ),
    "complex x": lambda b: di.prepare_gradient(
        lambda z: (z.real**2 + z.imag**2).sum(), b, np.ones(2) * (1 + 1j)
    ),
    "same point, pytree x": lambda b: di.prepare_pullback_same_point(
        lambda p: p.a * p.b, b, Point(np.ones(2), np.ones(2)), (np.ones(2),)
    ),
    "a foreign context": lambda b: di.prepare_gradient(
        lambda x, c: (x * c).sum(), b, np.ones(2), di.Constant(_torch_ones(2))
    ),
}


def _torch_ones(n):
    import torch

    return torch.ones(n, dtype=torch.float64)


@pytest.mark.parametrize("features", list(_FEATURED_CALLS))
@pytest.mark.parametrize("backend", [di.AutoFiniteDiff(), di.AutoJAX()], ids=["finitediff", "jax"])
def test_every_preparation_builds_the_implementation_once(backend, features, monkeypatch):
    builds = []
    real_build = build_module.build

    def counting(draft, setting):
        builds.append(draft.call.x)
        return real_build(draft, setting)

    monkeypatch.setattr(sys.modules["diffinterface.core.prepare"], "build", counting)
    prep = _FEATURED_CALLS[features](backend)
    assert len(builds) == 1, features
    assert isinstance(prep, di.Preparation)


def _core_modules_run(run):
    """The ``diffinterface.core`` modules whose functions ``run()`` enters."""
    seen = set()

    def record(frame, event, arg):
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            if name.startswith("diffinterface.core."):
                seen.add(name)

    sys.setprofile(record)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


# a gradient in forward mode is a sweep of pushforwards, which runs the batching module too
_ONE_PASS = {name: b for name, b in BACKENDS.items() if getattr(b, "mode", None) != "forward"}


@pytest.mark.parametrize("backend", list(_ONE_PASS.values()), ids=list(_ONE_PASS))
def test_an_unprepared_gradient_runs_the_code_of_at_most_eight_core_modules(backend):
    def f(x):
        return di.array_namespace(x).sum(x**2)

    x = np.ones(3)
    di.gradient(f, backend, x)  # imports and first-use caches out of the way
    modules = _core_modules_run(lambda: di.gradient(f, backend, x))
    assert len(modules) <= 8, sorted(modules)
    assert "diffinterface.core.prepare" in modules  # the measure sees the route


# -- one check: the operator, has_aux, the signature and a same-point preparation's point --------


@pytest.mark.parametrize("backend", list(BACKENDS.values()), ids=list(BACKENDS))
def test_one_check_decides_the_operator_has_aux_signature_and_point(backend):
    from diffinterface.core import OPERATORS, Call

    def f(x):
        return di.array_namespace(x).sin(x)

    x, seeds = np.array([0.3, 0.7]), (np.ones(2),)
    prep = di.prepare_pushforward_same_point(f, backend, x, seeds, strict=False)
    # the prepared methods run as the adapter made them: no checking frame wraps them
    op = OPERATORS["pushforward"]
    assert prep.methods == (getattr(prep.impl, op.plain), getattr(prep.impl, op.valued))
    prep.check(Call(op, f, backend, x.copy(), seeds, same_point=True))  # equal values fit
    refused = {
        "x: this preparation": Call(op, f, backend, x + 1, seeds),
        "prep: this preparation was made by prepare_pushforward": Call(
            OPERATORS["pullback"], f, backend, x, seeds
        ),
        "has_aux: this preparation": Call(op, f, backend, x, seeds, has_aux=True),
    }
    for message, call in refused.items():
        with pytest.raises(di.PreparationMismatchError, match=message):
            prep.check(call)
    strict = di.prepare_pushforward(f, backend, x, seeds)
    with pytest.raises(di.PreparationMismatchError, match=r"x: MISMATCH"):
        strict.check(Call(op, f, backend, np.ones(3), seeds))
