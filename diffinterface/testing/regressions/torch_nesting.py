"""Regression probes: operators as building blocks inside torch's own differentiation and torch.func.

A backend whose derivatives run in torch (``capabilities.framework`` is the
family of x, torch) returns results that stay in the caller's torch graph when
x, a seed or a tensor f closes over requires grad, as
``torch.autograd.grad(..., create_graph=True)`` would: a gradient penalty
(WGAN-GP), a MAML inner step and a PINN's Laplacian differentiate through them
to the weights. Under ``torch.func.vmap`` (per-sample gradients), ``grad``,
``jacrev`` and ``jacfwd`` every operator gives torch.func's own answer, or an
error naming the transform, never a raw functorch error. Native references:
``torch.autograd.grad`` and ``torch.func``.

``torch.compile`` around an operator gives torch's answer, in both modes.

    >>> [probe.name for probe in probes()]
    ['gradient_penalty', 'maml_step', 'outer_graph_every_operator', 'torch_func_transforms', 'model_per_sample_gradients', 'torch_compile']
"""

from __future__ import annotations

import numpy as np

from ...core import get_adapter
from ...contexts import Constant
from ...errors import DifferentiationError, UnsupportedError
from ...operators import (
    gradient,
    hessian,
    hvp,
    jacobian,
    prepare_gradient,
    pullback,
    pushforward,
    value_and_gradient,
)
from ..probes import BadInput

_RNG = np.random.default_rng(47)
_X = _RNG.normal(size=(4, 3))
_W1 = _RNG.normal(size=(3, 5))
_W2 = _RNG.normal(size=5)


def _torch_framework(backend):
    """torch, where the backend takes torch tensors and differentiates in torch's graph; else None."""
    capabilities = get_adapter(backend).capabilities
    if "torch" not in capabilities.families or capabilities.framework != "torch":
        return None
    import torch

    return torch


