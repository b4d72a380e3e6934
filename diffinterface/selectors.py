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


def _check_batch_fields(selector):
    """Refuse a ``batch_size`` that is not a positive int and a ``memory_budget`` that is not a positive number of bytes.

    Both bound every sweep over seeds (``diffinterface/core/batching.py``):
    ``batch_size`` is how many seeds one vectorized pass takes, ``memory_budget``
    the bytes the automatic choice (``batch_size=None``) aims under.
    """
    name = type(selector).__name__
    size = selector.batch_size
    if size is not None and (isinstance(size, bool) or not hasattr(type(size), "__index__")):  # NumPy ints too
        raise TypeError(
            f"{name}(batch_size=...) expected a positive int (seeds per vectorized pass) or None (chosen from "
            f"memory_budget); got {size!r}"
        )
    if size is not None and size < 1:
        raise ValueError(
            f"{name}(batch_size=...) expected a positive int (seeds per vectorized pass) or None (chosen from "
            f"memory_budget); got {size!r}"
        )
    budget = selector.memory_budget
    if budget is not None and (isinstance(budget, bool) or not hasattr(type(budget), "__index__")):
        raise TypeError(
            f"{name}(memory_budget=...) expected a positive int, in bytes (256 * 2**20 for 256 MiB), or None "
            f"(the default budget); got {budget!r}"
        )
    if budget is not None and budget < 1:
        raise ValueError(
            f"{name}(memory_budget=...) expected a positive int, in bytes (256 * 2**20 for 256 MiB), or None "
            f"(the default budget); got {budget!r}"
        )


class AbstractBackend:
    """Base class of every selector (used for ``isinstance`` checks only)."""

    __slots__ = ()


class _SweepsInBatches:
    """A selector with ``batch_size`` and ``memory_budget`` fields: its repr leaves them out while they are None.

    Reprs name what a user chose; the defaults of these two fields change no
    result, so ``AutoJAX()`` still reads ``AutoJAX(mode=None, jit=True)``.
    """

    __slots__ = ()
    #: given by keyword only: the positional arguments of the selectors stay what they were
    __frozen_keyword_only__ = ("batch_size", "memory_budget")

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={value!r}" for name, value in self.__dict__.items()
            if value is not None or name not in ("batch_size", "memory_budget")
        )
        return f"{type(self).__qualname__}({fields})"


class AutoJAX(AbstractBackend, _SweepsInBatches, Frozen):
    """JAX: ``jax.jvp``/``jax.vjp``; preparation compiles with ``jax.jit``.

    ``mode=None`` picks per operator (reverse for gradients, forward for
    derivatives, by shape for jacobians).

    ``batch_size`` bounds every sweep over seeds (Jacobian columns or rows,
    Hessian rows, batched pushforwards, pullbacks and hvps) to batches of at
    most that many seeds; ``None`` picks the largest batch whose estimated
    working memory fits ``memory_budget`` bytes (``None``: 1 GiB). See
    ``di.batch_size(prep)``.
    """

    mode: Optional[str] = None
    jit: bool = True
    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None

    def __post_init__(self):
        _check_mode(self, self.mode)
        _check_batch_fields(self)
        if not isinstance(self.jit, bool):
            raise TypeError(f"AutoJAX(jit=...) expected True or False; got {self.jit!r}")


class AutoTorch(AbstractBackend, _SweepsInBatches, Frozen):
    """PyTorch: ``torch.autograd`` and ``torch.func``.

    ``compile=True`` (experimental) compiles the gradient with ``torch.compile``
    at preparation: seconds to minutes of compilation, then faster gradients on
    large vectorized functions (see ``diffinterface/backends/torch/``).

    ``batch_size`` bounds every sweep over seeds (Jacobian columns or rows,
    Hessian rows, batched pushforwards, pullbacks and hvps) to batches of at
    most that many seeds; ``None`` picks the largest batch whose estimated
    working memory fits ``memory_budget`` bytes (``None``: 1 GiB). See
    ``di.batch_size(prep)``.
    """

    mode: Optional[str] = None
    compile: bool = False
    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None

    def __post_init__(self):
        _check_mode(self, self.mode)
        _check_batch_fields(self)
        if not isinstance(self.compile, bool):
            raise TypeError(f"AutoTorch(compile=...) expected True or False; got {self.compile!r}")


class AutoAutograd(AbstractBackend, Frozen):
    """HIPS autograd (reverse mode with ``make_vjp``, forward with ``make_jvp``).

    It takes no arguments: each operator uses the mode autograd does it
    fastest in (forward for derivatives and pushforwards, reverse otherwise).
    It sweeps seeds one at a time (autograd has no ``vmap``): its batches
    are always of one seed (``di.batch_size(prep)`` is 1), so it takes no
    ``batch_size``.
    """

    __frozen_no_arguments__ = (
        "It picks forward or reverse mode per operator itself; for a mode of your choice, use "
        "AutoJAX(mode=...) or AutoTorch(mode=...), or SecondOrder(...) for second order"
    )


_FD_METHODS = ("forward", "central", "complex", "adaptive")


class AutoFiniteDiff(AbstractBackend, _SweepsInBatches, Frozen):
    """Finite differences on numpy arrays (forward mode).

    ``method`` is ``"forward"``, ``"central"``, ``"complex"`` (complex step) or
    ``"adaptive"`` (error-controlled Richardson extrapolation through
    ``scipy.differentiate``). ``rel_step``/``abs_step`` override the default
    step ``h = max(rel_step * |x|, abs_step)`` (defaults scale with the dtype).

    Columns and Hessian points are evaluated one at a time; ``batch_size``
    bounds how many points go to one call of a batched inner gradient
    (``SecondOrder(AutoFiniteDiff(), AutoJAX())``); ``memory_budget`` is
    accepted for a uniform API.
    """

    method: str = "central"
    rel_step: Optional[float] = None
    abs_step: Optional[float] = None
    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None

    def __post_init__(self):
        _check_batch_fields(self)
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
