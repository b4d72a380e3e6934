"""The core contract: errors, evaluation counts, import isolation, fallbacks, the quickstart.

Values on every backend are checked by the conformance kit (tests/core/test_conformance.py);
this file checks what the core itself promises.
"""

import subprocess
import sys

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing import CountingFunction as Counted
from diffinterface.testing.backends import BACKENDS

from tests.paths import ROOT

FD_METHODS = ["forward", "central", "complex"]


def sum_of_squares(x):
    return (x**2).sum()


# --- import isolation and packaging -----------------------------------------------------


def test_import_pulls_in_no_framework():
    code = (
        "import sys, diffinterface, diffinterface.testing; "
        "print(','.join(m for m in ('jax', 'torch', 'autograd', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_plain_gradient_imports_no_wrapper_it_does_not_use():
    # cold start: AutoSparse and DifferentiateWith are imported on first access, and still reachable
    code = (
        "import sys, numpy as np, diffinterface as di\n"
        "di.gradient(lambda x: (x * x).sum(), di.AutoFiniteDiff(), np.ones(3))\n"
        "print(sorted(m for m in sys.modules if m.startswith('diffinterface.wrappers.')))\n"
        "from diffinterface import AutoSparse, coloring\n"
        "print(AutoSparse is di.AutoSparse, callable(coloring), 'DifferentiateWith' in dir(di))\n"
        "from diffinterface.core.registry import registration\n"
        "print(registration(di.AutoSparse(di.AutoFiniteDiff())).extra)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    imported, names, extra = out.stdout.strip().splitlines()
    assert imported == "[]"
    assert names == "True True True"
    assert extra == "sparse"  # the registry finds AutoSparse's adapter once AutoSparse is reachable


def test_missing_framework_names_the_pip_extra():
    # Block jax's import in a subprocess: the selector still works, its first use fails clearly.
    code = (
        "import sys; sys.modules['jax'] = None\n"
        "import numpy as np, diffinterface as di\n"
        "b = di.AutoJAX()\n"
        "print(di.check_available(b))\n"
        "try:\n"
        "    di.gradient(lambda x: x.sum(), b, np.ones(2))\n"
        "except di.MissingBackendError as e:\n"
        "    print(type(e).__mro__[1].__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "False"
    assert lines[1].startswith("ImportError")
    assert "diffinterface[jax]" in lines[1]


def test_quickstart_runs_every_installed_backend():
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr + out.stdout
    lines = out.stdout.splitlines()
    for name in (
        "AutoFiniteDiff",
        "AutoJAX",
        "AutoTorch",
        "AutoTensorFlow",
        "AutoAutograd",
        "AutoMLX",
    ):
        # each backend's name on its own line, its results on the next
        i = next(i for i, line in enumerate(lines) if line.startswith(name))
        assert lines[i + 1].endswith("ok"), lines[i : i + 2]


def test_selectors_are_frozen_and_hashable():
    assert {di.AutoJAX(), di.AutoJAX()} == {di.AutoJAX()}
    with pytest.raises(Exception):
        di.AutoJAX().mode = "forward"
    with pytest.raises(ValueError, match="mode"):
        di.AutoTorch(mode="sideways")
    with pytest.raises(ValueError, match="method"):
        di.AutoFiniteDiff(method="backward")
    with pytest.raises(TypeError, match="inner"):
        di.SecondOrder(di.AutoFiniteDiff(), "torch")


def test_selectors_behave_as_frozen_dataclasses():
    # selectors are diffinterface.frozen.Frozen values: a dataclass's constructor, repr, equality and hash
    fd = di.AutoFiniteDiff("forward", abs_step=1e-3)
    assert (
        fd
        == di.AutoFiniteDiff(method="forward", rel_step=None, abs_step=1e-3)
        != di.AutoFiniteDiff()
    )
    assert hash(fd) == hash(di.AutoFiniteDiff("forward", None, 1e-3))
    assert repr(di.AutoJAX()) == "AutoJAX(mode=None, jit=True)"
    assert di.AutoJAX() != di.AutoTorch() and di.AutoAutograd() == di.AutoAutograd()
    with pytest.raises(AttributeError, match="cannot assign to field 'method'"):
        fd.method = "central"
    with pytest.raises(TypeError, match=r"AutoJAX\(mode.*too many positional"):
        di.AutoJAX(None, True, 3)
    with pytest.raises(TypeError, match=r"AutoTorch\(mode.*unexpected keyword argument 'jit'"):
        di.AutoTorch(jit=True)


def test_a_positional_pair_and_a_keyword_never_share_a_cached_value():
    from diffinterface.frozen import Frozen

    class Pair(Frozen):
        a: object
        b: object = None
        c: object = None

    # positional (1, ("c", (2,))) and (1, c=(2,)) once made the same constructor-cache key
    first = Pair(1, ("c", (2,)))
    second = Pair(1, c=(2,))
    assert first.b == ("c", (2,)) and first.c is None
    assert second.b is None and second.c == (2,)


# --- errors ---------------------------------------------------------------------------------


def test_unknown_backend_names_the_selectors():
    with pytest.raises(
        TypeError,
        match=r"backend: expected a backend selector \(AutoFiniteDiff\(\), AutoJAX\(\), AutoTorch\(\)",
    ):
        di.gradient(sum_of_squares, "jax", np.ones(3))


def test_gradient_of_non_scalar_function_gives_the_shape():
    with pytest.raises(ValueError, match=r"returns shape \(3,\)"):
        di.gradient(lambda x: x**2, di.AutoFiniteDiff(), np.ones(3))


def test_derivative_needs_scalar_x():
    with pytest.raises(ValueError, match=r"x: derivative expects a scalar x.*shape \(3,\)"):
        di.derivative(np.sin, di.AutoFiniteDiff(), np.ones(3))


def test_x_must_be_a_float_array():
    with pytest.raises(TypeError, match="x: expected a real floating-point array.*int64"):
        di.gradient(sum_of_squares, di.AutoFiniteDiff(), np.arange(3))
    with pytest.raises(
        TypeError, match="x: expected a float, an array or a pytree of arrays; got str"
    ):
        di.gradient(sum_of_squares, di.AutoFiniteDiff(), "1.0")


def test_tangents_are_a_tuple_of_x_shaped_arrays():
    x = np.ones(3)
    with pytest.raises(TypeError, match="tangents: expected a non-empty tuple"):
        di.pushforward(np.sin, di.AutoFiniteDiff(), x, np.ones(3))
    with pytest.raises(
        ValueError, match=r"tangents\[1\]: expected an array shaped like x, \(3,\); got .*\(4,\)"
    ):
        di.pushforward(np.sin, di.AutoFiniteDiff(), x, (np.ones(3), np.ones(4)))
    with pytest.raises(
        ValueError, match=r"cotangents\[0\]: expected an array shaped like the output y, \(2,\)"
    ):
        di.pullback(lambda x: x[:2], di.AutoFiniteDiff(), x, (np.ones(3),))


def test_contexts_must_be_wrapped():
    with pytest.raises(TypeError, match=r"contexts\[0\]: arguments after x must be wrapped"):
        di.gradient(lambda x, c: c * sum_of_squares(x), di.AutoFiniteDiff(), np.ones(2), 3.0)


def test_out_of_the_wrong_shape_or_dtype():
    x = np.ones(3)
    with pytest.raises(
        ValueError,
        match=r"out: expected a buffer like the result, a numpy float64 array of shape \(3,\); got a numpy float64 array of shape \(4,\)",
    ):
        di.gradient(sum_of_squares, di.AutoFiniteDiff(), x, out=np.empty(4))
    with pytest.raises(ValueError, match=r"out: .*got a numpy float32"):
        di.gradient(sum_of_squares, di.AutoFiniteDiff(), x, out=np.empty(3, dtype=np.float32))
    with pytest.raises(ValueError, match=r"out: expected a tuple of 2 buffers"):
        di.pushforward(np.sin, di.AutoFiniteDiff(), x, (x, x), out=np.empty(3))


@pytest.mark.parametrize("backend", list(BACKENDS.values()), ids=list(BACKENDS))
def test_two_argument_functions_follow_the_declared_capability(backend):
    def square_into(y, x):
        y[:] = x**2

    x, y = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    if di.check_inplace(backend):
        J = di.jacobian(square_into, backend, x, y=y)
        np.testing.assert_allclose(J, np.diag(2 * x), rtol=1e-6)
        np.testing.assert_allclose(y, x**2)
    else:
        with pytest.raises(
            di.UnsupportedError, match=r"y: .* cannot differentiate two-argument functions"
        ):
            di.jacobian(square_into, backend, x, y=y)
        assert not y.any()


def test_prepared_call_mismatch_lists_every_slot():
    backend = di.AutoFiniteDiff()
    x = np.ones(3, dtype=np.float64)

    def f(x, c):
        return c * sum_of_squares(x)

    prep = di.prepare_gradient(f, backend, x, di.Constant(2.0), strict=True)
    with pytest.raises(di.PreparationMismatchError) as info:
        di.gradient(f, backend, np.ones(4, dtype=np.float32), di.Constant(2.0), prep=prep)
    message = str(info.value)
    assert (
        "f: matches" in message and "backend: matches" in message and "contexts: matches" in message
    )
    assert (
        "x: MISMATCH, prepared numpy.ndarray float64 (3,), given numpy.ndarray float32 (4,)"
        in message
    )
    assert isinstance(info.value, ValueError)


def test_y_for_an_operator_without_two_argument_functions_is_refused():
    backend, x = di.AutoFiniteDiff(), np.ones(3)
    prep = di.prepare_gradient(sum_of_squares, backend, x)
    with pytest.raises(TypeError, match=r"gradient\(\) got an unexpected keyword argument 'y'"):
        di.gradient(sum_of_squares, backend, x, prep=prep, y=np.zeros(()))


def test_prepared_call_with_another_tangent_count_is_a_mismatch():
    backend, x = di.AutoFiniteDiff(), np.ones(2)
    prep = di.prepare_pushforward(np.sin, backend, x, (x,), strict=True)
    with pytest.raises(di.PreparationMismatchError, match=r"tangents: MISMATCH"):
        di.pushforward(np.sin, backend, x, (x, x), prep=prep)


def test_preparation_of_another_operator_is_rejected():
    prep = di.prepare_gradient(sum_of_squares, di.AutoFiniteDiff(), np.ones(2))
    with pytest.raises(di.PreparationMismatchError, match="prepare_gradient.*passed to jacobian"):
        di.jacobian(np.sin, di.AutoFiniteDiff(), np.ones(2), prep=prep)


def test_errors_leave_inputs_untouched():
    x = np.array([1.0, 2.0, 3.0])
    y = np.zeros(3)
    before = x.copy()
    for call in (
        lambda: di.gradient(lambda x: x, di.AutoFiniteDiff(), x),
        lambda: di.gradient(sum_of_squares, di.AutoFiniteDiff(), x, out=np.empty(2)),
        lambda: di.jacobian(
            lambda y, x: y.__setitem__(slice(None), x), di.AutoFiniteDiff(), x, y=y, out=np.empty(2)
        ),
    ):
        with pytest.raises((ValueError, TypeError)):
            call()
        assert np.array_equal(x, before)


# --- finite differences: exact evaluation counts ---------------------------------------------

# (method, operator) -> evaluations per prepared call for n inputs
EXPECTED_COUNTS = {
    ("forward", "gradient"): lambda n: n + 1,
    ("forward", "value_and_gradient"): lambda n: n + 1,
    ("central", "gradient"): lambda n: 2 * n,
    ("central", "value_and_gradient"): lambda n: 2 * n + 1,
    ("complex", "gradient"): lambda n: n,
    ("complex", "value_and_gradient"): lambda n: n,
    ("forward", "jacobian"): lambda n: n + 1,
    ("forward", "value_and_jacobian"): lambda n: n + 1,
    ("central", "jacobian"): lambda n: 2 * n,
    ("central", "value_and_jacobian"): lambda n: 2 * n + 1,
    ("complex", "jacobian"): lambda n: n,
    ("forward", "derivative"): lambda n: 2,
    ("central", "derivative"): lambda n: 2,
    ("complex", "derivative"): lambda n: 1,
    ("central", "value_and_derivative"): lambda n: 3,
}


@pytest.mark.parametrize("method, operator", list(EXPECTED_COUNTS), ids=lambda v: v)
def test_finite_difference_evaluation_counts(method, operator):
    backend = di.AutoFiniteDiff(method=method)
    scalar_in = operator.endswith("derivative")
    x = np.float64(0.3) if scalar_in else np.linspace(0.1, 1.0, 7)
    n = 1 if scalar_in else x.size
    base = {
        "gradient": lambda x: (np.sin(x) * x).sum(),
        "jacobian": lambda x: np.sin(x) * x[::-1],
        "derivative": lambda x: np.array([np.sin(x), x**3]),
    }[operator.removeprefix("value_and_")]
    f = Counted(base)
    prepare = getattr(di, "prepare_" + operator.removeprefix("value_and_"))
    prep = prepare(f, backend, x)
    f.count = 0
    getattr(di, operator)(f, backend, x, prep=prep)
    assert f.count == EXPECTED_COUNTS[method, operator](n)


def test_finite_differences_never_modify_x_and_keep_float32():
    x = np.linspace(0.5, 1.5, 4, dtype=np.float32)
    before = x.copy()
    for method in FD_METHODS:
        g = di.gradient(lambda x: (x**3).sum(), di.AutoFiniteDiff(method=method), x)
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, 3 * before**2, rtol=2e-3)
    assert np.array_equal(x, before)


def test_finite_difference_steps_can_be_set():
    x = np.array([1.0])
    coarse = di.gradient(
        lambda x: (x**3).sum(), di.AutoFiniteDiff(method="forward", rel_step=0.1, abs_step=0.1), x
    )
    np.testing.assert_allclose(coarse, [3.31], rtol=1e-12)  # ((1.1)^3 - 1) / 0.1


def test_adaptive_finite_differences_are_accurate():
    x = np.linspace(0.2, 2.0, 4)
    J = di.jacobian(lambda x: np.exp(x) * x[0], di.AutoFiniteDiff(method="adaptive"), x)
    expected = np.diag(np.exp(x) * x[0])
    expected[:, 0] += np.exp(x)
    np.testing.assert_allclose(J, expected, rtol=1e-9, atol=1e-10)


def test_adaptive_without_scipy_says_what_to_install():
    code = (
        "import sys; sys.modules['scipy'] = None; sys.modules['scipy.differentiate'] = None\n"
        "import numpy as np, diffinterface as di\n"
        "try:\n"
        "    di.gradient(lambda x: x.sum(), di.AutoFiniteDiff(method='adaptive'), np.ones(2))\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "scipy.differentiate" in out.stdout and "diffinterface[scipy]" in out.stdout


# --- fallbacks through the zero backends ------------------------------------------------------

ZERO = [di.AutoZeroForward(), di.AutoZeroReverse()]


@pytest.mark.parametrize("backend", ZERO, ids=repr)
@pytest.mark.parametrize(
    "f, x",
    [
        (lambda x: x**2, np.ones((2, 3))),
        (lambda x: np.array([x, x**2, x**3]), np.float64(0.5)),
        (lambda x: x.sum(), np.ones(4)),
    ],
    ids=["matrix-to-matrix", "scalar-to-vector", "vector-to-scalar"],
)
def test_fallbacks_give_the_contract_shapes(backend, f, x):
    y = f(x)
    x_shape, y_shape = np.shape(x), np.shape(y)
    assert di.jacobian(f, backend, x).shape == y_shape + x_shape
    (pf, pf2) = di.pushforward(f, backend, x, (np.ones(x_shape), -np.ones(x_shape)))
    assert pf.shape == pf2.shape == y_shape
    (pb,) = di.pullback(f, backend, x, (np.ones(y_shape),))
    assert np.shape(pb) == x_shape
    if x_shape == ():
        assert np.shape(di.derivative(f, backend, x)) == y_shape
    if y_shape == ():
        assert di.gradient(f, backend, x).shape == x_shape
    value, _ = di.value_and_jacobian(f, backend, x)
    np.testing.assert_array_equal(value, y)


@pytest.mark.parametrize("backend", ZERO, ids=repr)
def test_reverse_derivative_spends_no_evaluation_on_the_output_shape(backend):
    # Seed 003: derivative in reverse mode; the output shape comes from preparation.
    f = Counted(lambda x: np.array([[x + 1, x + 2], [x - 1, x * 2]]))
    prep = di.prepare_derivative(f, backend, 1.0)
    f.count = 0
    di.value_and_derivative(f, backend, 1.0, prep=prep)
    assert f.count == 1


def test_zero_backends_support_two_argument_functions():
    def into(y, x):
        y[:] = x[::-1] * 2

    for backend in ZERO:
        y = np.zeros(3)
        value, J = di.value_and_jacobian(into, backend, np.arange(3.0), y=y)
        assert value is y and np.array_equal(y, [4.0, 2.0, 0.0]) and J.shape == (3, 3)


# --- finite differences through every variant, against analytic derivatives ---------------------


@pytest.mark.parametrize("method", FD_METHODS)
def test_finite_differences_every_variant(method):
    backend = di.AutoFiniteDiff(method=method)
    x = np.array([0.5, -1.0, 2.0])

    def f(x, c):
        return c * np.sin(x) * x[0]

    def J(x, c):
        out = np.diag(c * np.cos(x) * x[0])
        out[:, 0] += c * np.sin(x)
        return out

    prep = di.prepare_jacobian(f, backend, x, di.Constant(2.0), strict=True)
    for c in (2.0, -3.0):  # the Constant changes between prepared calls
        for _ in range(2):  # prepared twice
            np.testing.assert_allclose(
                di.jacobian(f, backend, x, di.Constant(c), prep=prep), J(x, c), rtol=1e-6, atol=1e-8
            )
        out = np.empty((3, 3))
        assert di.jacobian(f, backend, x, di.Constant(c), prep=prep, out=out) is out
        np.testing.assert_allclose(out, J(x, c), rtol=1e-6, atol=1e-8)
        value, jac = di.value_and_jacobian(f, backend, x, di.Constant(c), prep=prep)
        np.testing.assert_allclose(value, f(x, c), rtol=1e-12)

    def f_into(y, x):
        y[:] = 2.0 * np.sin(x) * x[0]

    y = np.zeros(3)
    jac = di.jacobian(f_into, backend, x, y=y)
    np.testing.assert_allclose(jac, J(x, 2.0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(y, f(x, 2.0), rtol=1e-12)
