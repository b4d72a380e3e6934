"""The one check of a preparation (core/check.py): what a prepared call passes, what it refuses, by
which route, and what the refusal says.

A call that fits is served by the fast form of the check (plain attributes, then ``rest``), never by
the full comparison; a call that does not fit is refused naming its slot. Same-point preparations
compare values: an equal copy passes, other values or an array changed in place are refused by
name. Only numpy and finite differences run here (mutation testing forks a child per mutant); a
family defined here stands for those, such as JAX, whose arrays carry their shape and dtype in a
metadata attribute, or which trace.
"""

from __future__ import annotations

import os
import types

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import OPERATORS
from diffinterface.core.check import Check
from diffinterface.core.preparation import Call
from diffinterface.families import Family, register_family, unregister_family
from tests.entered import functions_entered

_ROOT = os.path.dirname(di.__file__)
FD = di.AutoFiniteDiff()
X = np.array([0.5, 1.5])
T = (np.array([1.0, -1.0]),)


def _entered(run):
    """The names of the functions of ``core/check.py`` and ``core/call.py`` that ``run()`` enters."""
    return functions_entered(run, "core/check.py", "core/call.py")


def _close(got, expected):
    if isinstance(expected, dict):
        assert got.keys() == expected.keys()
        for key in expected:
            _close(got[key], expected[key])
    elif isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _close(g, e)
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6, atol=1e-8)


def _square(x):
    return x**2


def _energy(x):
    return (x**3).sum()


def _scaled(x, c, w):
    return c * w * x**2


def _tree_energy(tree):
    return (tree["a"] ** 2).sum() * tree["b"]


def _as_tree(x):
    return {"y": x**2, "z": x.sum()}


def _weighted(x, c):
    return x**2 * c["w"] * c["k"]


#: name: (prepare, operator, f, prepared arguments, another call's arguments, whether only the
#: attributes decide it, with no ``rest``)
FITTING = {
    "gradient at an array": (di.prepare_gradient, di.gradient, _energy, (X,), (X + 1,), True),
    "derivative at a float": (di.prepare_derivative, di.derivative, np.sin, (0.5,), (2.0,), True),
    "one tangent": (di.prepare_pushforward, di.pushforward, _square, (X, T), (X + 1, T), True),
    "two tangents": (
        di.prepare_pushforward,
        di.pushforward,
        _square,
        (X, (X, X + 1)),
        (X + 1, (X + 2, X)),
        False,
    ),
    "a tangent and contexts": (
        di.prepare_pushforward,
        di.pushforward,
        _scaled,
        (X, T, di.Constant(2.0), di.Constant(np.ones(2))),
        (X + 1, T, di.Constant(3.0), di.Constant(np.zeros(2))),
        False,
    ),
    "contexts": (
        di.prepare_gradient,
        di.gradient,
        lambda x, c: c * _energy(x),
        (X, di.Constant(2.0)),
        (X + 1, di.Constant(3.0)),
        False,
    ),
    "a pytree x and its tangents": (
        di.prepare_pushforward,
        di.pushforward,
        _tree_energy,
        ({"a": X, "b": 2.0}, ({"a": np.ones(2), "b": 1.0},)),
        ({"a": X + 1, "b": 3.0}, ({"a": np.zeros(2), "b": 2.0},)),
        False,
    ),
    "a pytree output and its cotangents": (
        di.prepare_pullback,
        di.pullback,
        _as_tree,
        (X, ({"y": np.ones(2), "z": 1.0},)),
        (X + 1, ({"y": np.zeros(2), "z": 2.0},)),
        False,
    ),
}


@pytest.mark.parametrize("case", FITTING)
def test_a_call_that_fits_is_served_by_the_fast_form_of_the_check(case):
    prepare, operator, f, prepared, arguments, plain = FITTING[case]
    prep = prepare(f, FD, *prepared)
    operator(f, FD, *arguments, prep=prep)  # a first call may still learn
    got = []
    entered = _entered(lambda: got.append(operator(f, FD, *arguments, prep=prep)))
    # the full comparison and the route around the fast path are not taken
    assert "_call_slowly" not in entered and "__call__" not in entered, entered
    # the common calls are decided by the check's attributes alone
    assert ("rest" not in entered) == plain, entered
    _close(got[0], operator(f, FD, *arguments))


