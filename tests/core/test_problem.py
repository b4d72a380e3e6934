"""What an adapter prepares from (core/problem.py): the :class:`Spec` of an output, a
:class:`Problem` built with only the arguments a third-party adapter must give, its helpers for
fallbacks (``basis``, ``mode``, ``impl``, ``is_empty``, ``replace``), and the scalar-output check
with its message."""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import (
    OPERATORS,
    Adapter,
    Capabilities,
    Problem,
    Spec,
    TreePlan,
    get_adapter,
)


def _sum_of_squares(x, *ctx):
    return (x**2).sum()


def _problem(x, f=_sum_of_squares, **given):
    return Problem(get_adapter(di.AutoFiniteDiff()), f, x, None, (), None, **given)


def test_a_spec_records_shape_dtype_and_size():
    spec = Spec([2, 3], "float32")
    assert (spec.shape, spec.dtype, spec.size) == ((2, 3), "float32", 6)
    assert repr(spec) == "Spec((2, 3), float32)"
    learned = Spec.of(np.zeros((4, 1), dtype=np.float32))
    assert (learned.shape, learned.dtype, learned.size) == ((4, 1), "float32", 4)
    assert Spec.of(2.5).shape == ()


def test_an_output_that_is_no_array_is_refused_naming_f_and_what_it_returned():
    with pytest.raises(
        TypeError, match=r"^f: expected f to return an array or a number; it returned str"
    ):
        Spec.of("text")


def test_a_problem_from_the_required_arguments_is_strict_reusable_and_at_any_point():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    problem = _problem(x)
    assert problem.strict is True
    assert problem.one_off is False
    assert problem.same_point is False
    assert problem.constant_output_is_zero is False
    assert (problem.tree, problem.leaf_dtypes, problem.batched_f) == (None, None, None)
    assert (problem.aux, problem.aux_entry) == (None, None)
    assert (problem.family, problem.x_shape, problem.x_size, problem.x_dtype) == (
        "numpy",
        (2, 3),
        6,
        "float32",
    )
    assert problem.f is _sum_of_squares and problem.x is x
    assert (problem.tangents, problem.y, problem.ctx) == (None, None, ())
    # the spec is learned from f when asked
    assert (problem.spec.shape, problem.spec.dtype) == ((), "float32")


def test_a_problem_keeps_contexts_values_a_given_output_and_the_aux_entry():
    x = np.ones(3)
    contexts = (di.Constant(2.0), di.Constant(np.array([1.0, 2.0])))
    problem = Problem(get_adapter(di.AutoFiniteDiff()), _sum_of_squares, x, None, contexts, None)
    assert problem.contexts is contexts
    assert problem.ctx[0] == 2.0 and problem.ctx[1] is contexts[1].value
    y = np.zeros((5, 2))
    # a given output decides the spec, whatever spec is passed beside it
    given = Problem(
        get_adapter(di.AutoFiniteDiff()), _sum_of_squares, x, None, (), y, spec=Spec((7,), "int8")
    )
    assert given.y is y
    assert (given.spec.shape, given.spec.dtype) == ((5, 2), "float64")
    told = _problem(x, spec=Spec((7,), "float32"))
    assert (told.spec.shape, told.spec.dtype) == ((7,), "float32")
    aux = object()
    with_aux = _problem(x, aux=aux)
    assert with_aux.aux is aux and with_aux.aux_entry is _sum_of_squares
    leaf_dtypes, batched_f = ((slice(0, 3), "float32"),), (lambda tangents, formulas: None)
    kept = _problem(x, leaf_dtypes=leaf_dtypes, batched_f=batched_f, constant_output_is_zero=True)
    assert kept.leaf_dtypes is leaf_dtypes and kept.batched_f is batched_f
    assert kept.constant_output_is_zero is True


def test_a_problem_of_a_pytree_x_handed_over_whole_describes_its_flat_form():
    x = {"a": np.ones(2, dtype=np.float32), "b": np.ones((1, 3))}
    plan = TreePlan(x)
    problem = _problem(x, tree=plan)
    assert problem.tree is plan
    assert (problem.family, problem.x_shape, problem.x_size, problem.x_dtype) == (
        "numpy",
        (5,),
        5,
        "float64",
    )


