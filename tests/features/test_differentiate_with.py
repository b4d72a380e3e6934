"""DifferentiateWith: a function differentiated by one backend, inside another framework's derivative.

Every test composes ``g = DifferentiateWith(inner_f, inner)`` (``inner_f(x) =
sin(x) * x**2``, or its sum) with an outer function and checks values and
derivatives against the analytic ones, for each inner backend of the four
frameworks, in float64, with results in the outer's family.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.pytest_plugin import SECONDARY
from diffinterface.families import dtype_name, family_of
from diffinterface.core import get_adapter
from diffinterface.testing import (
    BACKENDS,
    default_tolerances,
    second_order_scenarios,
    test_differentiation,
)
from diffinterface.testing.analytic_functions import sin_weighted as inner_vector
from diffinterface.testing.analytic_functions import sin_weighted_sum as inner_scalar
from diffinterface.testing.analytic_functions import (
    sin_weighted_sum_gradient,
    sin_weighted_sum_hessian_diagonal,
)

#: one inner backend per framework (and finite differences for numpy-only code)
INNERS = {key: BACKENDS[key] for key in ("jax", "torch", "autograd", "finitediff-central")}

X = np.linspace(-1.0, 1.5, 4)


# analytic: u = sin(x) x^2, u' = cos(x) x^2 + 2 x sin(x), u'' = -sin(x) x^2 + 4 x cos(x) + 2 sin(x)
def _u(x):
    return inner_vector(x), sin_weighted_sum_gradient(x), sin_weighted_sum_hessian_diagonal(x)


def expected_scalar(x):
    """inner_scalar: value, gradient, hessian."""
    u, du, ddu = _u(x)
    return u.sum(), du, np.diag(ddu)


def expected_loss(x):
    """loss(x) = sum(cos(inner_vector(x))): value, gradient, hessian."""
    u, du, ddu = _u(x)
    return np.cos(u).sum(), -np.sin(u) * du, np.diag(-np.cos(u) * du**2 - np.sin(u) * ddu)


def tolerance(inner, outer=None, order=1):
    combined = inner if outer is None else di.SecondOrder(outer, inner)
    rtol, atol = default_tolerances(combined, "float64", order)
    return dict(rtol=max(rtol, 1e-9), atol=max(atol, 1e-9))


def assert_close(got, want, family, **tol):
    assert family_of(got) == family, f"result in the {family_of(got)} family, expected {family}"
    assert dtype_name(got) == "float64"
    got = np.asarray(got.detach() if hasattr(got, "detach") else got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, **tol)


@pytest.fixture(params=list(INNERS), ids=[f"inner={k}" for k in INNERS])
def inner(request):
    return INNERS[request.param]


# -- JAX transformations ----------------------------------------------------------------------


def _jax_cases():
    import jax
    import jax.numpy as jnp

    def loss(g):
        return lambda x: jnp.sum(jnp.cos(g(x)))

    return {
        "grad": (lambda g, gs: jax.grad(gs), 1, "scalar"),
        "jit(grad)": (lambda g, gs: jax.jit(jax.grad(gs)), 1, "scalar"),
        "jvp": (lambda g, gs: lambda x: jax.jvp(gs, (x,), (jnp.ones_like(x),))[1], "jvp", "scalar"),
        "jacfwd": (lambda g, gs: jax.jacfwd(loss(g)), 1, "loss"),
        "jacrev": (lambda g, gs: jax.jit(jax.jacrev(loss(g))), 1, "loss"),
        "hessian": (lambda g, gs: jax.hessian(gs), 2, "scalar"),
        "jit(hessian(loss))": (lambda g, gs: jax.jit(jax.hessian(loss(g))), 2, "loss"),
        "jacrev(jacrev(loss))": (lambda g, gs: jax.jacrev(jax.jacrev(loss(g))), 2, "loss"),
        "jacfwd(jacfwd(loss))": (lambda g, gs: jax.jacfwd(jax.jacfwd(loss(g))), 2, "loss"),
        "vmap(grad(loss))": (
            lambda g, gs: lambda x: jax.vmap(jax.grad(loss(g)))(jnp.stack([x, x]))[1],
            1,
            "loss",
        ),
        "grad(sum(vmap(loss)))": (
            lambda g, gs: (
                lambda x: jax.grad(lambda xs: jnp.sum(jax.vmap(loss(g))(xs)))(jnp.stack([x, x]))[0]
            ),
            1,
            "loss",
        ),
    }


def _expected(kind, order):
    value, gradient, hessian = (expected_scalar if kind == "scalar" else expected_loss)(X)
    if order == "jvp":
        return gradient.sum()
    return gradient if order == 1 else hessian


JAX_CASES = [
    "grad",
    "jit(grad)",
    "jvp",
    "jacfwd",
    "jacrev",
    "hessian",
    "jit(hessian(loss))",
    "jacrev(jacrev(loss))",
    "jacfwd(jacfwd(loss))",
    "vmap(grad(loss))",
    "grad(sum(vmap(loss)))",
]


@pytest.mark.parametrize("transform", JAX_CASES)
def test_inside_jax(inner, transform):
    import jax
    import jax.numpy as jnp

    build, order, kind = _jax_cases()[transform]
    g, gs = di.DifferentiateWith(inner_vector, inner), di.DifferentiateWith(inner_scalar, inner)
    with jax.enable_x64(True):
        x = jnp.asarray(X)
        got = build(g, gs)(x)
        assert_close(
            got,
            _expected(kind, order),
            "jax",
            **tolerance(inner, order=1 if order == "jvp" else order),
        )


def test_jax_value_keeps_float64_without_global_x64(inner):
    import jax
    import jax.numpy as jnp

    g = di.DifferentiateWith(inner_vector, inner)
    with jax.enable_x64(True):
        x = jnp.asarray(X)
    assert not jax.config.jax_enable_x64
    with jax.enable_x64(True):
        y = jax.jit(g)(x)
    assert_close(y, _u(X)[0], "jax", rtol=1e-12, atol=1e-12)


def promoting(x):
    """f computing in float64 whatever x's dtype (JAX without x64 truncates it to float32)."""
    xp = di.array_namespace(x)
    return xp.sum(xp.astype(x, xp.float64) ** 2)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype float64")
