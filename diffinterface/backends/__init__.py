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

from .. import selectors
from ..core import register_backend


def _each_mode(selector, name):
    """The kit's configurations of a selector with a ``mode``: its default, forward and reverse."""
    modes = {name: selector(), f"{name}-forward": selector(mode="forward")}
    return {**modes, f"{name}-reverse": selector(mode="reverse")}


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
    selectors.AutoFiniteDiff,
    "diffinterface.backends.finitediff.adapter:FiniteDiffAdapter",
    extra=None,
    test_backends={
        "finitediff-central": selectors.AutoFiniteDiff(),
        "finitediff-forward": selectors.AutoFiniteDiff(method="forward"),
        "finitediff-complex": selectors.AutoFiniteDiff(method="complex"),
    },
)
_register_framework(
    selectors.AutoJAX,
    "jax",
    "JAXAdapter",
    {**_each_mode(selectors.AutoJAX, "jax"), "jax-eager": selectors.AutoJAX(jit=False)},
)
_register_framework(
    selectors.AutoTorch, "torch", "TorchAdapter", _each_mode(selectors.AutoTorch, "torch")
)
_register_framework(
    selectors.AutoAutograd, "autograd", "AutogradAdapter", {"autograd": selectors.AutoAutograd()}
)
_register_framework(
    selectors.AutoTensorFlow,
    "tensorflow",
    "TensorFlowAdapter",
    _each_mode(selectors.AutoTensorFlow, "tensorflow"),
)
_register_framework(selectors.AutoMLX, "mlx", "MLXAdapter", _each_mode(selectors.AutoMLX, "mlx"))
for _selector, _adapter, _id in (
    (selectors.AutoZeroForward, "ZeroForwardAdapter", "zero-forward"),
    (selectors.AutoZeroReverse, "ZeroReverseAdapter", "zero-reverse"),
):
    register_backend(
        _selector,
        f"diffinterface.backends.zero:{_adapter}",
        test_backends={_id: _selector()},
        returns_zeros=True,
    )