def _recorded_problems(monkeypatch, backend):
    """The list that every Problem ``backend``'s adapter is given to prepare is appended to."""
    adapter = get_adapter(backend)
    problems = []
    prepare = adapter.prepare

    def recording(operator, problem):
        problems.append(problem)
        return prepare(operator, problem)

    monkeypatch.setattr(adapter, "prepare", recording)
    return problems


def test_the_problem_an_adapter_gets_carries_the_call_s_settings(monkeypatch):
    backend = di.AutoFiniteDiff(rel_step=1.25e-7)  # an adapter of its own, patched here
    problems = _recorded_problems(monkeypatch, backend)
    f = lambda x: x**2
    x = np.array([1.0, 2.0])

    def last(run):
        problems.clear()
        run()
        return problems[0]

    prepared = last(lambda: di.prepare_jacobian(f, backend, x))
    assert (prepared.strict, prepared.one_off, prepared.same_point) == (True, False, False)
    assert prepared.f(x) is not None and prepared.x is x and prepared.y is None
    assert prepared.aux is None and prepared.tree is None and prepared.leaf_dtypes is None
    assert last(lambda: di.prepare_jacobian(f, backend, x, strict=False)).strict is False
    assert last(lambda: di.jacobian(f, backend, x)).one_off is True
    same_point = last(lambda: di.prepare_pushforward_same_point(f, backend, x, (x,)))
    assert same_point.same_point is True and same_point.tangents[0] is not None
    with_aux = last(lambda: di.prepare_jacobian(lambda x: (f(x), 3), backend, x, has_aux=True))
    assert with_aux.aux is not None
    c = di.Constant(2.0)
    assert last(lambda: di.prepare_jacobian(lambda x, c: c * x, backend, x, c)).ctx == (2.0,)
    # a tree of float32 and float64 leaves, flattened: each leaf's entries keep their dtype's step
    tree = {"a": np.ones(2, dtype=np.float32), "b": np.ones(2)}
    mixed = last(
        lambda: di.prepare_gradient(lambda d: (d["a"] ** 2).sum() + d["b"].sum(), backend, tree)
    )
    assert mixed.leaf_dtypes is not None and mixed.x_dtype == "float64"
    y = np.zeros(2)

    def into(y, x):
        y[:] = x**2

    written = last(lambda: di.prepare_jacobian(into, backend, x, y=y))
    assert written.y is not None and (written.spec.shape, written.spec.dtype) == ((2,), "float64")


@pytest.mark.parametrize(
    "x_shape, spec, operator, empty",
    [
        ((0,), None, "gradient", True),
        ((3, 0), None, "jacobian", True),
        ((1,), None, "jacobian", False),
        ((2,), None, "jacobian", False),
        ((2,), Spec((0,), "float64"), "jacobian", True),
        ((2,), Spec((2, 0), "float64"), "pullback", True),
        ((2,), Spec((1,), "float64"), "jacobian", False),
        ((2,), Spec((), "float64"), "gradient", False),
        # a scalar output is never empty: its size is not consulted
        ((2,), Spec((0,), "float64"), "gradient", False),
    ],
)
def test_is_empty(x_shape, spec, operator, empty):
    problem = _problem(np.ones(x_shape), spec=spec)
    assert problem.is_empty(OPERATORS[operator]) is empty


def test_replace_copies_with_changes_and_keeps_the_learned_spec():
    problem = _problem(np.ones(2))
    spec = problem.spec
    tangents = (np.array([1.0, 0.0]),)
    copy = problem.replace(tangents=tangents)
    assert type(copy) is Problem
    assert copy.tangents is tangents and problem.tangents is None
    assert copy.spec is spec and copy.x is problem.x and copy.adapter is problem.adapter


class _BothModes(Adapter):
    capabilities = Capabilities(mode="both")


