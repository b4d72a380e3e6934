"""The signature of a prepared call (core/signature.py): which slots it records, which values are
one kind there, and the report of a mismatch, slot by slot, in full. NumPy and torch only."""

from __future__ import annotations

import dataclasses
import fractions

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core.signature import _array_key, _context_key, same_function
from diffinterface.core.tree_key import TreeKey

_TAIL = (
    "(prepare again for these arguments, or prepare with strict=False to skip this check "
    "at your own risk)"
)


def square(x):
    return x**2


def scaled(x, c):
    return c * (x**2).sum()


@dataclasses.dataclass
class Loss:
    scale: float

    def __call__(self, x):
        return self.scale * (x**2).sum()


def tree_or_array_loss(x):
    return (x["a"] ** 2).sum() if isinstance(x, dict) else (x**2).sum()


def _report(call):
    with pytest.raises(di.PreparationMismatchError) as info:
        call()
    return str(info.value)


def test_a_bound_method_is_its_function_and_instance():
    class Model:
        def loss(self, x):
            return x

    model, other = Model(), Model()
    assert same_function(model.loss, model.loss)
    assert not same_function(model.loss, other.loss)
    assert same_function(square, square) and not same_function(scaled, square)
    # equal objects that are no bound methods are not the prepared function
    assert not same_function([1], [1])


def test_array_keys_are_one_kind_for_a_float_a_numpy_scalar_and_a_0d_array():
    assert _array_key(None) is None
    assert isinstance(_array_key({"a": np.ones(2)}), TreeKey)
    zero_d, scalar = _array_key(np.array(0.5)), _array_key(np.float64(0.5))
    assert tuple(zero_d) == ("numpy scalar", "float64", ()) == tuple(scalar)
    assert zero_d == scalar and not zero_d != scalar and hash(zero_d) == hash(scalar)
    vector = _array_key(np.ones(2))
    assert tuple(vector) == ("numpy.ndarray", "float64", (2,))
    assert vector != _array_key(np.ones(3)) and vector != ("numpy.ndarray", "float64", (2,))
    assert not vector == _array_key(np.ones(2, dtype=np.float32))
    torch = pytest.importorskip("torch")
    assert tuple(_array_key(torch.tensor(0.5))) == ("torch.Tensor", "float32", ())


def test_a_context_key_is_its_class_and_its_values_kind():
    assert _context_key(di.Constant(np.ones(2))) == ("Constant", "numpy", "float64", (2,))
    assert _context_key(di.Constant(2)) == ("Constant", "numpy", "int64", ())
    assert _context_key(di.Cache(2.0)) == ("Cache", "numpy", "float64", ())
    assert _context_key(di.Constant(True)) == ("Constant", "builtins.bool")
    assert _context_key(di.Constant("mode")) == ("Constant", "builtins.str")
    assert _context_key(di.Constant(fractions.Fraction(1, 2))) == ("Constant", "fractions.Fraction")


def test_the_report_names_each_slot_in_full():
    backend, x = di.AutoFiniteDiff(), np.ones(3)
    prep = di.prepare_gradient(scaled, backend, x, di.Constant(2.0))
    message = _report(lambda: di.gradient(scaled, backend, x, 2.0, prep=prep))
    assert message == "\n".join(
        [
            "prep: the call does not match the preparation of gradient:",
            "  f: matches",
            "  backend: matches",
            "  x: matches",
            "  contexts: MISMATCH, prepared (('Constant', 'numpy', 'float64', ()),), "
            "given (('not a context', 'float'),)",
            _TAIL,
        ]
    )
    forward = di.AutoFiniteDiff(method="forward")
    message = _report(lambda: di.gradient(scaled, forward, x, di.Constant(True), prep=prep))
    assert f"  backend: MISMATCH, prepared {backend!r}, given {forward!r}\n" in message
    assert "given (('Constant', 'builtins.bool'),)" in message
    prep = di.prepare_gradient(square, backend, np.array(1.0))
    message = _report(lambda: di.gradient(square, backend, np.float32(1.0), prep=prep))
    assert (
        "  x: MISMATCH, prepared numpy scalar float64 (), given numpy scalar float32 ()" in message
    )
    vector = di.prepare_gradient(tree_or_array_loss, backend, np.ones(2))
    message = _report(
        lambda: di.gradient(tree_or_array_loss, backend, {"a": np.ones(2)}, prep=vector)
    )
    assert (
        "  x: MISMATCH, prepared numpy.ndarray float64 (2,), "
        "given a tree of 1 leaves PyTreeSpec({'a': *})\n"
    ) in message
    # a NumPy scalar for the 0-d array prepared matches
    assert di.gradient(square, backend, np.float64(3.0), prep=prep) == pytest.approx(6.0)


