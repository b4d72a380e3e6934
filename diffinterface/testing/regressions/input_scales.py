"""Regression probes: derivatives as accurate at large and tiny |x| as at |x| near 1.

A finite-difference step that ignores |x| (an absolute step only) is lost in the rounding of f at large
|x|: the gradient of ``sum(x**2)`` at x = 3e3 in float32 came out 52 % wrong forward, 1.8 % central.
The probes take gradients and a pushforward of ``sum(x**2) + sum(x)`` at ``|x| = 3e3`` in float32, ``1e6`` in
float64, and at 0 and tiny entries in both. An exact backend must be right to a few roundoffs
(:data:`EXACT_ULPS`); an approximate one (``Capabilities.approximate``) within the error of the first-order
rule with the step ``h = sqrt(eps) max(|x|, 1)``, the loosest a finite-difference backend may take:

- truncation ``h |f''| / 2`` (f'' = 2 along one coordinate);
- rounding of f's values: :data:`SUM_ROUNDINGS` ``eps |f|`` in each of the two values, over ``h``;
- rounding of the point ``x + h``: up to ``eps |x|``, which f' turns into ``|f'| eps |x|``, over ``h``.

    >>> [probe.name for probe in probes()]
    ['accurate_at_large_x', 'accurate_at_tiny_x']
"""

from __future__ import annotations

import numpy as np

from ...families import array_namespace
from ...operators import gradient, pushforward
from ..probes import BadInput
from ..tolerances import is_approximate

#: units of roundoff an exact backend's derivative of ``sum(x**2) + sum(x)`` may be off (one product
#: and one sum per entry)
EXACT_ULPS = 8
#: roundings of f's value, each of ``eps |f|``: one per term of its sums over three entries
SUM_ROUNDINGS = 6
LARGE = {"float32": 3e3, "float64": 1e6}
SIGNS = np.array([1.0, -1.0, 0.5])


def _f(x):
    xp = array_namespace(x)
    return xp.sum(x**2) + xp.sum(x)


def _first_order_bound(x, eps):
    """The error of the first-order rule with the step ``sqrt(eps) max(|x|, 1)``, per entry, absolute."""
    h = np.sqrt(eps) * max(float(np.max(np.abs(x))), 1.0)
    value, slope = abs(float(np.sum(x**2) + np.sum(x))), np.abs(2 * x + 1)
    return h * 2 / 2 + (SUM_ROUNDINGS * eps * value + slope * eps * np.abs(x)) / h


def _check_at(backend, problems, zero, x, where):
    eps = float(np.finfo(x.dtype).eps)
    exact = 2 * x.astype(np.float64) + 1
    tangent = np.zeros_like(x)
    tangent[0] = 1.0
    if is_approximate(backend):
        bound = _first_order_bound(x.astype(np.float64), eps)
        rtol, atol = 0.0, float(np.max(bound))
    else:
        rtol, atol = EXACT_ULPS * eps, 0.0
    problems.expect_results(
        {
            f"gradient of sum(x**2) + sum(x) {where}": (lambda: gradient(_f, backend, x), exact),
            f"pushforward of sum(x**2) + sum(x) along e_0 {where}": (
                lambda: pushforward(_f, backend, x, (tangent,))[0],
                np.asarray(exact[0]),
            ),
        },
        like=x,
        zero=zero,
        rtol=rtol,
        atol=atol,
    )


def _accurate_at_large_x(backend, problems, zero):
    for dtype, scale in LARGE.items():
        x = (scale * SIGNS).astype(dtype)
        _check_at(backend, problems, zero, x, f"at |x| = {scale:g} in {dtype}")


def _accurate_at_tiny_x(backend, problems, zero):
    for dtype in LARGE:
        x = np.array([0.0, 1e-30 if dtype == "float64" else 1e-20, -3e-12]).astype(dtype)
        _check_at(backend, problems, zero, x, f"at x = {x.tolist()} in {dtype}")


def probes():
    """The probes of derivatives at large and tiny |x|."""
    return [
        BadInput(
            "accurate_at_large_x",
            "gradients and pushforwards at |x| = 3e3 (float32) and 1e6 (float64) within the "
            "first-order rule's error (approximate backends) or a few roundoffs (exact ones)",
            _accurate_at_large_x,
        ),
        BadInput(
            "accurate_at_tiny_x",
            "gradients and pushforwards at 0 and tiny |x| within the first-order rule's error "
            "with an absolute step (approximate backends) or a few roundoffs (exact ones)",
            _accurate_at_tiny_x,
        ),
    ]
