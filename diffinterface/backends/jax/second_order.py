"""Second order on JAX: JAX's own nested transforms, compiled, and first derivatives JAX differentiates again."""

from __future__ import annotations

from ...core import Impl, require_scalar_output
from ...core.batching import record
from .batching import sweep_batch
from .aux import traced_function
from .calls import _owned, _to_numpy
from .transforms import (
    _batched,
    _derivative_pair,
    _forward_products,
    _gradient_pair,
    _jacobian_transform,
)
from .transforms import _around_gradients, _reverse_products, _second_order


class JAXSecondOrder:
    """The second-order recipes of :class:`~diffinterface.backends.jax.adapter.JAXAdapter` (a mixin: they
    compile through the adapter's ``_impl``)."""

    def _outer_mode(self):
        return "reverse" if self.backend.mode == "reverse" else "forward"

    def _inner_mode(self):
        return "forward" if self.backend.mode == "forward" else "reverse"

    def prepare_second_derivative(self, problem):
        mode = self.backend.mode or "forward"  # inner and outer alike
        scalar_output = mode == "reverse" and problem.spec.shape == ()
        f, aux = traced_function(problem)

        def full():
            return _second_order(
                _derivative_pair(f, mode, scalar_output, aux)[1], mode, has_aux=aux
            )

        def second_only():
            value_first_and_second = full()

            def second(x, *ctx):
                out = value_first_and_second(x, *ctx)
                return (out[0][2], out[1]) if aux else out[2]

            return second

        return self._impl(
            problem,
            ("second_derivative", mode, scalar_output),
            {"second_derivative": second_only, "value_derivative_and_second_derivative": full},
            {"second_derivative": _owned, "value_derivative_and_second_derivative": _to_numpy},
        )

    def _inner_bound(self, problem, inner):
        """The batch bound of a forward-mode inner gradient, a sweep over x's entries (None: whole)."""
        if inner != "forward" or problem.tree is not None:
            return None
        return sweep_batch(self, problem, problem.x_size, inner)[0]

    def prepare_hessian(self, problem):
        require_scalar_output(problem, "hessian")
        inner, outer, f = self._inner_mode(), self._outer_mode(), problem.f
        inner_bound = self._inner_bound(problem, inner)
        bound, chosen = sweep_batch(
            self, problem, problem.x_size, outer, _gradient_pair(f, inner, False, inner_bound)[0]
        )
        f, aux = traced_function(problem)

        def hessian():
            return _jacobian_transform(outer, bound)(
                _gradient_pair(f, inner, aux, inner_bound)[0], has_aux=aux
            )

        return record(
            self._impl(
                problem,
                ("hessian", inner, outer, inner_bound),
                {
                    "hessian": hessian,
                    "value_gradient_and_hessian": lambda: _second_order(
                        _gradient_pair(f, inner, aux, inner_bound)[1], outer, bound, aux
                    ),
                },
                {"hessian": _owned, "value_gradient_and_hessian": _to_numpy},
            ),
            chosen,
        )

    def prepare_hvp(self, problem):
        require_scalar_output(problem, "hvp")
        inner, outer, f, k = (
            self._inner_mode(),
            self._outer_mode(),
            problem.f,
            len(problem.tangents),
        )
        # H @ t: forward over the gradient, or its VJP (H is symmetric: t @ H = H @ t).
        products = _reverse_products if outer == "reverse" else _forward_products
        inner_bound = self._inner_bound(problem, inner)
        bound, chosen = sweep_batch(
            self, problem, k, outer, _gradient_pair(f, inner, False, inner_bound)[0]
        )
        f, aux = traced_function(problem)
        gradient = lambda: _gradient_pair(f, inner, aux, inner_bound)[0]  # noqa: E731
        return record(
            self._impl(
                problem,
                ("hvp", inner, outer, k, inner_bound),
                {
                    "hvp": lambda flat: _batched(gradient(), products, k, False, flat, bound, aux),
                    "gradient_and_hvp": lambda flat: _batched(
                        gradient(), products, k, True, flat, bound, aux
                    ),
                },
                batched=True,
            ),
            chosen,
        )

    # -- hooks for SecondOrder(AutoJAX(...), AutoJAX(...)) ----------------------------------------

    def differentiable_value_and_gradient(self, problem):
        return _gradient_pair(problem.f, problem.mode("gradient"))[1]

    def prepare_batched_gradient(self, problem, formulas):
        # Each formula (an evaluating outer's: finite differences) compiled whole, one function of
        # (x, tangents, *ctx): its gradients mapped over the tangents, no host work between them.
        mode, k, compiles = problem.mode("gradient"), len(problem.tangents), self._compiles(problem)
        gradient = _gradient_pair(problem.f, mode)[0]
        builders = {}
        for name, (per_tangent, build) in formulas.items():
            # one point's gradient costs about what one seed's reverse product does
            bound = sweep_batch(self, problem, per_tangent * k, "reverse")[0]
            bound = (
                bound if bound is None or hasattr(bound, "map") else max(1, bound // per_tangent)
            )
            with_first = name.startswith("value_and_")
            # not an operator's method name: f's aux, if any, is captured as for f itself
            builders[name + "_around_gradients"] = (
                lambda flat, build=build, bound=bound, with_first=with_first: _batched(
                    gradient, _around_gradients(build, compiles), k, with_first, flat, bound
                )
            )
        impl = self._impl(problem, ("batched_gradient", mode, k), builders, batched=True)
        return Impl(**{name: getattr(impl, name + "_around_gradients") for name in formulas})

    def differentiable_value_and_derivative(self, problem):
        mode = problem.mode("derivative")
        return _derivative_pair(problem.f, mode, mode == "reverse" and problem.spec.shape == ())[1]