def test_the_report_of_tangents_lists_each_ones_dtype_and_shape():
    backend, x = di.AutoFiniteDiff(), np.ones(3)
    prep = di.prepare_pushforward(square, backend, x, (x, x))
    message = _report(
        lambda: di.pushforward(square, backend, x, (x, np.ones(4, dtype=np.float32)), prep=prep)
    )
    assert message.splitlines()[1:6] == [
        "  f: matches",
        "  backend: matches",
        "  x: matches",
        "  tangents: MISMATCH, prepared 2 of [float64 (3,), float64 (3,)], "
        "given 2 of [float64 (3,), float32 (4,)]",
        "  contexts: matches",
    ]
    message = _report(lambda: di.pushforward(square, backend, x, [x, x], prep=prep))
    assert (
        "  tangents: MISMATCH, prepared 2 of [float64 (3,), float64 (3,)], "
        "given ('not a tuple', 'list')"
    ) in message
    message = _report(lambda: di.pushforward(square, backend, x, None, prep=prep))
    assert "  tangents: MISMATCH, prepared 2 of [float64 (3,), float64 (3,)], given none" in message


def test_the_report_of_tree_tangents_names_the_first_tangent_that_differs():
    backend, t = di.AutoFiniteDiff(), {"a": np.ones(2)}

    def f(t):
        return t["a"] ** 2

    prep = di.prepare_pushforward(f, backend, t, (t, t, t))
    message = _report(
        lambda: di.pushforward(f, backend, t, (t, {"a": np.ones(3)}, {"b": np.ones(2)}), prep=prep)
    )
    assert (
        "  tangents: MISMATCH, tangents[1]: leaf ['a']: prepared numpy.ndarray float64 (2,), "
        "given numpy.ndarray float64 (3,)\n"
    ) in message
    assert "  x: matches\n" in message
    message = _report(lambda: di.pushforward(f, backend, t, (t, t), prep=prep))
    leaf = "a tree of 1 leaves PyTreeSpec({'a': *})"
    assert f"  tangents: MISMATCH, prepared ({leaf}, {leaf}, {leaf}), given ({leaf}, {leaf})\n" in (
        message
    )


def test_the_report_of_a_two_argument_f_names_y():
    backend, x = di.AutoFiniteDiff(), np.ones(3)

    def into(y, x):
        y[...] = 2 * x

    prep = di.prepare_jacobian(into, backend, x, y=np.zeros(3))
    message = _report(lambda: di.jacobian(into, backend, x, y=np.zeros(2), prep=prep))
    assert message.splitlines()[1:6] == [
        "  f: matches",
        "  backend: matches",
        "  x: matches",
        "  contexts: matches",
        "  y: MISMATCH, prepared numpy.ndarray float64 (3,), given numpy.ndarray float64 (2,)",
    ]
    np.testing.assert_allclose(
        di.jacobian(into, backend, x, y=np.zeros(3), prep=prep), 2 * np.eye(3), atol=1e-6
    )


def test_an_equal_callable_object_is_not_the_prepared_function():
    # f is compared by identity (bound methods by function and instance), never by ==: an equal
    # object may hold other state the preparation captured
    backend, x = di.AutoFiniteDiff(), np.ones(2)
    f = Loss(2.0)
    prep = di.prepare_gradient(f, backend, x)
    message = _report(lambda: di.gradient(Loss(2.0), backend, x, prep=prep))
    assert "  f: MISMATCH, prepared Loss(scale=2.0), given Loss(scale=2.0)\n" in message
    np.testing.assert_allclose(di.gradient(f, backend, x, prep=prep), [4.0, 4.0], rtol=1e-6)
