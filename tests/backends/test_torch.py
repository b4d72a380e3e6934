"""AutoTorch: what the torch adapter promises beyond the conformance kit's values.

Arrays (numpy in numpy out, tensors in tensors out, dtypes kept), user
tensors untouched (``.grad`` stays None, ``requires_grad`` unchanged),
two-argument functions, output shape from one evaluation (no torch._dynamo), vectorized seeds
(one evaluation of f per call, never a Python loop), contexts, ``no_grad``.
"""

import subprocess
import sys

import numpy as np
import pytest
import torch

import diffinterface as di
from diffinterface.core import get_adapter
from diffinterface.backends.torch.boundary import _numpy_to_torch
from diffinterface.testing import CountingFunction

from diffinterface.testing.analytic_functions import coupled, coupled_jacobian
from diffinterface.testing.analytic_functions import sin_weighted_sum as scalar_f
from diffinterface.testing.analytic_functions import sin_weighted_sum_gradient as scalar_f_gradient
from diffinterface.testing.analytic_functions import sin_weighted_sum_hessian as scalar_f_hessian
from tests.paths import ROOT

BACKENDS = {
    "torch": di.AutoTorch(),
    "torch-forward": di.AutoTorch(mode="forward"),
    "torch-reverse": di.AutoTorch(mode="reverse"),
}
F64 = torch.float64


@pytest.fixture(params=list(BACKENDS), ids=list(BACKENDS))
def backend(request):
    return BACKENDS[request.param]


class Counted(CountingFunction):
    """The kit's counter of numeric calls, ``count``; calls on meta tensors, which the adapter avoids,
    are counted apart, in ``meta_calls``."""

    def __init__(self, f):
        super().__init__(f)
        self.meta_calls = 0

    def __call__(self, x, *ctx):
        if isinstance(x, torch.Tensor) and x.device.type == "meta":
            self.meta_calls += 1
            return self.f(x, *ctx)
        return super().__call__(x, *ctx)


def curve(x):
    """A scalar x to three outputs."""
    return torch.stack([x**3, 2 * x, torch.sin(x)])


def curve_derivative(x):
    return np.array([3 * x**2, 2.0, np.cos(x)])


def curve_second(x):
    return np.array([6 * x, 0.0, -np.sin(x)])


X = np.array([0.3, -1.2, 2.0, 0.7])
T1 = np.array([1.0, 0.5, -2.0, 0.25])
T2 = np.array([0.0, 1.0, 3.0, -1.0])


def every_operator(backend, x, t1, t2, s):
    """Call every operator (plain and value_and) once; return {name: result}."""
    results = {}
    results["pushforward"] = di.pushforward(coupled, backend, x, (t1,))
    results["pushforward batched"] = di.pushforward(coupled, backend, x, (t1, t2))
    results["value_and_pushforward"] = di.value_and_pushforward(coupled, backend, x, (t1,))
    results["pullback"] = di.pullback(coupled, backend, x, (t1,))
    results["pullback batched"] = di.pullback(coupled, backend, x, (t1, t2))
    results["value_and_pullback"] = di.value_and_pullback(coupled, backend, x, (t1, t2))
    results["gradient"] = di.gradient(scalar_f, backend, x)
    results["value_and_gradient"] = di.value_and_gradient(scalar_f, backend, x)
    results["jacobian"] = di.jacobian(coupled, backend, x)
    results["value_and_jacobian"] = di.value_and_jacobian(coupled, backend, x)
    results["derivative"] = di.derivative(curve, backend, s)
    results["value_and_derivative"] = di.value_and_derivative(curve, backend, s)
    results["hessian"] = di.hessian(scalar_f, backend, x)
    results["value_gradient_and_hessian"] = di.value_gradient_and_hessian(scalar_f, backend, x)
    results["hvp"] = di.hvp(scalar_f, backend, x, (t1, t2))
    results["gradient_and_hvp"] = di.gradient_and_hvp(scalar_f, backend, x, (t1,))
    results["second_derivative"] = di.second_derivative(curve, backend, s)
    results["value_derivative_and_second_derivative"] = di.value_derivative_and_second_derivative(
        curve, backend, s
    )
    return results


