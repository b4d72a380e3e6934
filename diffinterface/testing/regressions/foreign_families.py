"""Regression probes: see :mod:`diffinterface.testing.regressions`.

Arrays of another family than x's: a ``Constant`` is converted to x's family
(dtype kept) before f sees it, so f computes in x's family and precision and
the result comes back in x's family; a tangent or cotangent of another
family is refused at preparation with a TypeError naming it (for example
``tangents[0]: expected a numpy array like x; got jax float32 array``).
The other families are those registered whose framework is installed
(:data:`~diffinterface.families.FAMILIES`), whatever the backend.
"""

from __future__ import annotations

import numpy as np

from ...contexts import Constant
from ...core import get_adapter
from ...families import FAMILIES, array_namespace, dtype_name, family_of
from ...operators import gradient, hessian, hvp, jacobian, pullback, pushforward, second_derivative
from ...selectors import AutoFiniteDiff, SecondOrder
from ..probes import BadInput
from ..tolerances import over_finite_differences

X = np.array([0.5, 0.8, 1.2])
W = np.array([1.0, 2.0, 3.0])


def _foreign_arrays(a):
    """``a`` in each registered concrete family other than numpy whose framework imports: (family, array)."""
    arrays = []
    for name, family in FAMILIES.items():
        if name == "numpy" or not family.concrete:
            continue
        try:
            arrays.append((name, family.from_dlpack(a)))
        except ImportError:  # that framework is not installed: nothing to probe with it
            continue
    return arrays


def _weighted_squares(x, w):
    return x**2 * w


def _weighted_sum(x, w):
    return array_namespace(x).sum(x**2 * w)


def _sines(x):
    return array_namespace(x).sin(x)


def _foreign_constant(backend, problems, zero):
    for family, w in _foreign_arrays(W):
        problems.expect_result(
            f"gradient with a {family} Constant at a numpy x",
            lambda: gradient(_weighted_sum, backend, X, Constant(w)),
            2 * X * np.asarray(W, dtype=dtype_name(w)),
            like=X,
            zero=zero,
            rtol=1e-6,
        )
        problems.expect_result(
            f"jacobian with a {family} Constant at a numpy x",
            lambda: jacobian(_weighted_squares, backend, X, Constant(w)),
            np.diag(2 * X * np.asarray(W, dtype=dtype_name(w))),
            like=X,
            zero=zero,
            rtol=1e-6,
        )


def _foreign_seeds(backend, problems, zero):
    for family, t in _foreign_arrays(np.ones(3)):
        x = X.astype(dtype_name(t))  # the dtype the other framework gave: only the family differs
        problems.expect_error(
            f"pushforward with a {family} tangent at a numpy x",
            lambda: pushforward(_sines, backend, x, (t,)),
            TypeError,
            rf"tangents\[0\]: expected a numpy array like x; got {family} ",
            (x,),
        )
        problems.expect_error(
            f"pullback with a {family} cotangent at a numpy x",
            lambda: pullback(_sines, backend, x, (t,)),
            TypeError,
            rf"cotangents\[0\]: expected a numpy array like the output y; got {family} ",
            (x,),
        )


def _x_sin_x(x):
    xp = array_namespace(x)
    return xp.sum(x * xp.sin(x))


def _second_of_x_sin_x(x):
    return 2 * np.cos(x) - x * np.sin(x)


def _finite_differences_over(backend, problems, zero):
    """SecondOrder(AutoFiniteDiff(), backend): at a 0-d x, and at arrays and trees of every family it takes."""
    pair = SecondOrder(AutoFiniteDiff(), backend)
    rtol, atol = over_finite_differences(backend, 1e-4, 1e-6)
    x0 = np.array(0.5)
    problems.expect_results(
        {
            "SecondOrder(AutoFiniteDiff(), backend) hessian at a 0-d x": (
                lambda: hessian(_x_sin_x, pair, x0),
                _second_of_x_sin_x(x0),
            ),
            "SecondOrder(AutoFiniteDiff(), backend) second_derivative at a 0-d x": (
                lambda: second_derivative(lambda x: x * array_namespace(x).sin(x), pair, x0),
                _second_of_x_sin_x(x0),
            ),
        },
        like=x0,
        zero=zero,
        rtol=rtol,
        atol=atol,
    )
    values = np.array([0.3, 0.6])
    for family, x in _foreign_arrays(values):
        if family not in get_adapter(backend).capabilities.families:
            continue
        like = x
        expected = _second_of_x_sin_x(values)
        problems.expect_result(
            f"SecondOrder(AutoFiniteDiff(), backend) hessian at a {family} x",
            lambda: hessian(_x_sin_x, pair, x),
            np.diag(expected),
            like=like,
            zero=zero,
            rtol=max(rtol, 1e-3),
            atol=atol,
        )
        tree = {"a": x, "b": x}
        try:
            (product,) = hvp(lambda p: _x_sin_x(p["a"]) + _x_sin_x(p["b"]), pair, tree, (tree,))
        except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
            problems.raised(
                f"SecondOrder(AutoFiniteDiff(), backend) hvp at a tree of {family} arrays", raised
            )
            continue
        for key in tree:
            if not isinstance(product, dict) or family_of(product.get(key)) != family:
                problems.found.append(
                    f"SecondOrder(AutoFiniteDiff(), backend) hvp at a tree of {family} arrays: "
                    f"expected a dict of {family} arrays; got {product!r}"
                )
                break
            problems.check_result(
                f"SecondOrder(AutoFiniteDiff(), backend) hvp[{key!r}] at a {family} tree",
                product[key],
                expected * values,
                like=like,
                zero=zero,
                rtol=max(rtol, 1e-3),
                atol=atol,
            )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "foreign_constant",
            "a Constant of another family than x's: converted, dtype kept, result in x's family",
            _foreign_constant,
        ),
        BadInput(
            "second_order_finite_differences_over",
            "SecondOrder(AutoFiniteDiff(), backend) at a 0-d x, and "
            "at arrays and trees of each family the backend takes",
            _finite_differences_over,
        ),
        BadInput(
            "foreign_seeds",
            "a tangent or cotangent of another family than x's: TypeError naming it",
            _foreign_seeds,
        ),
    ]
