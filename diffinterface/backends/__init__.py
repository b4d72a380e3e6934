"""Backend adapters: one folder per AD library, imported on first use.

Each built-in backend is declared once, here: its selector, its adapter
(``"module:Class"``, imported the first time the selector is used), the pip
extra that installs its framework, the configurations the conformance kit
tests by default, and for a framework that traces its own arrays, its name and
its DifferentiateWith rules (``"module:attr"``, imported the first time a
bridge meets that framework's arrays). Nothing here imports a framework.

A folder ``backends/<name>/`` holds everything about one library: its adapter
(``adapter.py``), its DifferentiateWith rules (``differentiate_with.py``), and
its second-order and sparse specializations.
"""

from ..core import register_backend
from ..selectors import (
    AutoAutograd,
    AutoFiniteDiff,
    AutoJAX,
    AutoTensorFlow,
    AutoTorch,
    AutoZeroForward,
    AutoZeroReverse,
)


def _register_framework(selector, name, adapter_class, test_backends):
    """A framework's backend: its adapter, pip extra and DifferentiateWith rules in ``backends/<name>/``."""
    register_backend(
        selector,
        f"diffinterface.backends.{name}.adapter:{adapter_class}",
        extra=name,
        test_backends=test_backends,
        framework=name,
        differentiate_with=f"diffinterface.backends.{name}.differentiate_with:BRIDGE",
    )


register_backend(
    AutoFiniteDiff,
    "diffinterface.backends.finitediff.adapter:FiniteDiffAdapter",
    extra=None,
    test_backends={
        "finitediff-central": AutoFiniteDiff(),
        "finitediff-forward": AutoFiniteDiff(method="forward"),
        "finitediff-complex": AutoFiniteDiff(method="complex"),
    },
)
_register_framework(
    AutoJAX,
    "jax",
    "JAXAdapter",
    {
        "jax": AutoJAX(),
        "jax-forward": AutoJAX(mode="forward"),
        "jax-reverse": AutoJAX(mode="reverse"),
        "jax-eager": AutoJAX(jit=False),
    },
)
_register_framework(
    AutoTorch,
    "torch",
    "TorchAdapter",
    {
        "torch": AutoTorch(),
        "torch-forward": AutoTorch(mode="forward"),
        "torch-reverse": AutoTorch(mode="reverse"),
    },
)
_register_framework(AutoAutograd, "autograd", "AutogradAdapter", {"autograd": AutoAutograd()})
_register_framework(
    AutoTensorFlow,
    "tensorflow",
    "TensorFlowAdapter",
    {
        "tensorflow": AutoTensorFlow(),
        "tensorflow-forward": AutoTensorFlow(mode="forward"),
        "tensorflow-reverse": AutoTensorFlow(mode="reverse"),
    },
)
register_backend(
    AutoZeroForward,
    "diffinterface.backends.zero:ZeroForwardAdapter",
    test_backends={"zero-forward": AutoZeroForward()},
    returns_zeros=True,
)
register_backend(
    AutoZeroReverse,
    "diffinterface.backends.zero:ZeroReverseAdapter",
    test_backends={"zero-reverse": AutoZeroReverse()},
    returns_zeros=True,
)
