"""diffinterface: one Python API for derivatives over every automatic-differentiation library.

    >>> import numpy as np
    >>> import diffinterface as di
    >>> f = lambda x: (x ** 2).sum()
    >>> backend = di.AutoFiniteDiff()          # or di.AutoJAX(), di.AutoTorch(), di.AutoAutograd()
    >>> prep = di.prepare_gradient(f, backend, np.ones(3))
    >>> di.gradient(f, backend, np.array([1.0, 2.0, 3.0]), prep=prep).round(4)
    array([2., 4., 6.])

Importing this package imports no framework; each backend's adapter
(``diffinterface/backends/<name>/``) is imported the first time it is used.
Layers, bottom up: ``families`` (one module per array family), ``selectors``,
``contexts``, ``errors`` -> ``core`` (the contract and the one prepared-call
path) -> ``backends`` (one folder per AD library) -> ``operators`` (one module
per operator family) -> ``wrappers`` (backends made of backends) -> this module.
"""

from typing import TYPE_CHECKING

from . import backends as _backends  # noqa: F401  (registers the built-in backends)
from .families import array_namespace
from .contexts import Cache, Constant
from .core import Preparation, check_available, check_inplace, flatten, register_backend
from .core.batching import batch_size
from .errors import (
    DifferentiationError,
    GraphBreakError,
    MissingBackendError,
    PreparationMismatchError,
    TracedArrayError,
    UnsupportedError,
)
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
from .operators import (
    prepare_hvp_same_point,
    prepare_pullback_same_point,
    prepare_pushforward_same_point,
)
from .wrappers import LAZY_NAMES as _WRAPPER_NAMES
from .selectors import (
    AbstractBackend,
    AutoAutograd,
    AutoFiniteDiff,
    AutoJAX,
    AutoMLX,
    AutoTensorFlow,
    AutoTorch,
    AutoZeroForward,
    AutoZeroReverse,
    SecondOrder,
)

if TYPE_CHECKING:  # imported on first access at run time: see __getattr__
    from .backends.finitediff.workers import WorkerError, close_workers
    from .backends.tensorflow.keras import keras_function
    from .backends.torch.modules import module_function
    from .wrappers import (
        AutoSelect,
        AutoSparse,
        Coloring,
        DenseSparsityDetector,
        DifferentiateWith,
        GreedyColoring,
        ImplicitFunction,
        KnownSparsity,
        LinearSolveError,
        MixedMode,
        TracerSparsityDetector,
        coloring,
        explain,
        ncolors,
        plot_sparsity,
        selected_backend,
        sparsity_pattern,
    )

__version__ = "0.1.0"

__all__ = [
    "AbstractBackend",
    "AutoAutograd",
    "AutoFiniteDiff",
    "AutoJAX",
    "AutoMLX",
    "AutoTensorFlow",
    "AutoTorch",
    "AutoZeroForward",
    "AutoZeroReverse",
    "SecondOrder",
    "DifferentiateWith",
    "ImplicitFunction",
    "LinearSolveError",
    "AutoSparse",
    "TracerSparsityDetector",
    "DenseSparsityDetector",
    "KnownSparsity",
    "GreedyColoring",
    "MixedMode",
    "Coloring",
    "coloring",
    "ncolors",
    "sparsity_pattern",
    "plot_sparsity",
    "AutoSelect",
    "explain",
    "selected_backend",
    "Cache",
    "Constant",
    "DifferentiationError",
    "GraphBreakError",
    "TracedArrayError",
    "MissingBackendError",
    "PreparationMismatchError",
    "UnsupportedError",
    "Preparation",
    "array_namespace",
    "flatten",
    "module_function",
    "keras_function",
    "check_available",
    "check_inplace",
    "register_backend",
    "batch_size",
    "close_workers",
    "WorkerError",
    "derivative",
    "prepare_derivative",
    "value_and_derivative",
    "gradient",
    "prepare_gradient",
    "value_and_gradient",
    "jacobian",
    "prepare_jacobian",
    "value_and_jacobian",
    "pullback",
    "prepare_pullback",
    "value_and_pullback",
    "pushforward",
    "prepare_pushforward",
    "value_and_pushforward",
    "second_derivative",
    "prepare_second_derivative",
    "value_derivative_and_second_derivative",
    "hvp",
    "prepare_hvp",
    "gradient_and_hvp",
    "hessian",
    "prepare_hessian",
    "value_gradient_and_hessian",
    "prepare_pushforward_same_point",
    "prepare_pullback_same_point",
    "prepare_hvp_same_point",
]


#: names of a framework's or the workers' helpers -> the module that defines them, imported on first
#: access (PEP 562) as the wrappers are: a process that computes a plain gradient never imports them
_LAZY_MODULES = {
    "module_function": "diffinterface.backends.torch.modules",
    "keras_function": "diffinterface.backends.tensorflow.keras",
    "WorkerError": "diffinterface.backends.finitediff.workers",
    "close_workers": "diffinterface.backends.finitediff.workers",
    **dict.fromkeys(_WRAPPER_NAMES, "diffinterface.wrappers"),
}


def __getattr__(name):
    module = _LAZY_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *__all__})