def test_jax_grad_at_a_float32_x_of_an_f_computing_in_float64(inner):
    import jax
    import jax.numpy as jnp

    # JAX (x64 off) sends a float32 cotangent for f's float64 output: the inner was prepared for float64
    g = di.DifferentiateWith(promoting, inner)
    x = jnp.asarray(X, dtype=jnp.float32)
    gradient = jax.grad(g)(x)
    assert gradient.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(gradient), 2 * X, rtol=1e-3, atol=1e-3)
    (tangent,) = jax.jvp(g, (x,), (jnp.ones_like(x),))[1:]
    np.testing.assert_allclose(float(tangent), 2 * X.sum(), rtol=1e-3)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype float64")
def test_the_jax_output_dtype_follows_x64_as_it_is_at_each_call(inner):
    import jax
    import jax.numpy as jnp

    g = di.DifferentiateWith(promoting, inner)
    x = jnp.asarray(X, dtype=jnp.float32)
    assert g(x).dtype == jnp.float32  # x64 off: JAX has no float64
    with jax.enable_x64(True):
        y = g(x)  # the same bridge, now under x64: float64, as a fresh bridge gives
        assert y.dtype == jnp.float64
        assert y.dtype == di.DifferentiateWith(promoting, inner)(x).dtype
    np.testing.assert_allclose(
        float(y), float((X.astype(np.float32).astype(np.float64) ** 2).sum()), rtol=1e-12
    )


# -- torch autograd and torch.func ------------------------------------------------------------

TORCH_CASES = [
    "backward",
    "autograd.grad(create_graph)",
    "forward_ad",
    "func.grad",
    "func.jvp",
    "func.jacrev",
    "func.jacfwd",
    "func.hessian",
    "func.hessian(loss)",
    "autograd.functional.hessian(loss)",
    "func.vmap(func.grad(loss))",
]


def _torch_case(name, g, gs):
    import torch
    import torch.autograd.forward_ad as fw

    def loss(x):
        return torch.sum(torch.cos(g(x)))

    def backward(x):
        leaf = x.clone().requires_grad_(True)
        gs(leaf).backward()
        return leaf.grad

    def grad_create_graph(x):
        leaf = x.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(loss(leaf), leaf, create_graph=True)
        return grad.detach()

    def forward_ad(x):
        with fw.dual_level():
            return fw.unpack_dual(gs(fw.make_dual(x, torch.ones_like(x)))).tangent

    cases = {
        "backward": (backward, 1, "scalar"),
        "autograd.grad(create_graph)": (grad_create_graph, 1, "loss"),
        "forward_ad": (forward_ad, "jvp", "scalar"),
        "func.grad": (torch.func.grad(gs), 1, "scalar"),
        "func.jvp": (lambda x: torch.func.jvp(gs, (x,), (torch.ones_like(x),))[1], "jvp", "scalar"),
        "func.jacrev": (torch.func.jacrev(loss), 1, "loss"),
        "func.jacfwd": (torch.func.jacfwd(loss), 1, "loss"),
        "func.hessian": (torch.func.hessian(gs), 2, "scalar"),
        "func.hessian(loss)": (torch.func.hessian(loss), 2, "loss"),
        "autograd.functional.hessian(loss)": (
            lambda x: torch.autograd.functional.hessian(loss, x),
            2,
            "loss",
        ),
        "func.vmap(func.grad(loss))": (
            lambda x: torch.func.vmap(torch.func.grad(loss))(torch.stack([x, x]))[1],
            1,
            "loss",
        ),
    }
    return cases[name]


