"""Regression probes: see :mod:`diffinterface.testing.regressions`.

A Python float, a NumPy scalar and a 0-d array of one dtype are one kind,
pytree leaves included: numpy arithmetic turns one into another
(``np.array(0.7) - 0.1 * g`` is an ``np.float64``), so a training loop's
second step must fit the preparation its first step used, and a gradient
returned as 0-d arrays must be accepted as the tangent of a float leaf.
(A torch ``Parameter`` and a ``Tensor`` are one kind too: ``tests/features/test_pytrees.py``.)
"""

from __future__ import annotations

import numpy as np

from ...families import array_namespace
from ...operators import gradient, hvp, prepare_gradient, pullback
from ..probes import BadInput


def _loss(p):
    xp = array_namespace(p["w"])
    return 3 * p["a"] ** 2 + xp.sum(p["w"] ** 2)


def _check_tree(problems, what, got, expected, like, zero):
    """Each leaf of ``got`` is ``expected``'s, in the family, shape and dtype of ``like``'s."""
    if not isinstance(got, dict) or set(got) != set(expected):
        problems.found.append(f"{what}: expected a dict with keys {sorted(expected)}; got {got!r}")
        return
    for key in expected:
        problems.check_result(
            f"{what}[{key!r}]", got[key], expected[key], like=like[key], zero=zero
        )


def _training_loop(backend, problems, zero):
    p = {"a": np.array(0.7), "w": np.array([0.5, -1.0])}
    try:
        prep = prepare_gradient(_loss, backend, p)
        for step in range(3):
            g = gradient(_loss, backend, p, prep=prep)
            _check_tree(
                problems,
                f"prepared gradient at step {step}",
                g,
                {"a": 6 * np.asarray(p["a"]), "w": 2 * p["w"]},
                p,
                zero,
            )
            p = {key: p[key] - 0.1 * g[key] for key in p}  # p["a"] becomes a NumPy scalar
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised("a training loop with a 0-d leaf", raised)


def _gradient_as_tangent(backend, problems, zero):
    p = {"a": 0.7, "w": np.array([0.5, -1.0])}
    try:
        g = gradient(_loss, backend, p)  # g["a"]: a 0-d array for the float leaf
        (hv,) = hvp(_loss, backend, p, (g,))
    except Exception as raised:  # noqa: BLE001
        problems.raised("hvp with the gradient (0-d leaves) as tangent for float leaves", raised)
        return
    _check_tree(
        problems,
        "hvp along the gradient",
        hv,
        {"a": 6 * np.asarray(g["a"]), "w": 2 * np.asarray(g["w"])},
        {"a": np.array(0.7), "w": p["w"]},
        zero,
    )


def _scalar_kinds_of_x(backend, problems, zero):
    f = lambda x: 3 * x**2  # noqa: E731
    prep = prepare_gradient(f, backend, np.array(0.5))
    for given in (np.float64(0.5), 0.5):
        problems.expect_result(
            f"gradient prepared at a 0-d array, called at {type(given).__name__}",
            lambda: gradient(f, backend, given, prep=prep),
            np.array(3.0),
            like=np.array(0.5),
            zero=zero,
        )


def _mixed(p):
    xp = array_namespace(p["a"])
    return xp.sum(xp.sin(p["a"])) + 0.5 * p["b"] + 0.25


def _scalar_leaf_pullback(backend, problems, zero):
    # a NumPy float32 scalar leaf beside a float64 0-d leaf, pulled back with a Python float (found
    # by the fuzz suite)
    p = {"a": np.asarray(1.16), "b": np.float32(0.48)}
    try:
        (got,) = pullback(_mixed, backend, p, (1.0,))
    except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
        problems.raised("pullback of a tree with a NumPy float32 scalar leaf", raised)
        return
    _check_tree(
        problems,
        "pullback of a tree with a NumPy float32 scalar leaf",
        got,
        {"a": np.cos(p["a"]), "b": np.float32(0.5)},
        {"a": p["a"], "b": np.asarray(p["b"])},
        zero,
    )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "one_kind_training_loop",
            "p - lr * g turns a 0-d leaf into a NumPy scalar: the prepared gradient still fits",
            _training_loop,
        ),
        BadInput(
            "one_kind_gradient_as_tangent",
            "a gradient's 0-d leaves as hvp tangents for float leaves",
            _gradient_as_tangent,
        ),
        BadInput(
            "one_kind_scalar_leaf_pullback",
            "a NumPy float32 scalar leaf pulled back with a Python float",
            _scalar_leaf_pullback,
        ),
        BadInput(
            "one_kind_scalar_x",
            "a NumPy scalar or a float x for a gradient prepared at a 0-d array",
            _scalar_kinds_of_x,
        ),
    ]