def _leaf(torch, a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def _weights_gradient(torch, value, weights):
    return torch.autograd.grad(value, weights, allow_unused=True, materialize_grads=True)


def _compare(problems, torch, what, call, native, weights):
    """``call()`` and ``native()`` (scalars in the weights' graph): the same weight gradients."""
    try:
        got = call()
        got_grads = _weights_gradient(torch, got, weights)
    except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised(what, error, "a result in the weights' graph")
        return
    expected = native()
    for i, (g, e) in enumerate(zip(got_grads, _weights_gradient(torch, expected, weights))):
        problems.check_result(
            f"{what}: gradient of the result with respect to weight {i}",
            g,
            e.detach().numpy(),
            like=e,
            rtol=1e-9,
            atol=1e-12,
        )


def _gradient_penalty(backend, problems, zero):
    torch = _torch_framework(backend)
    if torch is None or zero:
        return
    w1, w2 = _leaf(torch, _W1), _leaf(torch, _W2)

    def critic(x):
        return (torch.tanh(x @ w1) @ w2).sum()

    def penalty(g):
        return ((g.norm(dim=1) - 1) ** 2).mean()

    x = _leaf(torch, _X)
    native = lambda: penalty(torch.autograd.grad(critic(x), x, create_graph=True)[0])  # noqa: E731
    prep = prepare_gradient(critic, backend, x)
    for what, call in (
        ("unprepared", lambda: penalty(gradient(critic, backend, x))),
        ("prepared", lambda: penalty(gradient(critic, backend, x, prep=prep))),
        ("value_and_gradient", lambda: penalty(value_and_gradient(critic, backend, x)[1])),
    ):
        _compare(
            problems, torch, f"gradient penalty through {what} gradient", call, native, (w1, w2, x)
        )


def _maml_step(backend, problems, zero):
    torch = _torch_framework(backend)
    if torch is None or zero:
        return
    data, target = torch.tensor(_X), torch.tensor(_X @ _W1[:, 0])

    def loss(w):
        return ((torch.sin(data @ w) - target) ** 2).mean()

    w = _leaf(torch, _W1[:, 1])
    native_step = w - 0.1 * torch.autograd.grad(loss(w), w, create_graph=True)[0]
    _compare(
        problems,
        torch,
        "MAML meta-loss through an inner gradient step",
        lambda: loss(w - 0.1 * gradient(loss, backend, w)),
        lambda: loss(native_step),
        (w,),
    )
    _compare(
        problems,
        torch,
        "gradient of the sum of a gradient with respect to its own x",
        lambda: gradient(loss, backend, w).sum(),
        lambda: torch.autograd.grad(loss(w), w, create_graph=True)[0].sum(),
        (w,),
    )


def _every_operator(backend, problems, zero):
    torch = _torch_framework(backend)
    if torch is None or zero:
        return
    w1 = _leaf(torch, _W1[:, :3])
    x, t = torch.tensor(_X[0]), torch.tensor(_X[1])
    func = torch.func

    def scalar(z):
        return torch.tanh(w1 @ z).pow(3).sum()

    def vector(z):
        return torch.tanh(w1 @ z) * z

    cases = {
        "gradient": (lambda: gradient(scalar, backend, x), lambda: func.grad(scalar)(x)),
        "jacobian": (lambda: jacobian(vector, backend, x), lambda: func.jacrev(vector)(x)),
        "pushforward": (
            lambda: pushforward(vector, backend, x, (t,))[0],
            lambda: func.jvp(vector, (x,), (t,))[1],
        ),
        "pullback": (
            lambda: pullback(vector, backend, x, (t,))[0],
            lambda: func.vjp(vector, x)[1](t)[0],
        ),
        "hvp": (
            lambda: hvp(scalar, backend, x, (t,))[0],
            lambda: func.jvp(func.grad(scalar), (x,), (t,))[1],
        ),
        "hessian (a PINN's Laplacian)": (
            lambda: hessian(scalar, backend, x),
            lambda: func.hessian(scalar)(x),
        ),
    }
    for name, (call, native) in cases.items():
        _compare(
            problems,
            torch,
            f"{name} of f closing over a weight that requires grad",
            lambda call=call: (call() ** 2).sum(),
            lambda native=native: (native() ** 2).sum(),
            (w1,),
        )


def _torch_func_transforms(backend, problems, zero):
    torch = _torch_framework(backend)
    if torch is None or zero:
        return
    func = torch.func
    batch, t = torch.tensor(_X), torch.tensor(_W1[:, 0])

    def scalar(z):
        return (torch.sin(z) ** 2).sum() * (z @ t)

    def vector(z):
        return torch.sin(z) * z.sum()

    prep = prepare_gradient(scalar, backend, batch[0])
    cases = {
        "vmap of gradient (per-sample gradients)": (
            func.vmap(lambda z: gradient(scalar, backend, z)),
            func.vmap(func.grad(scalar)),
        ),
        "vmap of a gradient prepared at one sample": (
            func.vmap(lambda z: gradient(scalar, backend, z, prep=prep)),
            func.vmap(func.grad(scalar)),
        ),
        "vmap of jacobian": (
            func.vmap(lambda z: jacobian(vector, backend, z)),
            func.vmap(func.jacrev(vector)),
        ),
        "vmap of pushforward": (
            func.vmap(lambda z: pushforward(vector, backend, z, (t,))[0]),
            func.vmap(lambda z: func.jvp(vector, (z,), (t,))[1]),
        ),
        "vmap of pullback": (
            func.vmap(lambda z: pullback(vector, backend, z, (t,))[0]),
            func.vmap(lambda z: func.vjp(vector, z)[1](t)[0]),
        ),
        "vmap of hvp": (
            func.vmap(lambda z: hvp(scalar, backend, z, (t,))[0]),
            func.vmap(lambda z: func.jvp(func.grad(scalar), (z,), (t,))[1]),
        ),
        "vmap of hessian": (
            func.vmap(lambda z: hessian(scalar, backend, z)),
            func.vmap(func.hessian(scalar)),
        ),
        "vmap of grad of gradient": (
            func.vmap(func.grad(lambda z: gradient(scalar, backend, z).sum())),
            func.vmap(func.grad(lambda z: func.grad(scalar)(z).sum())),
        ),
        "vmap of jacrev of gradient": (
            func.vmap(func.jacrev(lambda z: gradient(scalar, backend, z))),
            func.vmap(func.jacrev(func.grad(scalar))),
        ),
        "vmap of jacfwd of gradient": (
            func.vmap(func.jacfwd(lambda z: gradient(scalar, backend, z))),
            func.vmap(func.jacfwd(func.grad(scalar))),
        ),
    }
    for what, (call, native) in cases.items():
        got = problems.answer_or_named_refusal(
            what,
            lambda: call(batch),
            (UnsupportedError, DifferentiationError),
            ("vmap", "torch.func"),
        )
        if got is None:
            continue
        expected = native(batch)
        problems.check_result(what, got, expected.numpy(), like=expected, rtol=1e-9, atol=1e-12)


def _model_per_sample_gradients(backend, problems, zero):
    torch = _torch_framework(backend)
    if torch is None or zero:
        return
    func = torch.func
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).to(
        torch.float64
    )
    params = {k: v.detach() for k, v in model.named_parameters()}
    data, targets = torch.tensor(_X), torch.tensor(_W2[:4])

    def loss(p, sample, target):
        prediction = func.functional_call(model, p, (sample.unsqueeze(0),))
        return ((prediction.squeeze() - target) ** 2).sum()

    native = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, data, targets)
    prep = prepare_gradient(loss, backend, params, Constant(data[0]), Constant(targets[0]))
    calls = {
        "the gradient of a model's loss through functional_call": lambda: gradient(
            lambda p: loss(p, data[0], targets[0]), backend, params
        ),
        "per-sample gradients: vmap of gradient through functional_call": lambda: func.vmap(
            lambda s, t: gradient(lambda p: loss(p, s, t), backend, params)
        )(data, targets),
        "per-sample gradients: vmap of a gradient prepared at one sample": lambda: func.vmap(
            lambda s, t: gradient(loss, backend, params, Constant(s), Constant(t), prep=prep)
        )(data, targets),
    }
    for what, call in calls.items():
        got = problems.answer_or_named_refusal(
            what, call, (UnsupportedError, DifferentiationError), ("vmap", "torch.func")
        )
        if got is None:
            continue
        one = what.startswith("the gradient")
        for name, expected in native.items():
            expected = expected[0] if one else expected
            problems.check_result(
                f"{what}: {name}",
                got[name],
                expected.numpy(),
                like=expected,
                rtol=1e-9,
                atol=1e-12,
            )