def leaves(result):
    if isinstance(result, tuple):
        for r in result:
            yield from leaves(r)
    else:
        yield result


def test_user_tensors_keep_no_grad_and_their_flags(backend):
    x = torch.tensor(X, requires_grad=True)
    t1 = torch.tensor(T1, requires_grad=True)
    t2 = torch.tensor(T2)
    s = torch.tensor(0.4, dtype=F64, requires_grad=True)
    before = x.detach().clone()
    results = every_operator(backend, x, t1, t2, s)
    with torch.no_grad():
        detached = every_operator(backend, x, t1, t2, s)
    assert x.grad is None and t1.grad is None and s.grad is None
    assert x.requires_grad and t1.requires_grad and s.requires_grad and not t2.requires_grad
    assert torch.equal(x.detach(), before)
    for name, result in results.items():
        for r, plain in zip(leaves(result), leaves(detached[name])):
            assert isinstance(r, torch.Tensor), name
            # x requires grad: results stay in its graph, unless asked for under no_grad
            assert r.requires_grad, f"{name} returned a tensor detached from x's graph"
            assert not plain.requires_grad, f"{name} under no_grad returned a tensor in a graph"
            assert r.dtype == F64, name
            torch.testing.assert_close(r.detach(), plain, rtol=1e-12, atol=1e-12)


def test_parameters_closed_over_accumulate_no_grad(backend):
    weight = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=F64, requires_grad=True)

    def f(x):
        return torch.sum(weight * x**2)

    g = di.gradient(f, backend, torch.tensor(X))
    h = di.hessian(f, backend, torch.tensor(X))
    np.testing.assert_allclose(g.detach().numpy(), 2 * weight.detach().numpy() * X)
    np.testing.assert_allclose(h.detach().numpy(), np.diag(2 * weight.detach().numpy()))
    # the results stay in weight's graph (a gradient penalty differentiates them again)
    assert weight.grad is None and g.requires_grad and h.requires_grad
    with torch.no_grad():
        assert not di.gradient(f, backend, torch.tensor(X)).requires_grad