def test_a_preparation_neither_strict_nor_same_point_compares_nothing():
    prep = di.prepare_gradient(_energy, FD, X, strict=False)
    same = lambda x: (x**3).sum()  # noqa: E731 - another function object, as a caller's lambda is
    entered = _entered(lambda: di.gradient(same, FD, X, prep=prep))
    assert "_call_slowly" not in entered and "rest" not in entered, entered


def test_a_strict_preparation_served_at_another_function_compares_it():
    prep = di.prepare_gradient(_energy, FD, X)
    same = lambda x: (x**3).sum()  # noqa: E731
    with pytest.raises(di.PreparationMismatchError, match=r"f: MISMATCH"):
        di.gradient(same, FD, X, prep=prep)


def _two_tangents():
    return di.prepare_pushforward(_square, FD, X, (X, X))


def _with_contexts():
    return di.prepare_pushforward(_scaled, FD, X, T, di.Constant(2.0), di.Constant(np.ones(2)))


def _at_a_tree():
    return di.prepare_pushforward(_tree_energy, FD, {"a": X, "b": 2.0}, ({"a": X, "b": 1.0},))


def _of_a_tree():
    return di.prepare_pullback(_as_tree, FD, X, ({"y": X, "z": 1.0},))


#: name: (preparation, the call's arguments after f, backend: x, seeds, contexts; the refusal)
REFUSED = {
    "two tangents of another shape": (
        _two_tangents,
        (X, (np.ones(3), np.ones(3))),
        r"tangents: MISMATCH, prepared 2 of \[float64 \(2,\), float64 \(2,\)\], given 2 of "
        r"\[float64 \(3,\), float64 \(3,\)\]",
    ),
    "no tangents": (_two_tangents, (X, None), r"tangents: MISMATCH, prepared 2 of .*, given none"),
    "a tangent of another dtype": (
        _with_contexts,
        (X, (np.ones(2, dtype=np.float32),), di.Constant(2.0), di.Constant(np.ones(2))),
        r"tangents: MISMATCH, prepared 1 of \[float64 \(2,\)\], given 1 of \[float32 \(2,\)\]",
    ),
    "a context missing": (_with_contexts, (X, T, di.Constant(2.0)), r"contexts: MISMATCH"),
    "the contexts missing": (
        _with_contexts,
        (X, T),
        r"contexts: MISMATCH, prepared .*, given \(\)",
    ),
    "a context too many": (
        _with_contexts,
        (X, T, di.Constant(2.0), di.Constant(np.ones(2)), di.Constant(1.0)),
        r"contexts: MISMATCH",
    ),
    "a Cache for a Constant": (
        _with_contexts,
        (X, T, di.Constant(2.0), di.Cache(np.ones(2))),
        r"contexts: MISMATCH, prepared .*'Constant', 'numpy', 'float64', \(2,\).*given .*'Cache'",
    ),
    "a context array of another shape": (
        _with_contexts,
        (X, T, di.Constant(2.0), di.Constant(np.ones(3))),
        r"contexts: MISMATCH",
    ),
    "a tree tangent of another leaf shape": (
        _at_a_tree,
        ({"a": X, "b": 2.0}, ({"a": np.ones(3), "b": 1.0},)),
        r"tangents: MISMATCH, tangents\[0\]: leaf \['a'\]: prepared numpy.ndarray float64 \(2,\), "
        r"given numpy.ndarray float64 \(3,\)",
    ),
    "a tree cotangent of another leaf shape": (
        _of_a_tree,
        (X, ({"y": np.ones(3), "z": 1.0},)),
        r"cotangents: MISMATCH, cotangents\[0\]: leaf \['y'\]",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_call_that_does_not_fit_is_refused_naming_its_slot(case):
    make, arguments, refusal = REFUSED[case]
    prep = make()
    operator = {"pushforward": di.pushforward, "pullback": di.pullback}[prep.op.name]
    f = prep.check.f
    with pytest.raises(di.PreparationMismatchError, match=refusal) as info:
        operator(f, FD, *arguments, prep=prep)
    message = str(info.value)
    assert message.startswith(f"prep: the call does not match the preparation of {prep.op.name}:")
    assert message.endswith("prepare with strict=False to skip this check at your own risk)")


def test_has_aux_other_than_prepared_is_refused_naming_both():
    prep = di.prepare_gradient(_energy, FD, X)
    with pytest.raises(di.PreparationMismatchError) as info:
        di.gradient(_energy, FD, X, prep=prep, has_aux=True)
    assert str(info.value) == (
        "has_aux: this preparation was made with has_aux=False, but this call has has_aux=True; "
        "pass has_aux=False, or prepare again with has_aux=True"
    )


# -- same-point preparations: values compared ----------------------------------------------------

AGAIN = "Prepare again with these values, or use prepare_pushforward for calls at several points"


def _linear(x, *contexts):
    return 2.0 * x


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "not strict"])
def test_a_same_point_preparation_refuses_x_of_other_values_naming_x(strict):
    prep = di.prepare_pushforward_same_point(_linear, FD, X, T, strict=strict)
    _close(di.pushforward(_linear, FD, X.copy(), T, prep=prep), (2.0 * T[0],))  # equal values
    with pytest.raises(di.PreparationMismatchError) as info:
        di.pushforward(_linear, FD, X + 1, T, prep=prep)
    assert str(info.value) == (
        "x: this preparation (prepare_pushforward_same_point) holds what depends on its own x; "
        f"this call's x has other values. {AGAIN}"
    )


