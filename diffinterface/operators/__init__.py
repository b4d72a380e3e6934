"""Operator families: one module each (prepare_X, X, value_and_X and X's fallback)."""

from .derivative import derivative, prepare_derivative, value_and_derivative
from .gradient import gradient, prepare_gradient, value_and_gradient
from .hessian import hessian, prepare_hessian, value_gradient_and_hessian
from .hvp import gradient_and_hvp, hvp, prepare_hvp
from .jacobian import jacobian, prepare_jacobian, value_and_jacobian
from .pullback import prepare_pullback, pullback, value_and_pullback
from .pushforward import prepare_pushforward, pushforward, value_and_pushforward
from .second_derivative import (
    prepare_second_derivative,
    second_derivative,
    value_derivative_and_second_derivative,
)

__all__ = [
    "derivative", "prepare_derivative", "value_and_derivative",
    "gradient", "prepare_gradient", "value_and_gradient",
    "jacobian", "prepare_jacobian", "value_and_jacobian",
    "prepare_pullback", "pullback", "value_and_pullback",
    "prepare_pushforward", "pushforward", "value_and_pushforward",
    "second_derivative", "prepare_second_derivative", "value_derivative_and_second_derivative",
    "hvp", "prepare_hvp", "gradient_and_hvp",
    "hessian", "prepare_hessian", "value_gradient_and_hessian",
]
