"""Backend selectors: frozen, hashable configuration objects (:class:`~diffinterface.frozen.Frozen`) that import nothing.

A selector only says *which* library differentiates and how; the adapter that
does the work (``diffinterface/backends/<name>/``) is imported on first use.

    >>> import diffinterface as di
    >>> di.AutoJAX(mode="reverse") == di.AutoJAX(mode="reverse")
    True
"""

from __future__ import annotations

from typing import Optional

from .frozen import Frozen

_MODES = (None, "forward", "reverse")


def _check_mode(selector, mode):
    if mode not in _MODES:
        raise ValueError(
            f"{type(selector).__name__}(mode=...) expected one of None, 'forward', "
            f"'reverse'; got {mode!r}"
        )


class AbstractBackend:
    """Base class of every selector (used for ``isinstance`` checks only)."""

    __slots__ = ()


class AutoJAX(AbstractBackend, Frozen):
    """JAX: ``jax.jvp``/``jax.vjp``; preparation compiles with ``jax.jit``.

    ``mode=None`` picks per operator (reverse for gradients, forward for
    derivatives, by shape for jacobians).
    """

    mode: Optional[str] = None
    jit: bool = True

    def __post_init__(self):
        _check_mode(self, self.mode)
        if not isinstance(self.jit, bool):
            raise TypeError(f"AutoJAX(jit=...) expected True or False; got {self.jit!r}")


class AutoTorch(AbstractBackend, Frozen):
    """PyTorch: ``torch.autograd`` and ``torch.func``.

    ``compile=True`` (experimental) compiles the gradient with ``torch.compile``
    at preparation: seconds to minutes of compilation, then faster gradients on
    large vectorized functions (see ``diffinterface/backends/torch/``).
    """

    mode: Optional[str] = None
    compile: bool = False

    def __post_init__(self):
        _check_mode(self, self.mode)
        if not isinstance(self.compile, bool):
            raise TypeError(f"AutoTorch(compile=...) expected True or False; got {self.compile!r}")


class AutoAutograd(AbstractBackend, Frozen):
    """HIPS autograd (reverse mode with ``make_vjp``, forward with ``make_jvp``).

    It takes no arguments: each operator uses the mode autograd does it
    fastest in (forward for derivatives and pushforwards, reverse otherwise).
    """

    __frozen_no_arguments__ = (
        "It picks forward or reverse mode per operator itself; for a mode of your choice, use "
        "AutoJAX(mode=...) or AutoTorch(mode=...), or SecondOrder(...) for second order"
    )


_FD_METHODS = ("forward", "central", "complex", "adaptive")


class AutoFiniteDiff(AbstractBackend, Frozen):
    """Finite differences on numpy arrays (forward mode).

    ``method`` is ``"forward"``, ``"central"``, ``"complex"`` (complex step) or
    ``"adaptive"`` (error-controlled Richardson extrapolation through
    ``scipy.differentiate``). ``rel_step``/``abs_step`` override the default
    step ``h = max(rel_step * |x|, abs_step)`` (defaults scale with the dtype).
    """

    method: str = "central"
    rel_step: Optional[float] = None
    abs_step: Optional[float] = None

    def __post_init__(self):
        if self.method not in _FD_METHODS:
            raise ValueError(
                f"AutoFiniteDiff(method=...) expected one of {_FD_METHODS}; got {self.method!r}"
            )
        for name in ("rel_step", "abs_step"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"AutoFiniteDiff({name}=...) expected a positive number or None; got {value!r}")
            if not value > 0 or value != value or value == float("inf"):
                raise ValueError(f"AutoFiniteDiff({name}=...) expected a positive finite number or None; got {value!r}")


class AutoZeroForward(AbstractBackend, Frozen):
    """Forward-mode backend returning zeros: tests the fallbacks, measures overhead."""


class AutoZeroReverse(AbstractBackend, Frozen):
    """Reverse-mode backend returning zeros: tests the fallbacks, measures overhead."""


class SecondOrder(AbstractBackend, Frozen):
    """Second order: ``inner`` differentiates ``f``, ``outer`` differentiates the result.

    ``SecondOrder(AutoJAX(mode="forward"), AutoJAX(mode="reverse"))`` is
    forward-over-reverse. A plain backend ``b`` means ``SecondOrder(b, b)``.
    """

    outer: AbstractBackend
    inner: AbstractBackend

    def __post_init__(self):
        for name in ("outer", "inner"):
            value = getattr(self, name)
            if not isinstance(value, AbstractBackend) or isinstance(value, SecondOrder):
                raise TypeError(
                    f"SecondOrder({name}=...) expected a first-order backend selector "
                    f"such as AutoJAX(); got {value!r}"
                )


class AutoTensorFlow(AbstractBackend, Frozen):
    """TensorFlow: ``tf.GradientTape`` (reverse) and ``tf.autodiff.ForwardAccumulator`` (forward).

    ``mode=None`` picks per operator (reverse for gradients, forward for
    derivatives, by shape for jacobians). ``jit=True`` traces every prepared
    operator into one ``tf.function`` at preparation, for x's shape and dtype;
    ``jit=False`` runs eagerly (f may then branch on x's values in Python).

        >>> import diffinterface as di
        >>> di.AutoTensorFlow(mode="forward")
        AutoTensorFlow(mode='forward', jit=True)
    """

    mode: Optional[str] = None
    jit: bool = True

    def __post_init__(self):
        _check_mode(self, self.mode)
        if not isinstance(self.jit, bool):
            raise TypeError(f"AutoTensorFlow(jit=...) expected True or False; got {self.jit!r}")