def test_a_same_point_x_changed_in_place_is_refused_as_such():
    x = X.copy()
    prep = di.prepare_pushforward_same_point(_linear, FD, x, T)
    x[0] = 7.0
    with pytest.raises(di.PreparationMismatchError) as info:
        di.pushforward(_linear, FD, x, T, prep=prep)
    assert str(info.value) == (
        "x: changed in place since prepare_pushforward_same_point, which holds what depends on "
        "x's values (it keeps a copy of x to see this); this call's x is the prepared array with "
        f"other values. {AGAIN}"
    )
    x[0] = X[0]  # the prepared values again: served
    di.pushforward(_linear, FD, x, T, prep=prep)


class _Tag:
    """A context leaf that no comparison can tell equal: its ``==`` raises."""

    def __eq__(self, other):
        raise TypeError("a _Tag cannot be compared")

    __hash__ = object.__hash__


def _context_cases():
    ints = np.array([0, 2])
    scalar = np.float64(2.0)
    tree = {"w": np.ones(2), "k": 3.0, "none": None, "mode": "central"}
    nan = np.array([np.nan, 1.0])
    return {
        # name: (prepared value, an equal value, whether the copy is another object)
        "a float": (2.0, float("2.0")),
        "an int array": (ints, ints),
        "an int array copy": (ints, ints.copy()),
        "a numpy scalar": (scalar, np.float64(2.0)),
        "a tree with a None leaf": (
            tree,
            {"w": np.ones(2), "k": float("3.0"), "none": None, "mode": "".join(["cen", "tral"])},
        ),
        "a NaN": (nan, nan.copy()),
    }


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "not strict"])
@pytest.mark.parametrize("case", list(_context_cases()))
def test_a_same_point_context_of_equal_values_is_served_by_the_fast_form(case, strict):
    prepared, equal = _context_cases()[case]
    prep = di.prepare_pushforward_same_point(
        _linear, FD, X, T, di.Constant(prepared), strict=strict
    )
    entered = _entered(lambda: di.pushforward(_linear, FD, X, T, di.Constant(equal), prep=prep))
    assert "_call_slowly" not in entered, entered


