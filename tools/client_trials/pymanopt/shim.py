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
the framework's gradient, ``∂f/∂Re + i ∂f/∂Im``, which is diffinterface's
convention on every backend (docs/complex.md): complex points go to
diffinterface as they are and its results back as they are. The shim records
that the test saw complex numbers so that run.py counts it apart.
``complex_as_pairs=True`` passes each complex leaf as a (real part, imaginary
part) pair instead, the way around complex x before diffinterface took it.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import diffinterface as di

complex_seen = False


def _variants() -> dict:
    jax, torch = di.AutoJAX(), di.AutoTorch()
    jax_forward, torch_forward = di.AutoJAX(mode="forward"), di.AutoTorch(mode="forward")
    # pymanopt backend name -> (gradient selector, hvp selector)
    return {
        "default": {"autograd": (di.AutoAutograd(),) * 2, "jax": (jax,) * 2, "torch": (torch,) * 2},
        "forward": {
            "autograd": (di.AutoAutograd(),) * 2,
            "jax": (jax_forward,) * 2,
            "torch": (torch_forward,) * 2,
        },
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


def _mark_complex(tree: tuple) -> bool:
    global complex_seen
    found = any(np.iscomplexobj(leaf) for leaf in tree)
    complex_seen = complex_seen or found
    return found


def _compare(operator: str, got: Any, native: Any) -> None:
    got_leaves = got if isinstance(got, list) else [got]
    native_leaves = native if isinstance(native, list) else [native]
    assert len(got_leaves) == len(native_leaves), f"{operator}: leaf count"
    for g, n in zip(got_leaves, native_leaves):
        described = (type(g).__name__, np.shape(g), np.asarray(g).dtype)
        expected = (type(n).__name__, np.shape(n), np.asarray(n).dtype)
        assert described == expected, f"{operator}: got {described}, native gives {expected}"
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-9, err_msg=operator)


class Route(NamedTuple):
    """How one input signature goes to diffinterface and back."""

    f: Callable  # of one pytree; one object per signature, as a preparation is tied to it
    to_x: Callable  # pymanopt's arguments -> diffinterface's x
    to_answer: Callable  # diffinterface's result -> what pymanopt expects


def _direct(function: Callable, single: bool) -> Route:
    if single:
        return Route(function, lambda points: points[0], lambda r: r)
    return Route(lambda points: function(*points), tuple, list)


def _as_real_pairs(function: Callable, split: tuple, single: bool) -> Route:
    """Complex leaves as (real part, imaginary part): the way around diffinterface's refusal.

    For a real-valued f, (df/dre, df/dim) combined as df/dre + i df/dim is the conjugate of
    JAX's complex gradient, pymanopt's convention.
    """

    def combine(leaves: tuple) -> tuple:
        return tuple(
            leaf[0] + 1j * leaf[1] if is_complex else leaf
            for leaf, is_complex in zip(leaves, split)
        )

    def to_x(points: tuple) -> tuple:
        return tuple(
            (np.ascontiguousarray(p.real), np.ascontiguousarray(p.imag)) if is_complex else p
            for p, is_complex in zip(points, split)
        )

    def to_answer(result: tuple) -> Any:
        return combine(result)[0] if single else list(combine(result))

    return Route(lambda leaves: function(*combine(leaves)), to_x, to_answer)


class Derivatives:
    """The gradient and hvp of one cost through diffinterface."""

    def __init__(
        self,
        function: Callable,
        num_arguments: int,
        selector: Any,
        native: Callable | None,
        options: dict,
    ):
        self.function, self.single = function, num_arguments == 1
        self.selector, self.native, self.options = selector, native, options
        self.routes: dict = {}
        self.preparations: dict = {}

    def _route(self, points: tuple) -> Route:
        key = _signature(points)
        if key not in self.routes:
            split = tuple(np.iscomplexobj(p) for p in points)
            pairs = self.options.get("complex_as_pairs") and any(split)
            self.routes[key] = (
                _as_real_pairs(self.function, split, self.single)
                if pairs
                else _direct(self.function, self.single)
            )
        _mark_complex(points)
        return self.routes[key]

    def _finish(self, operator: str, route: Route, result: Any, arguments: tuple) -> Any:
        answer = route.to_answer(result)
        if self.native is not None:
            _compare(operator, answer, self.native(*arguments))
        return answer

    def _prep(self, key: tuple, prepare: Callable) -> Any:
        if not self.options.get("prepared", True):
            return None
        if key not in self.preparations:
            self.preparations[key] = prepare()
        return self.preparations[key]

    def gradient(self, *points: Any) -> Any:
        route = self._route(points)
        x = route.to_x(points)
        prep = self._prep(
            ("gradient", _signature(points)), lambda: di.prepare_gradient(route.f, self.selector, x)
        )
        result = di.gradient(route.f, self.selector, x, prep=prep)
        return self._finish("gradient", route, result, points)

    def hvp(self, *points_and_vectors: Any) -> Any:
        half = len(points_and_vectors) // 2
        points, vectors = points_and_vectors[:half], points_and_vectors[half:]
        route = self._route(points)
        x, tangents = route.to_x(points), (route.to_x(vectors),)
        prep = self._prep(
            ("hvp", _signature(points_and_vectors)),
            lambda: di.prepare_hvp(route.f, self.selector, x, tangents),
        )
        (product,) = di.hvp(route.f, self.selector, x, tangents, prep=prep)
        return self._finish("hvp", route, product, points_and_vectors)


def install(variant: str = "default", cross_check: bool = False, **options: bool) -> None:
    """Route pymanopt's derivatives through diffinterface's selectors of ``variant``.

    ``options``: ``prepared`` (default True), ``complex_as_pairs`` (default False).
    """
    from pymanopt.autodiff import backends

    classes = {
        "autograd": backends.AutogradBackend,
        "jax": backends.JaxBackend,
        "torch": backends.PyTorchBackend,
    }
    for name, (gradient_selector, hvp_selector) in _variants()[variant].items():
        backend_class = classes[name]
        native_gradient = backend_class.generate_gradient_operator
        native_hessian = backend_class.generate_hessian_operator

        def gradient_operator(
            self, function, num_arguments, selector=gradient_selector, native=native_gradient
        ):
            check = native(self, function, num_arguments) if cross_check else None
            return Derivatives(function, num_arguments, selector, check, options).gradient

        def hessian_operator(
            self, function, num_arguments, selector=hvp_selector, native=native_hessian
        ):
            check = native(self, function, num_arguments) if cross_check else None
            return Derivatives(function, num_arguments, selector, check, options).hvp

        backend_class.generate_gradient_operator = gradient_operator
        backend_class.generate_hessian_operator = hessian_operator
