"""MLX's own recipes, one function per operator: what an MLX user writes with ``mx.jvp``, ``mx.vjp``,
``mx.grad`` and ``mx.vmap``.

Each recipe is built from ``f(x, *ctx)`` and returns ``run(x, *args, *ctx)``
of MLX arrays only (so that ``mx.compile`` can trace it): ``args`` is a
stack of seeds (tangents, cotangents or basis vectors, first axis the seed)
for the seeded ones. A stack of seeds is one ``mx.vmap`` of the one-seed
product; with ``one``, ``args`` is one seed and the product comes alone, unstacked.
"""

from __future__ import annotations

import mlx.core as mx


def _of_x(f, ctx):
    return lambda z: f(z, *ctx)


#: MLX's words for an operation without a forward rule (its factorizations, scatter, cumprod)
_NO_FORWARD_RULE = (
    "[Primitive::jvp] Not implemented",
    "JVP not yet implemented",
    "JVP is not implemented",
)


def _jvp(g, x, t):
    """``(g(x), J t)`` by ``mx.jvp``; where an operation of g has no forward rule in MLX, by transposing
    the VJP: ``u -> J^T u`` is linear, and its own VJP along ``t`` is ``J t``."""
    try:
        y, d = mx.jvp(g, [x], [t])
    except (ValueError, RuntimeError) as error:
        if not any(words in str(error) for words in _NO_FORWARD_RULE):
            raise
        return _jvp_by_transposition(g, x, t)
    return y[0], d[0]


def _jvp_by_transposition(g, x, t):
    y = g(mx.array(x))  # a handle of its own: g may write into its argument (x += 1)
    _, (d,) = mx.vjp(lambda u: mx.vjp(g, [x], [u])[1][0], [mx.zeros_like(y)], [t])
    return y, d


def _vjp(g, x, c):
    y, d = mx.vjp(g, [x], [c])
    return y[0], d[0]


def _products(f, product, one):
    """``run(x, seeds, *ctx) -> (f(x), stacked products)``; ``one``: one seed, one product."""

    def run(x, seeds, *ctx):
        g = _of_x(f, ctx)
        if one:
            return product(g, x, seeds)
        # f(x) on a handle of its own: an f that writes into its argument (x += 1, in place on an
        # MLX array) would otherwise move the x the products are taken at
        return g(mx.array(x)), mx.vmap(lambda s: product(g, x, s)[1])(seeds)

    return run


def pushforwards(f, one):
    """A stack of tangents: ``(f(x), stacked pushforwards)``."""
    return _products(f, _jvp, one)


def pullbacks(f, one):
    """A stack of cotangents: ``(f(x), stacked pullbacks)``."""
    return _products(f, _vjp, one)


def _hvp(g, x, t):
    """``(gradient, H t)``: reverse over reverse, ``mx.vjp`` of ``mx.grad`` (the Hessian is symmetric).

    MLX's reverse rules cover more than its forward ones (scatter, behind the
    gradient of any indexing, has no JVP), so the product is a VJP of the gradient.
    """
    (gradient,), (d,) = mx.vjp(mx.grad(g), [x], [t])
    return gradient, d


def hvps(f, one):
    """``(gradient, stacked hvps)``."""

    def run(x, tangents, *ctx):
        g = _of_x(f, ctx)
        if one:
            return _hvp(g, x, tangents)
        return mx.grad(g)(x), mx.vmap(lambda t: _hvp(g, x, t)[1])(tangents)

    return run


def gradient(f):
    """``(f(x), gradient)`` by ``mx.value_and_grad``."""

    def run(x, *ctx):
        return mx.value_and_grad(_of_x(f, ctx))(x)

    return run


def gradient_alone(f):
    """The gradient by ``mx.grad``."""

    def run(x, *ctx):
        return mx.grad(_of_x(f, ctx))(x)

    return run


def hessian_rows(f, one):
    """``(f(x), gradient, stacked rows of the Hessian along the basis given)``: reverse over reverse."""

    def run(x, basis, *ctx):
        g = _of_x(f, ctx)
        value, gradient = mx.value_and_grad(g)(x)
        if one:
            return value, gradient, _hvp(g, x, basis)[1]
        return value, gradient, mx.vmap(lambda t: _hvp(g, x, t)[1])(basis)

    return run


def second_derivative(f):
    """``(f(x), derivative, second derivative)``: forward over forward, tangent 1."""

    def run(x, *ctx):
        g = _of_x(f, ctx)
        one = mx.ones_like(x)

        def derivative(z):
            return mx.jvp(g, [z], [one])[1][0]

        (d,), (dd,) = mx.jvp(derivative, [x], [one])
        return g(x), d, dd

    return run
