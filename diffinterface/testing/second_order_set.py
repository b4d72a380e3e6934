"""The default second-order scenarios (:func:`~.scenarios.second_order_scenarios`): second
derivatives, batched Hessian-vector products and Hessians of analytic functions, float32 and float64."""

from __future__ import annotations

import numpy as np

from .analytic_functions import array_to_scalar, gradient_with_context, scalar_to_array
from .analytic_functions import scalar_to_scalar, scalar_with_context
from .scenario import Scenario, _contract_x, _tangent, _x


def second_order_set():
    """The default second-order scenarios: second_derivative, hvp (batched) and hessian, analytic."""
    from ..contexts import Constant

    scenarios = []
    add = scenarios.append

    def second(operator, f, x, value, first, second_result, name, contexts=(), tangents=None):
        dtype = np.asarray(x).dtype
        cast = lambda a: np.asarray(a, dtype=dtype)  # noqa: E731
        if isinstance(second_result, tuple):
            second_result = tuple(cast(a) for a in second_result)
        else:
            second_result = cast(second_result)
        add(
            Scenario(
                operator,
                f,
                x,
                tangents=tangents,
                contexts=tuple(Constant(c) for c in contexts),
                value=cast(value),
                first=cast(first),
                second=second_result,
                name=name,
            )
        )

    for dtype in ("float64", "float32"):
        x = _x((), dtype)
        f, value, d, d2 = scalar_to_scalar(x)
        second(
            "second_derivative", f, x, value, d, d2, f"second_derivative-scalar_to_scalar-{dtype}"
        )
    x = _x((), "float64")
    f, value, d, d2 = scalar_to_array(x, (3,))
    second("second_derivative", f, x, value, d, d2, "second_derivative-scalar_to_vector-float64")
    f, ctx, value, d, d2 = scalar_with_context(x)
    second(
        "second_derivative",
        f,
        x,
        value,
        d,
        d2,
        "second_derivative-constant_context-float64",
        contexts=ctx,
    )

    for shape, kind, dtype in (((4,), "vector", "float64"), ((2, 3), "matrix", "float32")):
        x = _x(shape, dtype)
        f, value, grad, hess = array_to_scalar(x)
        t = _tangent(shape, dtype, 12)
        tangents = (t, -t) if kind == "vector" else (t,)
        hvps = tuple(_contract_x(hess, t, x.ndim).reshape(shape) for t in tangents)
        label = "-batched" if len(tangents) > 1 else ""
        second(
            "hvp",
            f,
            x,
            value,
            grad,
            hvps,
            f"hvp-{kind}_to_scalar{label}-{dtype}",
            tangents=tangents,
        )
        second("hessian", f, x, value, grad, hess, f"hessian-{kind}_to_scalar-{dtype}")
    x = _x((3,), "float64")
    f, ctx, value, grad, hess = gradient_with_context(x)
    t = _tangent((3,), "float64", 13)
    second(
        "hvp",
        f,
        x,
        value,
        grad,
        (_contract_x(hess, t, 1),),
        "hvp-constant_context-float64",
        contexts=ctx,
        tangents=(t,),
    )
    second("hessian", f, x, value, grad, hess, "hessian-constant_context-float64", contexts=ctx)
    return scenarios