def test_numpy_in_numpy_out(backend):
    results = every_operator(backend, X.copy(), T1, T2, 0.4)
    for name, result in results.items():
        for r in leaves(result):
            assert isinstance(r, np.ndarray), f"{name} returned {type(r).__name__}"
            assert r.dtype == np.float64, name
    np.testing.assert_allclose(results["gradient"], scalar_f_gradient(X), rtol=1e-12)
    np.testing.assert_allclose(results["jacobian"], coupled_jacobian(X), rtol=1e-12)
    np.testing.assert_allclose(
        results["pushforward batched"][1], coupled_jacobian(X) @ T2, rtol=1e-12
    )
    np.testing.assert_allclose(results["pullback batched"][1], T2 @ coupled_jacobian(X), rtol=1e-12)
    np.testing.assert_allclose(results["derivative"], curve_derivative(0.4), rtol=1e-12)
    np.testing.assert_allclose(results["hessian"], scalar_f_hessian(X), rtol=1e-12)
    np.testing.assert_allclose(results["hvp"][0], scalar_f_hessian(X) @ T1, rtol=1e-12)
    np.testing.assert_allclose(
        results["second_derivative"], curve_second(0.4), rtol=1e-12, atol=1e-15
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tensors_keep_their_dtype(backend, dtype):
    x = torch.tensor(X, dtype=dtype)
    for result in (
        di.gradient(scalar_f, backend, x),
        di.jacobian(coupled, backend, x),
        di.pushforward(coupled, backend, x, (torch.tensor(T1, dtype=dtype),))[0],
        di.pullback(coupled, backend, x, (torch.tensor(T1, dtype=dtype),))[0],
        di.hessian(scalar_f, backend, x),
    ):
        assert result.dtype == dtype and result.device == x.device
    rtol = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(
        di.gradient(scalar_f, backend, x).numpy(), scalar_f_gradient(X), rtol=rtol
    )


def test_numpy_arrays_enter_torch_without_a_copy():
    a = np.arange(4.0)
    t = _numpy_to_torch(a)
    assert np.shares_memory(t.numpy(), a) and t.dtype == F64
    frozen = np.arange(4.0)
    frozen.flags.writeable = False
    with np.testing.assert_no_warnings():
        g = di.gradient(scalar_f, di.AutoTorch(), frozen)
    np.testing.assert_allclose(g, scalar_f_gradient(np.arange(4.0)))
    np.testing.assert_array_equal(frozen, np.arange(4.0))


def test_python_float_stays_float64(backend):
    d = di.derivative(lambda x: x**3, backend, 0.5)
    assert isinstance(d, np.ndarray) and d.dtype == np.float64
    assert float(d) == pytest.approx(0.75, rel=1e-14)


def square_into(y, x):
    y[...] = x**2
    y[0] = y[0] + x[1] * x[2]


def square_into_jacobian(x):
    jac = np.diag(2 * x)
    jac[0, 1] += x[2]
    jac[0, 2] += x[1]
    return jac


@pytest.mark.parametrize("family", ["numpy", "torch"])
def test_two_argument_functions(backend, family):
    x_np = np.array([1.0, 2.0, 3.0])
    t_np = np.array([1.0, -1.0, 0.5])
    if family == "torch":
        x, t, new = (
            torch.tensor(x_np, requires_grad=True),
            torch.tensor(t_np),
            lambda: torch.zeros(3, dtype=F64),
        )
    else:
        x, t, new = x_np, t_np, lambda: np.zeros(3)
    value = x_np**2 + np.array([x_np[1] * x_np[2], 0, 0])
    jac = square_into_jacobian(x_np)

    def as_np(a):
        return a.detach().numpy() if isinstance(a, torch.Tensor) else a

    y = new()
    np.testing.assert_allclose(as_np(di.jacobian(square_into, backend, x, y=y)), jac)
    np.testing.assert_allclose(as_np(y), value)
    y = new()
    (p,) = di.pushforward(square_into, backend, x, (t,), y=y)
    np.testing.assert_allclose(as_np(p), jac @ t_np)
    np.testing.assert_allclose(as_np(y), value)
    y = new()
    value_out, (c,) = di.value_and_pullback(square_into, backend, x, (t,), y=y)
    np.testing.assert_allclose(as_np(c), t_np @ jac)
    assert value_out is y
    np.testing.assert_allclose(as_np(y), value)

    def curve_into(y, s):
        y[0] = s**3
        y[1] = 2 * s

    y = new()[:2]
    s = torch.tensor(0.5, dtype=F64) if family == "torch" else 0.5
    d = di.derivative(curve_into, backend, s, y=y)
    np.testing.assert_allclose(as_np(d), [0.75, 2.0])
    np.testing.assert_allclose(as_np(y), [0.125, 1.0])
    if family == "torch":
        assert x.grad is None


def test_two_argument_preparation_evaluates_nothing_and_leaves_y_alone(backend):
    f = CountingFunction(square_into)
    y = np.full(3, 7.0)
    prep = di.prepare_jacobian(f, backend, np.array([1.0, 2.0, 3.0]), y=y)
    assert f.count == 0 and np.all(y == 7.0)
    di.jacobian(f, backend, np.array([1.0, 2.0, 3.0]), y=y, prep=prep)
    assert f.count == 1


def test_output_shape_from_one_evaluation_at_preparation():
    f = Counted(coupled)
    prep = di.prepare_jacobian(f, di.AutoTorch(), X)
    assert (f.count, f.meta_calls) == (1, 0)
    assert prep.spec.shape == (4,) and prep.spec.dtype == "float64"
    di.jacobian(f, di.AutoTorch(), X, prep=prep)
    assert f.count == 2


def test_a_first_gradient_imports_no_dynamo():
    # torch._dynamo (pulled in by the meta kernels, among others) costs 2-3 s in a fresh process:
    # only AutoTorch(compile=True) may load it.
    script = (
        "import sys, torch, diffinterface as di\n"
        "x = torch.linspace(0.1, 1.0, 5, dtype=torch.float64)\n"
        "f = lambda x: (x.sin() * x ** 2).sum()\n"
        "for operator in ('gradient', 'jacobian', 'hessian'):\n"
        "    g = f if operator != 'jacobian' else (lambda x: x.sin() * x ** 2)\n"
        "    getattr(di, operator)(g, di.AutoTorch(), x)\n"
        "print(sorted(m for m in sys.modules if m.startswith('torch._dynamo')))\n"
    )
    root = ROOT
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=root
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


@pytest.mark.parametrize(
    "operator, seeds",
    [
        ("jacobian", lambda x: ()),
        ("pushforward", lambda x: ((x, 2 * x, 3 * x),)),
        ("pullback", lambda x: ((x, 2 * x, 3 * x),)),
    ],
)
def test_seeds_are_vectorized_one_evaluation_per_call(backend, operator, seeds):
    f = Counted(coupled)
    x = np.linspace(0.1, 2.0, 50)
    prep = getattr(di, "prepare_" + operator)(
        f, backend, x, *seeds(x)
    )  # one evaluation: the output shape
    f.take()
    getattr(di, operator)(f, backend, x, *seeds(x), prep=prep)
    # The prepared call traces f once for all 50 (or 3) seeds.
    assert f.count == 1, f"{operator} evaluated f {f.count} times: seeds are looped, not vectorized"


@pytest.mark.parametrize("operator", ["hessian", "hvp"])
def test_second_order_is_vectorized(backend, operator):
    f = Counted(scalar_f)
    x = np.linspace(0.1, 2.0, 30)
    if operator == "hessian":
        prep = di.prepare_hessian(f, backend, x)
        f.take()
        h = di.hessian(f, backend, x, prep=prep)
        np.testing.assert_allclose(h, scalar_f_hessian(x), rtol=1e-12)
    else:
        tangents = (x, 2 * x, 3 * x)
        prep = di.prepare_hvp(f, backend, x, tangents)
        f.take()
        di.hvp(f, backend, x, tangents, prep=prep)
    assert f.count == 1


def test_native_second_order_impls():
    adapter = get_adapter(di.AutoTorch())
    assert type(adapter).__name__ == "TorchAdapter"
    prep = di.prepare_hessian(scalar_f, di.AutoTorch(), X)
    value, gradient, hessian = prep.impl.value_gradient_and_hessian(X)
    np.testing.assert_allclose(value, scalar_f(X))
    np.testing.assert_allclose(gradient, scalar_f_gradient(X))
    np.testing.assert_allclose(hessian, scalar_f_hessian(X))
    prep = di.prepare_second_derivative(curve, di.AutoTorch(), 0.4)
    value, d, d2 = prep.impl.value_derivative_and_second_derivative(0.4)
    np.testing.assert_allclose(d, curve_derivative(0.4))
    np.testing.assert_allclose(d2, curve_second(0.4), atol=1e-15)


def test_works_inside_no_grad(backend):
    x = torch.tensor(X)
    with torch.no_grad():
        g = di.gradient(scalar_f, backend, x)
        h = di.hessian(scalar_f, backend, x)
        (p,) = di.pullback(coupled, backend, x, (torch.tensor(T1),))
        (q,) = di.pushforward(coupled, backend, x, (torch.tensor(T1),))
        d = di.derivative(curve, backend, torch.tensor(0.4, dtype=F64))
    np.testing.assert_allclose(q.numpy(), coupled_jacobian(X) @ T1)
    np.testing.assert_allclose(d.numpy(), curve_derivative(0.4))
    np.testing.assert_allclose(g.numpy(), scalar_f_gradient(X))
    np.testing.assert_allclose(h.numpy(), scalar_f_hessian(X))
    np.testing.assert_allclose(p.numpy(), T1 @ coupled_jacobian(X))


def test_contexts_numpy_and_tensor(backend):
    def f(x, scale, offset):
        return torch.sum(scale * (x - offset) ** 2)

    scale = np.array([1.0, 2.0, 3.0, 4.0])
    offset = torch.tensor([0.5, 0.5, 0.5, 0.5], dtype=F64, requires_grad=True)
    g = di.gradient(f, backend, X, di.Constant(scale), di.Constant(offset))
    np.testing.assert_allclose(g, 2 * scale * (X - 0.5))
    assert offset.grad is None and offset.requires_grad
    np.testing.assert_array_equal(scale, [1.0, 2.0, 3.0, 4.0])


def test_functions_that_ignore_x_give_zeros_only_when_torch_sees_through(backend):
    x = torch.tensor(X)
    g = di.gradient(lambda x: 0 * (x**2).sum(), backend, x)
    jac = di.jacobian(lambda x: 0 * x[:2], backend, x)
    assert torch.equal(g, torch.zeros(4, dtype=F64))
    assert torch.equal(jac, torch.zeros(2, 4, dtype=F64))
    # a constant output is indistinguishable from a broken graph: an error, never a silent zero
    with pytest.raises(di.GraphBreakError, match="does not depend on x through torch's graph"):
        di.gradient(lambda x: torch.tensor(3.0, dtype=F64), backend, x)
    with pytest.raises(di.GraphBreakError):
        di.pullback(lambda x: torch.ones(2, dtype=F64), backend, x, (torch.ones(2, dtype=F64),))


def test_array_namespace_serves_the_same_source():
    xt = torch.tensor(X)
    xp = di.array_namespace(xt)
    # array-api-compat's torch namespace, whose symmetric-matrix routines read the symmetric part
    assert xp.__name__ == "diffinterface.families.torch_namespace"
    assert xp.sin is torch.sin and xp.linalg.cholesky is not torch.linalg.cholesky
    g_torch = di.gradient(scalar_f, di.AutoTorch(), xt)
    g_fd = di.gradient(scalar_f, di.AutoFiniteDiff(), X)
    np.testing.assert_allclose(g_torch.numpy(), g_fd, rtol=1e-6)


def test_other_families_are_refused_by_name():
    import jax.numpy as jnp

    with pytest.raises(TypeError, match="x: AutoTorch differentiates numpy or torch arrays"):
        di.gradient(scalar_f, di.AutoTorch(), jnp.ones(3))
    with pytest.raises(TypeError, match="x: expected a real floating-point array"):
        di.gradient(scalar_f, di.AutoTorch(), torch.tensor([1, 2, 3]))


def test_compile_gives_the_same_gradient():
    # Experimental: torch.compile at preparation (seconds of compilation on CPU).
    backend = di.AutoTorch(compile=True)
    x = torch.tensor(X, requires_grad=True)
    prep = di.prepare_gradient(scalar_f, backend, x)
    value, g = di.value_and_gradient(scalar_f, backend, x, prep=prep)
    np.testing.assert_allclose(g.detach().numpy(), scalar_f_gradient(X), rtol=1e-12)
    np.testing.assert_allclose(float(value), float(np.sum(np.sin(X) * X**2)), rtol=1e-12)
    assert x.grad is None and x.requires_grad and g.requires_grad  # in x's graph
    g2 = di.gradient(scalar_f, backend, torch.tensor(X + 1.0), prep=prep)
    np.testing.assert_allclose(g2.numpy(), scalar_f_gradient(X + 1.0), rtol=1e-12)
    with pytest.raises(TypeError, match="compile"):
        di.AutoTorch(compile="yes")


def test_size_dependent_recipes_agree(backend):
    # mode=None switches derivative to dual numbers above 100 outputs, and the forward
    # Jacobian from autograd.functional to vmap(jvp) above 16 inputs: both sides must agree.
    a = np.linspace(-1.0, 1.0, 150)
    f = Counted(lambda s: torch.sin(torch.as_tensor(a) * s))
    prep = di.prepare_derivative(f, backend, 0.3)
    f.take()
    d = di.derivative(f, backend, 0.3, prep=prep)
    np.testing.assert_allclose(d, a * np.cos(a * 0.3), rtol=1e-12)
    assert f.count == 1
    x = np.linspace(0.1, 1.0, 400)
    jac = di.jacobian(lambda x: x**2, backend, x)
    np.testing.assert_allclose(jac, np.diag(2 * x), rtol=1e-12)
    value, jac = di.value_and_jacobian(lambda x: x**2, backend, x)
    np.testing.assert_allclose(jac, np.diag(2 * x), rtol=1e-12)
    np.testing.assert_allclose(value, x**2)


def test_the_memory_rule_counts_new_tensors_not_views_of_closed_over_ones():
    """``A.T`` of a closed-over A allocates nothing per seed; counted as f's own memory, a view of a large
    matrix cut the Jacobian's sweep to one seed per vectorized pass. A new n x n tensor still counts."""
    n = 400
    A = torch.linspace(-1.0, 1.0, n * n, dtype=F64).reshape(n, n)
    x = torch.linspace(0.1, 1.0, n, dtype=F64)
    # 4 MiB: one seed of the views' f needs tens of KiB, A alone is 1.25 MiB
    backend = di.AutoTorch(memory_budget=2**22)

    def views(x):
        return torch.tanh(torch.sin(x) @ A.T.to(F64))

    def new_matrix(x):
        return (A * x).sum(1)

    prep = di.prepare_jacobian(views, backend, x)
    assert di.batch_size(prep) > 100
    expected = (1 - views(x) ** 2)[:, None] * A * torch.cos(x)[None, :]
    torch.testing.assert_close(di.jacobian(views, backend, x, prep=prep), expected)
    assert di.batch_size(di.prepare_jacobian(new_matrix, backend, x)) <= 2


def test_a_closed_over_numpy_array_gives_the_derivative_or_a_named_error_never_zeros(backend):
    # forward mode used to return a zero Jacobian for x * A: numpy took the dual tensor's primal
    A = np.arange(1.0, 10.0).reshape(3, 3)
    x = np.array([0.2, 0.5, 0.9])
    np.testing.assert_allclose(di.jacobian(lambda x: torch.as_tensor(A) @ x, backend, x), A)
    with pytest.raises(di.DifferentiationError, match=r"f: \S*<lambda> .*di.array_namespace"):
        di.jacobian(lambda x: x * A, backend, x)
    with pytest.raises(di.DifferentiationError, match=r"f: \S*<lambda> .*di.array_namespace"):
        di.pushforward(lambda x: x * A[0], backend, x, (np.ones(3), np.ones(3)))


def test_an_active_torch_function_mode_sees_the_backward_pass(backend):
    """The engine shortcut of a single backward pass steps aside for ``__torch_function__`` modes."""
    from torch.overrides import TorchFunctionMode

    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    x = torch.tensor([1.0, 2.0], dtype=F64)
    f = lambda x: (x**2).sum()
    prep = di.prepare_gradient(f, backend, x)
    with Log():
        g = di.gradient(f, backend, x, prep=prep)
    torch.testing.assert_close(g, 2 * x)
    assert torch.autograd.grad in seen or backend.mode == "forward"


# -- issue 36: partial graph breaks, unusual arrays, ordinary results ----------------------------


@pytest.mark.parametrize(
    "f",
    [
        lambda x: x[0].item() * x.sum(),
        lambda x: (x.detach() * x).sum(),
        lambda x: float(x[1]) * x.sum(),
        lambda x: x.sum() * x.data[0],
        lambda x: torch.tensor(x.tolist(), dtype=x.dtype).dot(x),
        lambda x: (x.new_tensor(x) * x).sum(),
    ],
    ids=["item", "detach", "float", "data", "tolist", "new_tensor"],
)
def test_a_partial_graph_break_is_found_at_preparation(backend, f):
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(di.GraphBreakError, match=r"f called \S+ on a tensor computed from x"):
        di.prepare_gradient(f, backend, x)
    with pytest.raises(di.GraphBreakError):
        di.gradient(f, backend, x)


@pytest.mark.parametrize(
    "backend", [di.AutoTorch(), di.AutoTorch(mode="reverse")], ids=["torch", "torch-reverse"]
)
def test_what_the_graph_watch_lets_through(backend):
    """Printing, values of other tensors, no_grad blocks and branches on x's values are no breaks.

    (Reverse mode: forward mode's vmap itself refuses to print or branch on a batched x.)
    """
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0], dtype=F64))
    printed = []

    def f(x):
        printed.append(f"{x[0]:.2f} {x!r} {x.new_tensor([1.0])}")
        scale = w.detach().sum().item()  # a parameter that is not x
        with torch.no_grad():
            shift = x.detach().mean()
        branch = 2.0 if bool(x[0] > 0) else 1.0
        return scale * branch * (x**2).sum() + 0 * shift

    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(di.gradient(f, backend, x), 6.0 * 2.0 * 2 * x)
    assert printed and w.grad is None