@pytest.mark.parametrize("transform", TORCH_CASES)
def test_inside_torch(inner, transform):
    import torch

    g, gs = di.DifferentiateWith(inner_vector, inner), di.DifferentiateWith(inner_scalar, inner)
    run, order, kind = _torch_case(transform, g, gs)
    got = run(torch.tensor(X))
    assert_close(
        got,
        _expected(kind, order),
        "torch",
        **tolerance(inner, order=1 if order == "jvp" else order),
    )


def test_torch_backward_through_a_sum_a_slice_and_a_strided_constant(inner):
    import torch

    # y.sum() sends back an expanded (stride 0) cotangent; x[::2] and a Constant slice are strided too
    g = di.DifferentiateWith(inner_vector, inner)
    base = torch.tensor(np.repeat(X, 2), requires_grad=True)
    g(base[::2]).sum().backward()
    expected = np.zeros(2 * X.size)
    expected[::2] = _u(X)[1]
    np.testing.assert_allclose(base.grad.numpy(), expected, **tolerance(inner))

    def weighted(x, w):
        xp = di.array_namespace(x)
        return xp.sum(xp.sin(x) * x**2 * w)

    w = torch.tensor(np.repeat([1.0, 2.0, 3.0, 4.0], 2))[::2]
    x = torch.tensor(X, requires_grad=True)
    di.DifferentiateWith(weighted, inner)(x, di.Constant(w)).backward()
    np.testing.assert_allclose(
        x.grad.numpy(), _u(X)[1] * np.array([1.0, 2.0, 3.0, 4.0]), **tolerance(inner)
    )


def test_torch_older_batching_keeps_no_call_once_its_graph_is_gone(inner):
    import gc

    import torch

    from diffinterface.backends.torch import differentiate_with as torch_bridge

    g = di.DifferentiateWith(inner_vector, inner)
    before = len(torch_bridge._calls)
    for _ in range(
        3
    ):  # vectorize=True: batched backward passes, which reach the bridge through its torch op
        jac = torch.autograd.functional.jacobian(g, torch.tensor(X), vectorize=True)
        np.testing.assert_allclose(np.diag(jac.numpy()), _u(X)[1], **tolerance(inner))
    del jac
    gc.collect()
    assert len(torch_bridge._calls) == before


# -- HIPS autograd ----------------------------------------------------------------------------

AUTOGRAD_CASES = ["grad", "make_jvp", "jacobian(loss)", "hessian", "hessian(loss)"]


@pytest.mark.parametrize("transform", AUTOGRAD_CASES)
def test_inside_autograd(inner, transform):
    import autograd
    import autograd.numpy as anp

    g, gs = di.DifferentiateWith(inner_vector, inner), di.DifferentiateWith(inner_scalar, inner)

    def loss(x):
        return anp.sum(anp.cos(g(x)))

    run, order, kind = {
        "grad": (autograd.grad(gs), 1, "scalar"),
        "make_jvp": (lambda x: autograd.make_jvp(gs)(x)(np.ones_like(x))[1], "jvp", "scalar"),
        "jacobian(loss)": (autograd.jacobian(loss), 1, "loss"),
        "hessian": (autograd.hessian(gs), 2, "scalar"),
        "hessian(loss)": (autograd.hessian(loss), 2, "loss"),
    }[transform]
    assert_close(
        np.asarray(run(X)),
        _expected(kind, order),
        "numpy",
        **tolerance(inner, order=1 if order == "jvp" else order),
    )


# -- every diffinterface backend as the outer -------------------------------------------------


@pytest.mark.parametrize("operator", ["gradient", "hessian"])
@pytest.mark.parametrize("outer_id", list(BACKENDS), ids=[f"outer={k}" for k in BACKENDS])
def test_inside_diffinterface_operators(inner, outer_id, operator):
    outer = BACKENDS[outer_id]
    g = di.DifferentiateWith(inner_vector, inner)

    def loss(x):
        xp = di.array_namespace(x)
        return xp.sum(xp.cos(g(x)))

    order = 1 if operator == "gradient" else 2
    prep = getattr(di, "prepare_" + operator)(loss, outer, X)
    got = getattr(di, operator)(loss, outer, X, prep=prep)
    rtol, atol = default_tolerances(di.SecondOrder(outer, inner), "float64", order)
    # finite differences over finite differences: the inner's error is differentiated again
    atol = max(atol, 1e-4 if order == 2 else atol)
    assert_close(got, expected_loss(X)[order], "numpy", rtol=rtol, atol=atol)


