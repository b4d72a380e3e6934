"""AutoFiniteDiff's step rule against the theory of finite differences, at |x| from 1 to 2.

The documented rule takes ``h = eps**(1/2) |x|`` forward and ``h = eps**(1/3) |x|`` central: the steps
that balance truncation against rounding. For f(x) = x**3 (f' = 3 x**2, f'' = 6 x, f''' = 6) each bound
below is the sum of the three errors of that step, relative to f':

- truncation: ``h |f''| / 2`` forward, ``h**2 |f'''| / 6`` central;
- rounding of f's values: ``eps |f|`` in each of the two values, divided by the step between them;
- rounding of the points ``x + h``: each moved by up to ``eps |x|``, which f' turns into ``|f'| eps |x|``
  in each value, divided by the step between them.

A step of another order (eps**(1/2) central, eps**(1/3) forward) makes one of them the larger by a
factor that grows as eps shrinks, beyond these bounds.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di

X = np.linspace(1.0, 2.0, 64)


def _bound(method, eps, x, scale):
    """The bound at ``x`` for a step scaled by ``scale`` (x itself along one coordinate; the largest
    |x_i| over a tangent's support along a tangent)."""
    f, d1, d2, d3 = x**3, 3 * x**2, 6 * x, 6.0
    if method == "forward":
        h = eps ** (1 / 2) * scale
        truncation, between = h * d2 / 2, h
    else:
        h = eps ** (1 / 3) * scale
        truncation, between = h**2 * d3 / 6, 2 * h
    rounding = 2 * eps * f / between + 2 * d1 * eps * x / between
    return (truncation + rounding) / d1


@pytest.mark.parametrize("method", ["forward", "central"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("operator", ["jacobian", "pushforward"])
def test_each_step_rule_is_as_accurate_as_its_theory(method, dtype, operator):
    x = X.astype(dtype)
    eps = float(np.finfo(dtype).eps)
    backend = di.AutoFiniteDiff(method=method)
    if operator == "jacobian":
        got, scale = np.diag(di.jacobian(lambda x: x**3, backend, x)), X
    else:  # one tangent along all entries: each entry of f is its own x's
        (got,) = di.pushforward(lambda x: x**3, backend, x, (np.ones_like(x),))
        scale = np.max(X)
    exact = 3 * X**2
    error = np.abs(got.astype(np.float64) - exact) / exact
    bound = _bound(method, eps, X, scale)
    worst = int(np.argmax(error / bound))
    assert (error <= bound).all(), (
        f"{method} differences in {np.dtype(dtype).name}: relative error {error[worst]:.3g} at x = "
        f"{X[worst]:.3g}, above the step rule's bound {bound[worst]:.3g}"
    )
