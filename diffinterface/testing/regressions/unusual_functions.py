"""Regression probes: see :mod:`diffinterface.testing.regressions`.

Functions whose derivatives are unusual come back as ordinary arrays: a
structurally zero second derivative (``abs(x - 1)``) as zeros the user can
convert and write, through every ``SecondOrder`` pair of modes too; a chain of
matrix products at a vector x; a constant empty output; a ``Constant`` holding
a dict and a tuple of arrays; a torch criterion ``(input, target)`` as
``module_function``'s loss; and a negative-step slice in f under
``SecondOrder(AutoFiniteDiff(), backend)`` (the result, or the ValueError
naming "negative step" that the backend alone gives).
"""

from __future__ import annotations

import numpy as np

from ...contexts import Constant
from ...core.boundary import declared_limits
from ...errors import DifferentiationError
from ...families import array_namespace
from ...backends.torch.modules import module_function
from ...operators import derivative, gradient, hessian, hvp, jacobian, second_derivative
from ...selectors import AutoFiniteDiff, SecondOrder
from ..families import convert
from ..probes import BadInput
from .graph_breaks import _mode_pairs
from .unusual_arrays import W, X, backend_families


def _l1(x):
    xp = array_namespace(x)
    return xp.sum(xp.abs(x - 1.0))


def _expect_ordinary(problems, what, call, expected, like, zero):
    """``call()`` returns ``expected`` as an ordinary array (not a ZeroTensor, which torch refuses to convert),
    or raises a DifferentiationError (complex steps cannot differentiate abs)."""
    try:
        got = call()
    except DifferentiationError:  # a backend that cannot differentiate abs says so (complex steps)
        return
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised(what, raised, "a result")
        return
    is_zero_tensor = getattr(got, "_is_zerotensor", None)  # torch's immutable zeros
    if is_zero_tensor is not None and is_zero_tensor():
        problems.found.append(f"{what}: returned an immutable ZeroTensor, not an ordinary tensor")
        return
    problems.check_result(what, got, expected, like=like, zero=zero)


def _structural_zeros(backend, problems, zero):
    families = [f for f in ("numpy", "torch") if f in backend_families(backend)]
    for family in families:
        x, t = convert(X, family), convert(np.ones(3), family)
        for pair in _mode_pairs(backend):
            where = f"by {pair!r} at a {family} x"
            _expect_ordinary(
                problems,
                f"hessian of sum(abs(x - 1)) {where}",
                lambda: hessian(_l1, pair, x),
                np.zeros((3, 3)),
                x,
                zero,
            )
            _expect_ordinary(
                problems,
                f"hvp of sum(abs(x - 1)) {where}",
                lambda: hvp(_l1, pair, x, (t,))[0],
                np.zeros(3),
                x,
                zero,
            )
        s = convert(np.array(0.5), family)
        _expect_ordinary(
            problems,
            f"second_derivative of abs(x - 1) at a {family} x",
            lambda: second_derivative(_l1, backend, s),
            np.array(0.0),
            s,
            zero,
        )


def _tree_constants(backend, problems, zero):
    def f(x, c):
        xp = array_namespace(x)
        return xp.sum(c["w"] * x**2) + xp.sum(c["pair"][0] * c["pair"][1] * x)

    c = {"w": W, "pair": (W, np.ones(3))}
    problems.expect_result(
        "gradient with a Constant holding a dict and a tuple of arrays",
        lambda: gradient(f, backend, X, Constant(c)),
        2 * W * X + W,
        like=X,
        zero=zero,
    )


def _matrix_chain(backend, problems, zero):
    rng = np.random.default_rng(36)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))

    def f(x, a, b):
        return (x @ a) @ b

    # a framework may declare that its @ takes matrices only: then the ValueError naming the limit
    # and the way around it is the one accepted refusal
    declared = [
        (what, around)
        for _, _, what, around in declared_limits()
        if what.startswith("the @ operator")
    ]
    for x in (X, np.stack([X, 2 * X])):
        expected = np.einsum("lj,ki->kjil", a @ b, np.eye(x.shape[0])) if x.ndim == 2 else (a @ b).T
        what = f"jacobian of (x @ A) @ B at a {x.ndim}-d x"
        try:
            got = jacobian(f, backend, x, Constant(a), Constant(b))
        except ValueError as raised:
            if not any(
                f"does not support {limit}" in str(raised) and around in str(raised)
                for limit, around in declared
            ):
                problems.raised(what, raised, "a result")
            continue
        except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
            problems.raised(what, raised, "a result")
            continue
        problems.check_result(what, got, expected, like=x, zero=zero)