def test_the_graph_watch_costs_prepared_calls_nothing(backend):
    """f's breaks are looked for once, at preparation: a prepared call runs f without the watch."""
    from torch.overrides import _get_current_function_mode_stack

    modes = []

    def f(x):
        modes.append(len(_get_current_function_mode_stack()))
        return (x**2).sum()

    x = np.array([1.0, 2.0])
    prep = di.prepare_gradient(f, backend, x)
    assert modes == [1]
    di.gradient(f, backend, x, prep=prep)
    assert modes[1:] and set(modes[1:]) == {0}


@pytest.mark.parametrize("outer, inner", [("forward", "reverse"), ("reverse", "forward")])
def test_mixed_mode_second_order_pairs_refuse_a_detach(outer, inner):
    pair = di.SecondOrder(di.AutoTorch(mode=outer), di.AutoTorch(mode=inner))
    f = lambda x: (x.detach() ** 2).sum()
    with pytest.raises(di.GraphBreakError):
        di.hessian(f, pair, np.ones(3))
    with pytest.raises(di.GraphBreakError):
        di.hvp(f, pair, np.ones(3), (np.ones(3),))


def test_a_structurally_zero_second_derivative_is_an_ordinary_array(backend):
    f = lambda x: abs(x - 1).sum()
    x = torch.tensor([0.5, 2.0], dtype=F64)
    h = di.hessian(f, backend, x)
    assert not h._is_zerotensor()
    h[0, 0] = 1.0  # writable
    assert di.hessian(f, backend, x.numpy()).flags.writeable
    (v,) = di.hvp(f, backend, x, (torch.ones(2, dtype=F64),))
    assert not v._is_zerotensor()
    for pair in (
        di.SecondOrder(di.AutoTorch(mode="reverse"), backend),
        di.SecondOrder(backend, di.AutoTorch()),
    ):
        np.testing.assert_array_equal(di.hessian(f, pair, x.numpy()), np.zeros((2, 2)))


