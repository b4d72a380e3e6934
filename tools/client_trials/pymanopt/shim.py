"""pymanopt's autodiff backends with their derivatives computed by diffinterface.

pymanopt asks a backend for two operators of a cost ``f(*points)``: the
Euclidean gradient and the Euclidean Hessian-vector product. ``install()``
replaces both on pymanopt's autograd, JAX and PyTorch backends by
``di.gradient`` and ``di.hvp`` on the selectors of one variant (``VARIANTS``);
the cost itself is still evaluated by pymanopt. Several arguments (product
manifolds) become one tuple pytree. As a client would, the shim prepares once
per input signature (types, shapes, dtypes) and then calls with ``prep=``;
``prepared=False`` makes every call unprepared instead.

With ``cross_check=True`` every result is also computed by pymanopt's own
operator and compared (type, shape, dtype, values): a test whose assertions
would not notice a wrong derivative still fails on one.

For complex points pymanopt's autograd and JAX backends return the conjugate of
the framework's gradient; the shim does the same with diffinterface's result,
and records that the test saw complex numbers so that run.py counts it apart.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import diffinterface as di

complex_seen = False


def _variants() -> dict:
    jax, torch = di.AutoJAX(), di.AutoTorch()
    jax_forward, torch_forward = di.AutoJAX(mode="forward"), di.AutoTorch(mode="forward")
    # pymanopt backend name -> (gradient selector, hvp selector)
    return {
        "default": {"autograd": (di.AutoAutograd(),) * 2, "jax": (jax,) * 2, "torch": (torch,) * 2},
        "forward": {"autograd": (di.AutoAutograd(),) * 2, "jax": (jax_forward,) * 2,
                    "torch": (torch_forward,) * 2},
        "eager-jax": {"jax": (di.AutoJAX(jit=False),) * 2},
        "second-order": {
            "jax": (jax, di.SecondOrder(jax_forward, jax)),
            "torch": (torch, di.SecondOrder(torch_forward, torch)),
            "autograd": (di.AutoAutograd(), di.SecondOrder(jax, di.AutoAutograd())),
        },
    }


VARIANTS = tuple(_variants())


def _signature(tree: tuple) -> tuple:
    return tuple((type(a), np.shape(a), str(getattr(a, "dtype", ""))) for a in tree)


def _conjugate(tree: tuple) -> tuple:
    global complex_seen
    if any(np.iscomplexobj(leaf) for leaf in tree):
        complex_seen = True
        return tuple(np.conj(leaf) for leaf in tree)
    return tree


def _compare(operator: str, got: Any, native: Any) -> None:
    got_leaves = got if isinstance(got, list) else [got]
    native_leaves = native if isinstance(native, list) else [native]
    assert len(got_leaves) == len(native_leaves), f"{operator}: leaf count"
    for g, n in zip(got_leaves, native_leaves):
        described = (type(g).__name__, np.shape(g), np.asarray(g).dtype)
        expected = (type(n).__name__, np.shape(n), np.asarray(n).dtype)
        assert described == expected, f"{operator}: got {described}, native gives {expected}"
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-9, err_msg=operator)


class Derivatives:
    """The gradient and hvp of one cost through diffinterface."""

    def __init__(self, function: Callable, num_arguments: int, selector: Any,
                 native: Callable | None, prepared: bool):
        self.selector = selector
        self.native = native
        self.prepared = prepared
        self.single = num_arguments == 1
        # One function object for every call: a preparation is tied to it.
        self.f = function if self.single else (lambda points: function(*points))
        self.preparations: dict = {}

    def _x(self, points: tuple) -> Any:
        return points[0] if self.single else tuple(points)

    def _finish(self, operator: str, result: Any, arguments: tuple) -> Any:
        leaves = _conjugate((result,) if self.single else tuple(result))
        answer = leaves[0] if self.single else list(leaves)
        if self.native is not None:
            _compare(operator, answer, self.native(*arguments))
        return answer

    def _prep(self, key: tuple, prepare: Callable) -> Any:
        if not self.prepared:
            return None
        if key not in self.preparations:
            self.preparations[key] = prepare()
        return self.preparations[key]

    def gradient(self, *points: Any) -> Any:
        _conjugate(points)
        x = self._x(points)
        prep = self._prep(_signature(points),
                          lambda: di.prepare_gradient(self.f, self.selector, x))
        result = di.gradient(self.f, self.selector, x, prep=prep)
        return self._finish("gradient", result, points)

    def hvp(self, *points_and_vectors: Any) -> Any:
        _conjugate(points_and_vectors)
        half = len(points_and_vectors) // 2
        points, vectors = points_and_vectors[:half], points_and_vectors[half:]
        x, tangents = self._x(points), (self._x(vectors),)
        prep = self._prep(_signature(points_and_vectors),
                          lambda: di.prepare_hvp(self.f, self.selector, x, tangents))
        (product,) = di.hvp(self.f, self.selector, x, tangents, prep=prep)
        return self._finish("hvp", product, points_and_vectors)


def install(variant: str = "default", prepared: bool = True, cross_check: bool = False) -> None:
    """Route pymanopt's derivatives through diffinterface's selectors of ``variant``."""
    from pymanopt.autodiff import backends

    classes = {"autograd": backends.AutogradBackend, "jax": backends.JaxBackend,
               "torch": backends.PyTorchBackend}
    for name, (gradient_selector, hvp_selector) in _variants()[variant].items():
        backend_class = classes[name]
        native_gradient = backend_class.generate_gradient_operator
        native_hessian = backend_class.generate_hessian_operator

        def gradient_operator(self, function, num_arguments,
                              selector=gradient_selector, native=native_gradient):
            check = native(self, function, num_arguments) if cross_check else None
            return Derivatives(function, num_arguments, selector, check, prepared).gradient

        def hessian_operator(self, function, num_arguments,
                             selector=hvp_selector, native=native_hessian):
            check = native(self, function, num_arguments) if cross_check else None
            return Derivatives(function, num_arguments, selector, check, prepared).hvp

        backend_class.generate_gradient_operator = gradient_operator
        backend_class.generate_hessian_operator = hessian_operator
