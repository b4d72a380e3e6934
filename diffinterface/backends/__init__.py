"""Backend adapters: one module per AD library, imported on first use.

The table below maps each selector to its adapter module and the pip extra
that installs its framework. Nothing here imports a framework until
:func:`get_adapter` is called with that framework's selector.
"""

from __future__ import annotations

import importlib

from ..errors import MissingBackendError
from ..selectors import (
    AbstractBackend,
    AutoAutograd,
    AutoFiniteDiff,
    AutoJAX,
    AutoTorch,
    AutoZeroForward,
    AutoZeroReverse,
    SecondOrder,
)

# selector class -> (adapter module, adapter class, pip extra or None); a module name with a dot
# is absolute (a wrapper's adapter outside this folder), one without is a module of this folder
REGISTRY = {
    AutoJAX: ("jax", "JAXAdapter", "jax"),
    AutoTorch: ("torch", "TorchAdapter", "torch"),
    AutoAutograd: ("autograd", "AutogradAdapter", "autograd"),
    AutoFiniteDiff: ("finitediff", "FiniteDiffAdapter", None),
    AutoZeroForward: ("zero", "ZeroForwardAdapter", None),
    AutoZeroReverse: ("zero", "ZeroReverseAdapter", None),
    SecondOrder: ("second_order", "SecondOrderAdapter", None),
}

_adapters = {}


def get_adapter(backend):
    """The adapter for a selector (cached per selector value)."""
    adapter = _adapters.get(backend)
    if adapter is not None:
        return adapter
    entry = REGISTRY.get(type(backend))
    if entry is None:
        accepted = ", ".join(f"{cls.__name__}()" for cls in REGISTRY)
        raise TypeError(f"backend: expected a backend selector ({accepted}); got {backend!r}")
    module_name, class_name, extra = entry
    try:
        module = importlib.import_module(module_name if "." in module_name else f"{__name__}.{module_name}")
    except ImportError as error:
        hint = f"pip install 'diffinterface[{extra}]'" if extra else "pip install diffinterface"
        raise MissingBackendError(
            f"{type(backend).__name__} needs {error.name or module_name}, which is not installed: {hint}"
        ) from error
    adapter = getattr(module, class_name)(backend)
    _adapters[backend] = adapter
    return adapter


def check_available(backend) -> bool:
    """True when the backend's framework imports.

        >>> import diffinterface as di
        >>> di.check_available(di.AutoFiniteDiff())
        True
    """
    if not isinstance(backend, AbstractBackend):
        get_adapter(backend)  # raises the TypeError naming the selectors
    try:
        get_adapter(backend)
    except MissingBackendError:
        return False
    return True


def check_inplace(backend) -> bool:
    """True when the backend differentiates two-argument functions ``f(y, x)`` that write ``y``."""
    return get_adapter(backend).inplace