def test_numpy_arrays_with_negative_strides_are_copied_only_then():
    a = np.arange(4.0)
    assert np.shares_memory(_numpy_to_torch(a).numpy(), a)
    reversed_view = a[::-1]
    converted = _numpy_to_torch(reversed_view)
    np.testing.assert_array_equal(converted.numpy(), reversed_view)
    np.testing.assert_array_equal(a, np.arange(4.0))


def test_inference_mode_and_expanded_tensors_as_x(backend):
    with torch.inference_mode():
        x = torch.tensor([1.0, 2.0], dtype=F64)
    g = di.gradient(lambda x: (x**2).sum(), backend, x)
    torch.testing.assert_close(g, 2 * x.clone())
    assert x.is_inference() and not g.is_inference()
    expanded = torch.tensor([1.0, 2.0], dtype=F64).expand(3, 2)
    jac = di.jacobian(lambda x: x**2, backend, expanded)
    torch.testing.assert_close(jac.reshape(6, 6), torch.diag(2 * expanded.reshape(-1)))


def test_forward_jacobian_of_a_matrix_chain_at_a_vector():
    generator = torch.Generator().manual_seed(0)
    a, b = (
        torch.randn(3, 4, dtype=F64, generator=generator),
        torch.randn(4, 2, dtype=F64, generator=generator),
    )
    x = torch.randn(3, dtype=F64, generator=generator)
    jac = di.jacobian(
        lambda x, a, b: (x @ a) @ b, di.AutoTorch(mode="forward"), x, di.Constant(a), di.Constant(b)
    )
    torch.testing.assert_close(jac, (a @ b).T)


