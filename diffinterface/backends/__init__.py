"""Backend adapters: one module per AD library, imported on first use.

Each built-in backend is declared once, here: its selector, its adapter
(``"module:Class"``, imported the first time the selector is used), the pip
extra that installs its framework, and the configurations the conformance kit
tests by default. Nothing here imports a framework.
"""

from ..core import register_backend
from ..selectors import AutoAutograd, AutoFiniteDiff, AutoJAX, AutoTorch, AutoZeroForward, AutoZeroReverse

register_backend(
    AutoFiniteDiff, "diffinterface.backends.finitediff:FiniteDiffAdapter", extra=None,
    test_backends={
        "finitediff-central": AutoFiniteDiff(),
        "finitediff-forward": AutoFiniteDiff(method="forward"),
        "finitediff-complex": AutoFiniteDiff(method="complex"),
    },
)
register_backend(
    AutoJAX, "diffinterface.backends.jax:JAXAdapter", extra="jax",
    test_backends={"jax": AutoJAX(), "jax-forward": AutoJAX(mode="forward"), "jax-reverse": AutoJAX(mode="reverse")},
)
register_backend(
    AutoTorch, "diffinterface.backends.torch:TorchAdapter", extra="torch",
    test_backends={
        "torch": AutoTorch(), "torch-forward": AutoTorch(mode="forward"), "torch-reverse": AutoTorch(mode="reverse"),
    },
)
register_backend(
    AutoAutograd, "diffinterface.backends.autograd:AutogradAdapter", extra="autograd",
    test_backends={"autograd": AutoAutograd()},
)
register_backend(
    AutoZeroForward, "diffinterface.backends.zero:ZeroForwardAdapter",
    test_backends={"zero-forward": AutoZeroForward()}, returns_zeros=True,
)
register_backend(
    AutoZeroReverse, "diffinterface.backends.zero:ZeroReverseAdapter",
    test_backends={"zero-reverse": AutoZeroReverse()}, returns_zeros=True,
)
