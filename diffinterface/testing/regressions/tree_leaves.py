"""Regression probes: see :mod:`diffinterface.testing.regressions`.

A gradient at a pytree x treats each place of the tree as its own input,
whether the backend ravels the tree into one flat array or differentiates
its leaves as they are (JAX's, torch's and TensorFlow's gradients): one
array found at two places (tied weights passed twice) gets its partial
derivative at each place, not their sum at both, and a leaf f does not use
gets zeros, not an error about a broken graph.
"""

from __future__ import annotations

import numpy as np

from ...families import array_namespace
from ...operators import gradient, prepare_gradient, value_and_gradient
from ..probes import BadInput


def _product(p):
    xp = array_namespace(p["u"])
    return xp.sum(p["u"] * p["v"] ** 2)


def _one_array_at_two_places(backend, problems, zero):
    a = np.array([1.0, 2.0])
    expected = {"u": a**2, "v": 2 * a * a}
    for how in ("unprepared", "prepared"):
        try:
            if how == "prepared":
                prep = prepare_gradient(_product, backend, {"u": a, "v": a})
                g = gradient(_product, backend, {"u": a, "v": a}, prep=prep)
            else:
                g = gradient(_product, backend, {"u": a, "v": a})
        except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
            problems.raised(f"{how} gradient at one array found at two places", raised)
            continue
        for key in expected:
            problems.check_result(
                f"{how} gradient at one array found at two places [{key!r}]",
                g[key] if isinstance(g, dict) else g,
                expected[key],
                like=a,
                zero=zero,
            )


def _uses_one_leaf(p):
    xp = array_namespace(p["used"])
    return xp.sum(p["used"] ** 2)


def _unused_leaf(backend, problems, zero):
    p = {"used": np.array([1.0, -2.0]), "unused": np.ones(3, dtype=np.float32)}
    try:
        prep = prepare_gradient(_uses_one_leaf, backend, p)
        value, g = value_and_gradient(_uses_one_leaf, backend, p, prep=prep)
    except Exception as raised:  # noqa: BLE001
        problems.raised("gradient at a tree with a leaf f does not use", raised)
        return
    problems.check_result(
        "value at a tree with an unused leaf", value, np.array(5.0), like=np.array(0.0), zero=zero
    )
    for key, expected in (("used", 2 * p["used"]), ("unused", np.zeros(3))):
        problems.check_result(
            f"gradient at a tree with an unused leaf [{key!r}]",
            g[key] if isinstance(g, dict) else g,
            expected,
            like=p[key],
            zero=zero,
        )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "tree_leaves_one_array_at_two_places",
            "one array at two places of x: its partial derivative at each place, not their sum",
            _one_array_at_two_places,
        ),
        BadInput(
            "tree_leaves_unused_leaf",
            "a leaf f does not use: zeros in its own dtype, not a broken-graph error",
            _unused_leaf,
        ),
    ]
