"""The backends this project tests, with readable ids.

``BACKENDS`` maps a test id to a selector. Tests parametrize over it (select a
subset with ``--di-backends=id,id`` or the ``DI_BACKENDS`` environment
variable). A listed backend whose framework fails to import is a test
failure, never a skip.
"""

from __future__ import annotations

from ..selectors import (
    AutoAutograd,
    AutoFiniteDiff,
    AutoJAX,
    AutoTorch,
    AutoZeroForward,
    AutoZeroReverse,
)

BACKENDS = {
    "finitediff-central": AutoFiniteDiff(),
    "finitediff-forward": AutoFiniteDiff(method="forward"),
    "finitediff-complex": AutoFiniteDiff(method="complex"),
    "jax": AutoJAX(),
    "jax-forward": AutoJAX(mode="forward"),
    "jax-reverse": AutoJAX(mode="reverse"),
    "torch": AutoTorch(),
    "torch-forward": AutoTorch(mode="forward"),
    "torch-reverse": AutoTorch(mode="reverse"),
    "autograd": AutoAutograd(),
}

#: Backends that return zeros: they check shapes and fallbacks, not values.
ZERO_BACKENDS = {
    "zero-forward": AutoZeroForward(),
    "zero-reverse": AutoZeroReverse(),
}
