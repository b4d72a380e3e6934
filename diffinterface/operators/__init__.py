"""Operator families: one module each (prepare_X, X, value_and_X and X's fallback).

The public list of these names is ``diffinterface.__all__``; this package only imports them.
"""

# the order of these imports is the operator table's order (each module registers its row)
from .pushforward import (
    prepare_pushforward,
    prepare_pushforward_same_point,
    pushforward,
    value_and_pushforward,
)  # isort: skip
from .pullback import prepare_pullback, prepare_pullback_same_point, pullback, value_and_pullback  # isort: skip
from .derivative import derivative, prepare_derivative, value_and_derivative  # isort: skip
from .gradient import gradient, prepare_gradient, value_and_gradient  # isort: skip
from .jacobian import jacobian, prepare_jacobian, value_and_jacobian  # isort: skip
from .second_derivative import (  # isort: skip
    prepare_second_derivative,
    second_derivative,
    value_derivative_and_second_derivative,
)
from .hvp import gradient_and_hvp, hvp, prepare_hvp, prepare_hvp_same_point  # isort: skip
from .hessian import hessian, prepare_hessian, value_gradient_and_hessian  # isort: skip