def _torch_compile(backend, problems, zero):
    torch = _torch_framework(backend)
    if torch is None or zero:
        return
    x = torch.tensor(_X[0])

    def scalar(z):
        return (torch.sin(z) ** 2).sum() * (z * z).sum()

    prep = prepare_gradient(scalar, backend, x)
    cases = {
        "prepared gradient": (
            lambda z: gradient(scalar, backend, z, prep=prep),
            torch.func.grad(scalar),
        ),
        "hessian": (lambda z: hessian(scalar, backend, z), torch.func.hessian(scalar)),
    }
    for what, (call, native) in cases.items():
        torch._dynamo.reset()
        # the "eager" compiler backend: dynamo's tracing, which is what an operator must survive,
        # without generating code
        compiled = torch.compile(call, backend="eager", fullgraph=False)
        what = f"{what} under torch.compile"
        got = problems.answer_or_named_refusal(
            what, lambda: compiled(x), (UnsupportedError, DifferentiationError), ("torch.compile",)
        )
        if got is None:
            continue
        expected = native(x)
        problems.check_result(what, got, expected.numpy(), like=expected, rtol=1e-9, atol=1e-12)
    torch._dynamo.reset()


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "gradient_penalty",
            "a WGAN-GP gradient penalty through gradient: weight gradients as torch's own",
            _gradient_penalty,
        ),
        BadInput(
            "maml_step",
            "a MAML meta-gradient through an inner gradient step, and a gradient differentiated again",
            _maml_step,
        ),
        BadInput(
            "outer_graph_every_operator",
            "every operator of f closing over a weight that requires grad stays in its graph",
            _every_operator,
        ),
        BadInput(
            "torch_func_transforms",
            "operators under torch.func.vmap, grad, jacrev and jacfwd: torch.func's own answer",
            _torch_func_transforms,
        ),
        BadInput(
            "model_per_sample_gradients",
            "a model's gradients over its parameters through torch.func.functional_call, per "
            "sample under vmap, prepared at one sample too: torch.func's own answer",
            _model_per_sample_gradients,
        ),
        BadInput(
            "torch_compile",
            "a prepared gradient and a hessian under torch.compile: torch's answer",
            _torch_compile,
        ),
    ]