def _constant_empty_output(backend, problems, zero):
    def f(x):
        xp = array_namespace(x)
        return xp.zeros((0,), dtype=xp.float64)  # no entries: nothing of f can depend on x

    x = np.array(1.0)
    problems.expect_result(
        "derivative of a constant empty output",
        lambda: derivative(f, backend, x),
        np.zeros(0),
        like=x,
        zero=zero,
    )


def _criterion_as_loss(backend, problems, zero):
    if "torch" not in backend_families(backend):
        return
    import torch

    model = torch.nn.Linear(3, 1, dtype=torch.float64)
    with torch.no_grad():
        model.weight.copy_(torch.from_numpy(W[None, :].copy()))
        model.bias.fill_(0.5)
    inputs, targets = torch.from_numpy(np.stack([X, 2 * X])), torch.ones(2, 1, dtype=torch.float64)
    residuals = np.stack([X, 2 * X]) @ W + 0.5 - 1.0
    expected_bias = np.array([residuals.mean() * 2])
    try:
        f, params = module_function(model, torch.nn.MSELoss())
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        problems.found.append(
            f"module_function(model, torch.nn.MSELoss()): {type(raised).__name__}: {raised}"
        )
        return
    got = problems.expect_result(
        "gradient of a criterion (input, target) through module_function",
        lambda: gradient(f, backend, params, Constant(inputs), Constant(targets))["bias"],
        expected_bias,
        like=params["bias"],
        zero=zero,
    )
    if got is not None and model.bias.grad is not None:
        problems.found.append("module_function's gradient wrote the module's .grad")


#: the tolerances of a Hessian by finite differences of a forward-difference gradient: a few digits
_NESTED_DIFFERENCES = {"rtol": 1e-2, "atol": 1e-2}


def _negative_step_under_second_order(backend, problems, zero):
    def f(x):
        xp = array_namespace(x)
        return xp.sum(x[::-1] * x**2)

    # d2/dx2 of sum_i x[n-1-i] * x_i**2
    n = X.size
    expected = np.diag(2 * X[::-1])
    for i in range(n):
        expected[i, n - 1 - i] += 2 * X[i]
        expected[n - 1 - i, i] += 2 * X[i]
    pair = SecondOrder(AutoFiniteDiff(), backend)
    try:
        got = hessian(f, pair, X)
    except ValueError as raised:
        if "negative step" not in str(raised):
            problems.found.append(
                f"hessian by {pair!r} of f slicing x[::-1]: a ValueError without the explanation "
                f"naming 'negative step': {str(raised)[:300]}"
            )
        return
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised(f"hessian by {pair!r} of f slicing x[::-1]", raised)
        return
    problems.check_result(
        f"hessian by {pair!r} of f slicing x[::-1]",
        got,
        expected,
        like=X,
        zero=zero,
        **_NESTED_DIFFERENCES,
    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "unusual_structural_zeros",
            "a structurally zero Hessian (abs): ordinary zeros, every mode pair",
            _structural_zeros,
        ),
        BadInput(
            "unusual_tree_constants",
            "a Constant holding a dict and a tuple of numpy arrays",
            _tree_constants,
        ),
        BadInput(
            "unusual_matrix_chain",
            "the jacobian of (x @ A) @ B at a vector and a matrix x",
            _matrix_chain,
        ),
        BadInput(
            "unusual_constant_empty_output",
            "the derivative of a constant empty output: empty",
            _constant_empty_output,
        ),
        BadInput(
            "unusual_criterion_loss",
            "a torch criterion (input, target) as module_function's loss",
            _criterion_as_loss,
        ),
        BadInput(
            "unusual_negative_step_second_order",
            "x[::-1] in f under SecondOrder(AutoFiniteDiff(), backend): "
            "the Hessian or the ValueError naming 'negative step'",
            _negative_step_under_second_order,
        ),
    ]