def test_a_tree_constant_of_numpy_arrays_becomes_tensors(backend):
    c = {"w": np.array([1.0, 2.0]), "pair": (np.ones(2), np.array([3.0, 4.0]))}
    f = lambda x, c: (c["w"] * x).sum() + (c["pair"][0] * c["pair"][1] * x).sum()
    np.testing.assert_allclose(di.gradient(f, backend, np.ones(2), di.Constant(c)), [4.0, 6.0])


def test_module_function_takes_a_criterion_and_refuses_a_module_without_parameters():
    model = torch.nn.Linear(2, 1, dtype=F64)
    inputs, targets = torch.ones(3, 2, dtype=F64), torch.zeros(3, 1, dtype=F64)
    f, params = di.module_function(model, torch.nn.MSELoss())
    g = di.gradient(f, di.AutoTorch(), params, di.Constant(inputs), di.Constant(targets))
    expected = torch.autograd.grad(
        torch.nn.functional.mse_loss(model(inputs), targets), model.bias
    )[0]
    torch.testing.assert_close(g["bias"], expected)
    f, params = di.module_function(model, torch.nn.functional.mse_loss)
    with pytest.raises(TypeError, match=r"loss: the criterion mse_loss takes \(input, target\)"):
        di.gradient(f, di.AutoTorch(), params, di.Constant(inputs))
    with pytest.raises(
        ValueError,
        match=r"module: .*MSELoss has none.*di.module_function\(model, torch.nn.MSELoss\(\)\)",
    ):
        di.module_function(torch.nn.MSELoss(), lambda m, a, b: m(a, b))


