"""diffinterface: one Python API for derivatives over every automatic-differentiation library.

    >>> import numpy as np
    >>> import diffinterface as di
    >>> f = lambda x: (x ** 2).sum()
    >>> backend = di.AutoFiniteDiff()          # or di.AutoJAX(), di.AutoTorch(), di.AutoAutograd()
    >>> prep = di.prepare_gradient(f, backend, np.ones(3))
    >>> di.gradient(f, backend, np.array([1.0, 2.0, 3.0]), prep=prep).round(4)
    array([2., 4., 6.])

Importing this package imports no framework; each backend's adapter
(``diffinterface/backends/<name>.py``) is imported the first time it is used.
"""

from .arrays import array_namespace
from .backends import check_available, check_inplace
from .contexts import Cache, Constant
from .errors import MissingBackendError, PreparationMismatchError, UnsupportedError
from .operators import (
    derivative,
    gradient,
    gradient_and_hvp,
    hessian,
    hvp,
    jacobian,
    prepare_derivative,
    prepare_gradient,
    prepare_hessian,
    prepare_hvp,
    prepare_jacobian,
    prepare_pullback,
    prepare_pushforward,
    prepare_second_derivative,
    pullback,
    pushforward,
    second_derivative,
    value_and_derivative,
    value_and_gradient,
    value_and_jacobian,
    value_and_pullback,
    value_and_pushforward,
    value_derivative_and_second_derivative,
    value_gradient_and_hessian,
)
from .preparation import Preparation
from .selectors import (
    AbstractBackend,
    AutoAutograd,
    AutoFiniteDiff,
    AutoJAX,
    AutoTorch,
    AutoZeroForward,
    AutoZeroReverse,
    SecondOrder,
)
from .wrappers import DifferentiateWith

__version__ = "0.1.0"

__all__ = [
    "AbstractBackend", "AutoAutograd", "AutoFiniteDiff", "AutoJAX", "AutoTorch",
    "AutoZeroForward", "AutoZeroReverse", "SecondOrder", "DifferentiateWith",
    "Cache", "Constant",
    "MissingBackendError", "PreparationMismatchError", "UnsupportedError", "Preparation",
    "array_namespace", "check_available", "check_inplace",
    "derivative", "prepare_derivative", "value_and_derivative",
    "gradient", "prepare_gradient", "value_and_gradient",
    "jacobian", "prepare_jacobian", "value_and_jacobian",
    "pullback", "prepare_pullback", "value_and_pullback",
    "pushforward", "prepare_pushforward", "value_and_pushforward",
    "second_derivative", "prepare_second_derivative", "value_derivative_and_second_derivative",
    "hvp", "prepare_hvp", "gradient_and_hvp",
    "hessian", "prepare_hessian", "value_gradient_and_hessian",
]