# -- plain calls, contexts, preparation -------------------------------------------------------


@pytest.mark.parametrize("family", ["numpy", "jax", "torch"])
def test_plain_call_returns_the_callers_family(inner, family):
    from diffinterface.core.bridge import to_family

    g = di.DifferentiateWith(inner_vector, inner)
    import jax

    with jax.enable_x64(True):
        x = to_family(X, family)
        assert_close(g(x), _u(X)[0], family, rtol=1e-12, atol=1e-12)


def test_constant_context_is_passed_and_not_differentiated(inner):
    import jax
    import jax.numpy as jnp

    def scaled(x, c):
        xp = di.array_namespace(x)
        return xp.sum(c * xp.sin(x) * x**2)

    g = di.DifferentiateWith(scaled, inner)
    with jax.enable_x64(True):
        for c in (2.0, 3.0):  # a new constant value, no new preparation
            got = jax.jit(jax.grad(lambda x, c: g(x, di.Constant(c))))(
                jnp.asarray(X), jnp.asarray(c)
            )
            assert_close(got, c * _u(X)[1], "jax", **tolerance(inner))
    assert (
        len(g._rules) <= 1
    )  # one preparation for both values (none when JAX differentiates f itself)


def test_prepares_once_per_input_signature(inner):
    import torch

    g = di.DifferentiateWith(inner_scalar, inner)
    for x in (torch.tensor(X), torch.tensor(2 * X)):
        torch.func.grad(g)(x)
    g(torch.ones(7, dtype=torch.float64))
    torch_inner = (
        get_adapter(inner).capabilities.framework == "torch"
    )  # torch differentiates f itself: nothing to prepare
    assert len(g._rules) == (0 if torch_inner else 2)


def test_same_framework_calls_f_directly():
    import torch

    calls = []

    def f(x):
        calls.append(type(x))
        return torch.sum(x**2)

    g = di.DifferentiateWith(f, di.AutoTorch())
    x = torch.tensor(X, requires_grad=True)
    g(x).backward()
    assert calls == [torch.Tensor] and torch.allclose(x.grad, 2 * x.detach())
    assert g._rules == {}  # nothing prepared: torch differentiated f itself


def test_third_order_raises():
    import jax
    import jax.numpy as jnp

    g = di.DifferentiateWith(inner_scalar, di.AutoTorch())
    with jax.enable_x64(True), pytest.raises(di.UnsupportedError, match="third derivatives"):
        jax.jacfwd(jax.hessian(g))(jnp.asarray(X))


def test_bad_arguments_name_the_argument():
    with pytest.raises(TypeError, match="f: DifferentiateWith expected a callable"):
        di.DifferentiateWith(3, di.AutoTorch())
    with pytest.raises(TypeError, match="backend"):
        di.DifferentiateWith(inner_scalar, "torch")
    with pytest.raises(TypeError, match="contexts\\[0\\]"):
        di.DifferentiateWith(inner_scalar, di.AutoTorch())(X, 3.0)


# -- SecondOrder across frameworks ------------------------------------------------------------

CROSS_PAIRS = {
    "jax-over-torch": di.SecondOrder(di.AutoJAX(), di.AutoTorch()),
    "torch-over-jax": di.SecondOrder(di.AutoTorch(), di.AutoJAX()),
    "jax-over-finitediff": di.SecondOrder(di.AutoJAX(), di.AutoFiniteDiff()),
    "torch-over-finitediff": di.SecondOrder(di.AutoTorch(), di.AutoFiniteDiff()),
}


# the quick matrix runs the pair with no compiler on either side; the others run in
# --di-matrix=rest (the kit's SecondOrder pairs cover each framework over itself in both)
@pytest.mark.parametrize(
    "pair",
    [
        pytest.param(pair, marks=[] if pair == "torch-over-finitediff" else [SECONDARY])
        for pair in CROSS_PAIRS
    ],
)
def test_second_order_across_frameworks(pair):
    report = test_differentiation({pair: CROSS_PAIRS[pair]}, second_order_scenarios())
    assert report.ok, str(report)


def test_the_shortcut_for_the_inner_framework_is_taken_only_by_the_same_class():
    # after a numpy x went straight to an AutoFiniteDiff inner, other classes and contexts are checked again
    import torch

    bridge = di.DifferentiateWith(lambda x: (x**2).sum(), di.AutoFiniteDiff())
    x = np.arange(3.0)
    assert float(bridge(x)) == 5.0
    assert float(bridge(x)) == 5.0
    with pytest.raises(TypeError, match="contexts"):
        bridge(x, 3.0)
    t = torch.arange(3.0, dtype=torch.float64, requires_grad=True)
    bridge(t).backward()
    np.testing.assert_allclose(t.grad.numpy(), 2 * np.arange(3.0), rtol=1e-6)