@pytest.mark.parametrize("n_out, mode", [(1, "reverse"), (5, "forward")])
def test_mode_asks_the_adapter_about_this_operator_and_problem(n_out, mode):
    problem = Problem(
        _BothModes(di.AutoFiniteDiff()), lambda x: x[:1].repeat(n_out), np.ones(3), None, (), None
    )
    assert problem.mode("jacobian") == mode  # the smaller side
    assert problem.mode("gradient") == OPERATORS["gradient"].fallback_mode


def test_impl_hands_the_adapter_these_tangents_and_falls_back_where_it_has_none():
    seen = []

    class Recording(type(get_adapter(di.AutoFiniteDiff()))):
        def prepare(self, operator, problem):
            seen.append((operator, problem.tangents))
            # no native gradient: the fallback, from finite-difference pushforwards
            return None if operator == "gradient" else super().prepare(operator, problem)

    x = np.array([1.0, 2.0])
    problem = Problem(Recording(di.AutoFiniteDiff()), _sum_of_squares, x, None, (), None)
    tangents = (np.array([0.0, 1.0]),)
    impl = problem.impl("gradient", tangents=tangents)
    assert seen[0] == ("gradient", tangents)
    assert problem.tangents is None  # the problem asked is not changed
    seen.clear()
    problem.impl("gradient")
    assert seen[0] == ("gradient", None)
    np.testing.assert_allclose(impl.gradient(x), 2 * x, rtol=1e-6)
    value, gradient = impl.value_and_gradient(x)
    assert value == 5.0
    np.testing.assert_allclose(gradient, 2 * x, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_basis_is_the_standard_basis_in_x_s_family_shape_and_dtype(dtype):
    problem = _problem(np.ones(3, dtype=dtype))
    basis = problem.basis((2, 2), dtype)
    assert len(basis) == 4
    for i, e in enumerate(basis):
        assert isinstance(e, np.ndarray) and e.shape == (2, 2) and e.dtype == dtype
        np.testing.assert_array_equal(e.reshape(-1), np.eye(4)[i])
    (one,) = problem.basis((), dtype)
    assert one.shape == () and one == 1 and one.dtype == dtype


def test_basis_of_a_torch_x_is_torch_like_x():
    import torch

    x = torch.ones(2, dtype=torch.float32)
    problem = Problem(get_adapter(di.AutoFiniteDiff()), _sum_of_squares, x, None, (), None)
    basis = problem.basis((2,), "float32")
    assert all(type(e) is torch.Tensor and e.dtype == torch.float32 for e in basis)
    assert [e.tolist() for e in basis] == [[1.0, 0.0], [0.0, 1.0]]


def test_a_scalar_operator_of_an_array_output_names_f_the_shape_and_what_to_use():
    x = np.ones(3)
    with pytest.raises(ValueError) as gradient:
        di.gradient(lambda x: 2 * x, di.AutoFiniteDiff(), x)
    assert str(gradient.value) == (
        "f: gradient needs f to return a scalar; it returns shape (3,) (use jacobian for array outputs)"
    )
    with pytest.raises(ValueError) as hvp:
        di.hvp(lambda x: 2 * x, di.AutoFiniteDiff(), x, (x,))
    assert str(hvp.value) == "f: hvp needs f to return a scalar; it returns shape (3,)"


def test_the_output_learned_before_the_problem_is_not_learned_again():
    from diffinterface.testing.counting import CountingFunction

    f = CountingFunction(lambda x: x**2)
    di.prepare_jacobian(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]))
    assert f.take() == 1


def test_an_adapter_taking_a_pytree_x_whole_gets_its_plan(monkeypatch):
    backend = di.AutoJAX(jit=False)
    assert "gradient" in get_adapter(backend).capabilities.pytrees
    problems = _recorded_problems(monkeypatch, backend)
    x = {"a": np.ones(2), "b": np.ones((1, 3))}
    di.prepare_gradient(lambda d: (d["a"] ** 2).sum() + d["b"].sum(), backend, x)
    (problem,) = problems
    assert problem.tree is not None and problem.x is x
    assert (problem.x_shape, problem.x_size, problem.x_dtype) == ((5,), 5, "float64")
