"""Bad inputs get an error naming the argument, on every selected backend (the kit's ``di_backend``).

Each test also checks that nothing it passed was modified by the refused call.
"""

import numpy as np
import pytest

import diffinterface as di


def square_sum(x):
    xp = di.array_namespace(x)
    return xp.sum(x ** 2)


def sines(x):
    xp = di.array_namespace(x)
    return xp.sin(x)


X = np.linspace(0.2, 1.0, 3)


def test_a_bare_tangent_is_refused_as_not_a_tuple(di_backend):
    t = np.ones(3)
    with pytest.raises(TypeError, match=r"tangents: expected a non-empty tuple of arrays shaped like x"):
        di.pushforward(sines, di_backend, X, t)
    np.testing.assert_array_equal(t, np.ones(3))


@pytest.mark.parametrize("dtype", ["int64", "complex128", "float32"])
def test_tangents_of_another_dtype_are_refused_by_name(di_backend, dtype):
    t = np.ones(3, dtype=dtype)
    with pytest.raises(TypeError, match=r"tangents\[0\]: expected .*float64 like x; got numpy " + dtype):
        di.pushforward(sines, di_backend, X, (t,))
    with pytest.raises(TypeError, match=r"cotangents\[0\]: expected .*float64 like the output y"):
        di.pullback(sines, di_backend, X, (t,))


def test_a_read_only_out_is_refused_and_left_unchanged(di_backend):
    out = np.zeros(3)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out: expected a writable buffer"):
        di.gradient(square_sum, di_backend, X, out=out)
    np.testing.assert_array_equal(out, np.zeros(3))


def test_an_out_aliasing_x_is_refused_and_x_unchanged(di_backend):
    x = X.copy()
    with pytest.raises(ValueError, match="out: the buffer shares memory with x"):
        di.gradient(square_sum, di_backend, x, out=x)
    np.testing.assert_array_equal(x, X)


def test_an_out_of_the_wrong_type_is_refused_by_name(di_backend):
    with pytest.raises(ValueError, match="out: expected a buffer like the result"):
        di.gradient(square_sum, di_backend, X, out=[0.0, 0.0, 0.0])


def test_a_second_buffer_refused_leaves_the_first_unchanged(di_backend):
    first, second = np.zeros(3), np.zeros(2)  # the second has the wrong shape
    with pytest.raises(ValueError, match=r"out\[1\]"):
        di.pushforward(sines, di_backend, X, (np.ones(3), np.ones(3)), out=(first, second))
    np.testing.assert_array_equal(first, np.zeros(3))


@pytest.mark.parametrize("returned", ["abc", None, [1.0, 2.0]], ids=["str", "None", "list"])
def test_f_returning_a_non_array_is_named_the_same_way_everywhere(di_backend, returned):
    for call in (
        lambda f: di.gradient(f, di_backend, X),
        lambda f: di.pushforward(f, di_backend, X, (np.ones(3),)),
    ):
        with pytest.raises(TypeError, match=r"f: expected f to return an array or a number; it returned "):
            call(lambda x: returned)