def test_a_numpy_scalar_for_a_prepared_float_is_served_by_the_full_comparison():
    prep = di.prepare_pushforward_same_point(_linear, FD, X, T, di.Constant(2.0))
    entered = _entered(
        lambda: di.pushforward(_linear, FD, X, T, di.Constant(np.float64(2.0)), prep=prep)
    )
    assert "_call_slowly" in entered  # another class: the full comparison lets it through


def test_a_same_point_context_array_changed_in_place_inside_a_tree_is_refused_as_such():
    weights = {"w": np.ones(2), "k": 1.0}
    prep = di.prepare_pushforward_same_point(_weighted, FD, X, T, di.Constant(weights))
    weights["w"][1] = 5.0
    with pytest.raises(di.PreparationMismatchError) as info:
        di.pushforward(_weighted, FD, X, T, di.Constant(weights), prep=prep)
    assert str(info.value) == (
        "contexts[0]: changed in place since prepare_pushforward_same_point, which holds what "
        "depends on its contexts' values (it keeps a copy of each Constant array to see this); "
        f"this call's contexts[0] is the prepared object with other values. {AGAIN}"
    )


OTHER_VALUES = (
    "contexts[0]: this preparation (prepare_pushforward_same_point) holds what depends on its "
    f"contexts' values; this call's differ. {AGAIN}"
)


#: name: (prepared, given): trees of one class, and of other values
OTHER_TREES = {
    "a leaf of another shape": ({"w": np.ones(2), "k": 1.0}, {"w": np.ones(3), "k": 1.0}),
    "a leaf no array": ({"w": np.ones(2), "k": 1.0}, {"w": "ones", "k": 1.0}),
    "another float": ({"w": np.ones(2), "k": 1.0}, {"w": np.ones(2), "k": 2.0}),
    "a leaf more": ({"w": np.ones(2), "k": 1.0}, {"w": np.ones(2), "k": 1.0, "extra": 1.0}),
    "None moved": ({"w": np.ones(2), "k": None}, {"w": None, "k": np.ones(2)}),
    "a leaf without ==": ({"w": np.ones(2), "k": _Tag()}, {"w": np.ones(2), "k": _Tag()}),
}


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "not strict"])
@pytest.mark.parametrize("case", OTHER_TREES)
def test_a_same_point_context_tree_of_other_values_is_refused_naming_it(case, strict):
    prepared, given = OTHER_TREES[case]
    prep = di.prepare_pushforward_same_point(
        _linear, FD, X, T, di.Constant(prepared), strict=strict
    )
    with pytest.raises(di.PreparationMismatchError) as info:
        di.pushforward(_linear, FD, X, T, di.Constant(given), prep=prep)
    assert str(info.value) == OTHER_VALUES


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "not strict"])
def test_a_same_point_x_holding_nan_matches_an_equal_copy(strict):
    # a kept copy (strict) and the prepared object (not strict) are compared alike
    x = np.array([np.nan, 1.0])
    prep = di.prepare_pushforward_same_point(_linear, FD, x, T, strict=strict)
    (got,) = di.pushforward(_linear, FD, x.copy(), T, prep=prep)
    assert got.shape == (2,)  # served, not refused (its values are f's NaN)


def test_a_same_point_preparation_not_strict_keeps_no_copy_and_counts_its_contexts():
    x = X.copy()
    prep = di.prepare_pushforward_same_point(_linear, FD, x, T, di.Constant(2.0), strict=False)
    x[0] = 7.0  # nothing kept to compare: the prepared object passes, at the caller's risk
    di.pushforward(_linear, FD, x, T, di.Constant(2.0), prep=prep)
    with pytest.raises(di.PreparationMismatchError) as info:
        di.pushforward(_linear, FD, x, T, prep=prep)
    assert str(info.value) == (
        "contexts: this preparation (prepare_pushforward_same_point) was made with 1 contexts; "
        f"this call passes 0. {AGAIN}"
    )


# -- families whose arrays carry their metadata, or trace ----------------------------------------


class _Dtype:
    """A dtype as a framework may give it: a new object at each read, equal by name."""

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, _Dtype) and other.name == self.name

    __hash__ = None

    def __str__(self):
        return self.name


