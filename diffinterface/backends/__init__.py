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
register_backend(
    AutoJAX,
    "diffinterface.backends.jax.adapter:JAXAdapter",
    extra="jax",
    test_backends={
        "jax": AutoJAX(),
        "jax-forward": AutoJAX(mode="forward"),
        "jax-reverse": AutoJAX(mode="reverse"),
        "jax-eager": AutoJAX(jit=False),
    },
    framework="jax",
    differentiate_with="diffinterface.backends.jax.differentiate_with:BRIDGE",
)
register_backend(
    AutoTorch,
    "diffinterface.backends.torch.adapter:TorchAdapter",
    extra="torch",
    test_backends={
        "torch": AutoTorch(),
        "torch-forward": AutoTorch(mode="forward"),
        "torch-reverse": AutoTorch(mode="reverse"),
    },
    framework="torch",
    differentiate_with="diffinterface.backends.torch.differentiate_with:BRIDGE",
)
register_backend(
    AutoAutograd,
    "diffinterface.backends.autograd.adapter:AutogradAdapter",
    extra="autograd",
    test_backends={"autograd": AutoAutograd()},
    framework="autograd",
    differentiate_with="diffinterface.backends.autograd.differentiate_with:BRIDGE",
)
register_backend(
    AutoTensorFlow,
    "diffinterface.backends.tensorflow.adapter:TensorFlowAdapter",
    extra="tensorflow",
    test_backends={
        "tensorflow": AutoTensorFlow(),
        "tensorflow-forward": AutoTensorFlow(mode="forward"),
        "tensorflow-reverse": AutoTensorFlow(mode="reverse"),
    },
    framework="tensorflow",
    differentiate_with="diffinterface.backends.tensorflow.differentiate_with:BRIDGE",
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