def test_a_negative_step_is_explained_through_second_order():
    f = lambda x: (x[::-1] * x).sum()
    with pytest.raises(ValueError, match="negative step"):
        di.hessian(f, di.SecondOrder(di.AutoFiniteDiff(), di.AutoTorch()), np.ones(3))


def test_an_inference_mode_tensor_at_a_preparation_made_at_an_ordinary_one(backend):
    f = lambda x: (x**2).sum()
    with torch.inference_mode():
        x = torch.tensor([1.0, 2.0], dtype=F64)
    prep = di.prepare_gradient(f, backend, torch.ones(2, dtype=F64))
    if backend.mode == "forward":  # no tangent can ride on it: refused by name
        with pytest.raises(ValueError, match=r"x: .*inference-mode tensor.*x.clone\(\)"):
            di.gradient(f, backend, x, prep=prep)
    else:  # reverse mode copies it, on the error path only
        torch.testing.assert_close(di.gradient(f, backend, x, prep=prep), 2 * x.clone())


@pytest.mark.parametrize(
    "outer, inner", [("forward", "reverse"), ("reverse", "forward"), ("forward", None)]
)
def test_mixed_mode_second_order_pairs_refuse_a_constant_output_as_autotorch_does(outer, inner):
    pair = di.SecondOrder(di.AutoTorch(mode=outer), di.AutoTorch(mode=inner))
    constant = lambda x: torch.tensor(3.0, dtype=F64)
    with pytest.raises(di.GraphBreakError, match="does not depend on x through torch's graph"):
        di.hessian(constant, pair, torch.ones(2, dtype=F64))
    with pytest.raises(di.GraphBreakError):
        di.hessian(constant, di.AutoTorch(), torch.ones(2, dtype=F64))
    torch.testing.assert_close(
        di.hessian(lambda x: (x**3).sum(), pair, torch.ones(2, dtype=F64)),
        6 * torch.eye(2, dtype=F64),
    )