class MetaArray:
    """An array whose ``shape`` and ``dtype`` are slower reads of its ``meta`` (as a JAX array's
    are of its ``aval``); ``reads`` counts those reads."""

    __module__ = "meta_arrays"
    reads = 0

    def __init__(self, values, meta_shape=None, meta_dtype=None, meta=True):
        self.values = np.asarray(values)
        if meta:
            shape = self.values.shape if meta_shape is None else meta_shape
            self.meta = types.SimpleNamespace(shape=shape)
            if meta_dtype is not False:
                self.meta.dtype = _Dtype(meta_dtype or self.values.dtype.name)

    @property
    def shape(self):
        MetaArray.reads += 1
        return self.values.shape

    @property
    def dtype(self):
        MetaArray.reads += 1
        return _Dtype(self.values.dtype.name)

    def __array__(self, dtype=None, copy=None):
        return self.values


class TracedArray(MetaArray):
    """A traced value of the family: no concrete values to read."""

    __module__ = "meta_arrays.trace"


class MetaFamily(Family):
    name = "meta"
    modules = ("meta_arrays",)
    namespace_module = "numpy"
    metadata = "meta"
    traced_by = "meta.trace"

    def has_values(self, a):
        return not isinstance(a, TracedArray)


@pytest.fixture
def meta():
    register_family(MetaFamily())
    yield
    unregister_family("meta")


def _check(x, seeds=None, contexts=()):
    op = OPERATORS["pushforward" if seeds is not None else "gradient"]
    return Check(Call(op, _linear, FD, x, seeds, contexts), None, None, strict=True)


def test_the_check_reads_shape_and_dtype_from_the_family_metadata_attribute(meta):
    check = _check(MetaArray([1.0, 2.0]), (MetaArray([3.0, 4.0]),))
    assert (check.x_attr, check.x_shape, str(check.x_dtype)) == ("meta", (2,), "float64")
    assert check.one_seed and (check.seed_attr, check.seed_shape) == ("meta", (2,))


@pytest.mark.parametrize(
    "x",
    [
        MetaArray([1.0, 2.0], meta_shape=(3,)),
        MetaArray([1.0, 2.0], meta_dtype="float32"),
        MetaArray([1.0, 2.0], meta_dtype=False),
        MetaArray([1.0, 2.0], meta=False),
    ],
    ids=["another shape", "another dtype", "no dtype", "none"],
)
def test_a_metadata_attribute_that_does_not_hold_the_array_own_is_not_read(meta, x):
    check = _check(x)
    assert (check.x_attr, check.x_shape, str(check.x_dtype)) == (None, (2,), "float64")


def test_rest_compares_seeds_and_contexts_by_their_metadata_and_dtype_equality(meta):
    def arguments(dtype="float64", shape=2):
        return (
            (MetaArray(np.ones(shape, dtype=dtype)), MetaArray(np.zeros(2))),
            (di.Constant(MetaArray(np.ones(3))),),
        )

    check = _check(MetaArray([1.0, 2.0]), *arguments())
    seeds, contexts = arguments()
    MetaArray.reads = 0
    # equal dtypes that are other objects pass, and the arrays' own slow reads are not made
    assert check.rest(MetaArray([5.0, 6.0]), seeds, contexts)
    assert MetaArray.reads == 0
    assert not check.rest(MetaArray([5.0, 6.0]), *arguments(dtype="float32"))
    assert not check.rest(MetaArray([5.0, 6.0]), *arguments(shape=3))


def test_a_mismatch_at_a_traced_x_says_where_to_prepare(meta):
    check = _check(np.ones(2))
    with pytest.raises(di.PreparationMismatchError) as info:
        check(Call(OPERATORS["gradient"], _linear, FD, TracedArray([1.0, 2.0])))
    assert str(info.value).endswith(
        "(prepare again for these arguments, or prepare with strict=False to skip this check at "
        "your own risk)\nx is a traced meta value (inside meta.trace): prepare outside the "
        "transform with a meta array of x's shape and dtype, as the transform passes, and a "
        "backend that differentiates in its framework; a preparation made with another family's "
        "x does not fit"
    )
