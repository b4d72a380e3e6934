"""Backend selectors: frozen, hashable configuration objects (:class:`~diffinterface.frozen.Frozen`) that import nothing.

A selector only says *which* library differentiates and how; the adapter that
does the work (``diffinterface/backends/<name>/``) is imported on first use.

    >>> import diffinterface as di
    >>> di.AutoJAX(mode="reverse") == di.AutoJAX(mode="reverse")
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Optional

from .frozen import Frozen
from .families.jax import jax_devices
from .placement import check_batch_fields as _check_batch_fields, workers_kind
from .selector_checks import check_flag, check_mode, check_step, refusing_a_mode


def _check_framework_fields(selector, flag):
    """The checks of a framework's selector: its ``mode``, its batch fields and its boolean ``flag``."""
    check_mode(selector, selector.mode)
    _check_batch_fields(selector)
    check_flag(selector, flag)


class AbstractBackend:
    """Base class of every backend selector (used for ``isinstance`` checks only).

    A selector is a frozen, hashable configuration object that says which
    library differentiates; it imports nothing until it is used. Third-party
    selectors subclass it and register with ``di.register_backend``.

    Attributes
    ----------
    mode : {None, "forward", "reverse"}
        The mode the selector pins; ``None`` (the default here): chosen per
        operator. Selectors with a ``mode`` parameter set it.
    batch_size : int or None
        The most seeds per vectorized pass; ``None`` (the default here): chosen
        by memory at preparation.
    memory_budget : int or None
        Bytes the automatic batch aims under; ``None`` (the default here): 1 GiB.

    Examples
    --------
    >>> import diffinterface as di
    >>> isinstance(di.AutoJAX(), di.AbstractBackend), isinstance("jax", di.AbstractBackend)
    (True, False)
    """

    __slots__ = ()
    # What every selector answers, with its default: the mode the user pinned (None: chosen per
    # operator), and the bound on batched sweeps (None: chosen by memory). Selectors that take
    # them declare them as fields; the annotations are the type checker's only, so that they
    # make no field of every selector.
    if TYPE_CHECKING:
        mode: Optional[str]
        batch_size: Optional[int]
        memory_budget: Optional[int]
    mode = None
    batch_size = None
    memory_budget = None


class SweepsInBatches:
    """A selector with ``batch_size`` and ``memory_budget`` fields: its repr leaves them out while they are None.

    Reprs name what a user chose; the defaults of these two fields change no
    result, so ``AutoJAX()`` still reads ``AutoJAX(mode=None, jit=True)``.
    """

    __slots__ = ()
    #: given by keyword only: the positional arguments of the selectors stay what they were
    __frozen_keyword_only__: ClassVar[tuple[str, ...]] = ("batch_size", "memory_budget")

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={value!r}"
            for name, value in self.__dict__.items()
            if value is not None or name not in self.__frozen_keyword_only__
        )
        return f"{type(self).__qualname__}({fields})"


class AutoJAX(AbstractBackend, SweepsInBatches, Frozen):
    """JAX: ``jax.jvp``/``jax.vjp``; preparation compiles with ``jax.jit``.

    Takes numpy and JAX arrays; float64 inputs stay float64 without touching
    JAX's global ``jax_enable_x64`` setting. Needs ``pip install "diffinterface[jax]"``.

    Parameters
    ----------
    mode : {None, "forward", "reverse"}, default None
        ``None`` picks per operator: reverse for gradients, forward for
        derivatives, by the input and output sizes for jacobians.
    jit : bool, default True
        Compile the prepared functions with ``jax.jit`` at preparation. ``False``
        runs them op by op (for an ``f`` that JAX cannot trace as a whole).
    batch_size : int, optional
        The most seeds one vectorized pass of a sweep takes (Jacobian columns
        or rows, Hessian rows, batched pushforwards, pullbacks and hvps,
        AutoSparse's colors). ``None`` picks the largest batch whose estimated
        working memory fits ``memory_budget``; ``di.batch_size(prep)`` tells.
    memory_budget : int, optional
        Bytes the automatic choice aims under (``None``: 1 GiB); not with a
        ``batch_size``, which replaces that choice. See the "Scale" page.
    devices : sequence of jax.Device or jax.sharding.Mesh, optional
        Split every sweep's seeds across these devices, in the one compiled
        computation (with ``batch_size``, each batch is split); JAX results
        stay sharded. ``None``: JAX's default device.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: (x ** 3).sum(), di.AutoJAX(), np.array([1.0, 2.0]))
    array([ 3., 12.])
    >>> di.AutoJAX(mode="forward")
    AutoJAX(mode='forward', jit=True)
    """

    mode: Optional[str] = None
    jit: bool = True
    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None
    devices: Any = None
    __frozen_keyword_only__: ClassVar[tuple[str, ...]] = ("batch_size", "memory_budget", "devices")

    def __post_init__(self):
        _check_framework_fields(self, "jit")
        if self.devices is not None:
            self.__dict__["devices"] = jax_devices(self.devices)  # a list kept as a tuple: hashable


class AutoTorch(AbstractBackend, SweepsInBatches, Frozen):
    """PyTorch: ``torch.autograd`` and ``torch.func``.

    Takes numpy arrays and torch tensors (results on the tensor's device, a
    ``Parameter`` like a ``Tensor``), and two-argument ``f(y, x)`` that write
    into ``y``. Needs ``pip install "diffinterface[torch]"``.

    Parameters
    ----------
    mode : {None, "forward", "reverse"}, default None
        Forces torch's reverse (``torch.autograd``) or forward (``forward_ad``)
        mode; ``None`` picks per operator, as ``AutoJAX`` does.
    compile : bool, default False
        Experimental: compile the gradient with ``torch.compile`` at
        preparation. Seconds to minutes of compilation, then faster gradients
        on large vectorized functions; no gain on small ones.
    batch_size : int, optional
        The most seeds one vectorized pass of a sweep takes, as for
        ``AutoJAX``: one ``vmap`` (forward) or one batched backward pass
        (reverse). ``None`` picks the largest batch that fits
        ``memory_budget``; ``di.batch_size(prep)`` tells.
    memory_budget : int, optional
        Bytes the automatic choice aims under (``None``: 1 GiB), by the
        working memory of one seed, estimated from one evaluation of ``f``
        that records the bytes of every tensor it creates; not with a
        ``batch_size``, which replaces that choice.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: (x ** 3).sum(), di.AutoTorch(), np.array([1.0, 2.0]))
    array([ 3., 12.])
    >>> di.AutoTorch(mode="reverse", compile=False)
    AutoTorch(mode='reverse', compile=False)
    """

    mode: Optional[str] = None
    compile: bool = False
    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None

    def __post_init__(self):
        _check_framework_fields(self, "compile")


class AutoAutograd(AbstractBackend, SweepsInBatches, Frozen):
    """HIPS autograd (reverse mode with ``make_vjp``, forward with ``make_jvp``).

    It takes no mode: each operator uses autograd's fastest (forward for derivatives and pushforwards, reverse
    otherwise). Takes numpy arrays; ``f`` must use ``autograd.numpy`` or, better, ``di.array_namespace(x)``.
    Needs ``pip install "diffinterface[autograd]"``.

    Parameters
    ----------
    batch_size : int, optional
        Accepted so that the same keywords fit every backend: autograd has no
        ``vmap``, so its batches are of one seed (``di.batch_size(prep)`` is
        1), and results are the same bit for bit whatever is asked.
    memory_budget : int, optional
        Accepted for the same reason: one seed at a time needs one seed's
        memory, so no estimate is made.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: (x ** 3).sum(), di.AutoAutograd(), np.array([1.0, 2.0]))
    array([ 3., 12.])
    >>> di.AutoAutograd(batch_size=4)
    AutoAutograd(batch_size=4)
    """

    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None

    def __post_init__(self):
        _check_batch_fields(self)


AutoAutograd.__init__ = refusing_a_mode(AutoAutograd.__init__)  # type: ignore[method-assign]


_FD_METHODS = ("forward", "central", "complex", "adaptive")


class AutoFiniteDiff(AbstractBackend, SweepsInBatches, Frozen):
    """Finite differences on numpy arrays (forward mode).

    Needs nothing but numpy (scipy for ``"adaptive"``): the backend for an
    ``f`` no AD library can trace, such as a simulator or a compiled
    extension. Each derivative costs evaluations of ``f`` (about ``2n`` for a
    central gradient in ``n`` variables) and is accurate to about the square
    root (forward) or the cube root (central) of the dtype's precision.

    Parameters
    ----------
    method : {"central", "forward", "complex", "adaptive"}, default "central"
        ``"complex"`` is the complex step (exact to rounding, for an ``f``
        that accepts complex inputs and is analytic); ``"adaptive"`` is
        error-controlled Richardson extrapolation through ``scipy.differentiate``.
    rel_step, abs_step : float, optional
        Override the default step ``h = max(rel_step * |x|, abs_step)``; the
        defaults scale with the dtype.
    batch_size : int, optional
        Columns and Hessian points are evaluated one after the other (each
        batch is one seed, ``di.batch_size(prep)`` is 1): accepted so that
        the same keywords fit every backend.
    memory_budget : int, optional
        Accepted for the same reason.
    workers : int, Executor, dask.distributed.Client or callable, optional
        Where the independent evaluations of ``f`` run (Jacobian columns,
        Hessian and hvp points, AutoSparse's colors, SecondOrder's outer
        points): ``None`` one after the other; an int, a process pool of that
        many workers per preparation; a ``concurrent.futures.Executor``; a
        Dask ``Client`` (a cluster); a map-like ``workers(func, iterable)``.
        Results equal the serial ones. See the "Scale" page.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: (x ** 3).sum(), di.AutoFiniteDiff(), np.array([1.0, 2.0])).round(6)
    array([ 3., 12.])
    >>> di.AutoFiniteDiff(method="forward", rel_step=1e-6)
    AutoFiniteDiff(method='forward', rel_step=1e-06, abs_step=None)
    """

    method: str = "central"
    rel_step: Optional[float] = None
    abs_step: Optional[float] = None
    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None
    workers: Any = None
    __frozen_keyword_only__: ClassVar[tuple[str, ...]] = ("batch_size", "memory_budget", "workers")

    def __post_init__(self):
        _check_batch_fields(self)
        if workers_kind(self.workers) is not None and self.method == "adaptive":
            raise ValueError(
                "AutoFiniteDiff(workers=...) expected method='central', 'forward' or 'complex', whose points are "
                "known before f is evaluated; got method='adaptive', which picks each point from f's values. Use "
                "workers=None with 'adaptive', or another method with workers"
            )
        if self.method not in _FD_METHODS:
            raise ValueError(
                f"AutoFiniteDiff(method=...) expected one of {_FD_METHODS}; got {self.method!r}"
            )
        for name in ("rel_step", "abs_step"):
            check_step(self, name)


class AutoZeroForward(AbstractBackend, Frozen):
    """Forward-mode backend returning zeros: tests the fallbacks, measures overhead.

    Its pushforward returns zeros without differentiating: the cost of a call
    on it is diffinterface's own. Not for computing derivatives.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: (x ** 2).sum(), di.AutoZeroForward(), np.ones(2))
    array([0., 0.])
    """


class AutoZeroReverse(AbstractBackend, Frozen):
    """Reverse-mode backend returning zeros: tests the fallbacks, measures overhead.

    Its pullback returns zeros without differentiating: the cost of a call on
    it is diffinterface's own. Not for computing derivatives.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: (x ** 2).sum(), di.AutoZeroReverse(), np.ones(2))
    array([0., 0.])
    """


class SecondOrder(AbstractBackend, Frozen):
    """Second order: ``inner`` differentiates ``f``, ``outer`` differentiates the result.

    For ``hvp``, ``hessian`` and ``second_derivative``. A plain backend ``b``
    uses its framework's native recipe (as ``SecondOrder(b, b)`` would, or
    faster). Any pair works on numpy arrays: across frameworks the inner's
    first derivative is bridged to the outer's, and an AD outer differentiates
    a finite-difference inner through that bridge too. An x of a framework's
    own family (a tensor, a JAX array) needs an outer of the same framework
    over an inner of that framework, or finite differences as the outer.

    Parameters
    ----------
    outer : backend selector
        Differentiates the inner's first derivative (a first-order selector).
    inner : backend selector
        Differentiates ``f`` (a first-order selector).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> backend = di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX())  # FD over JAX gradients
    >>> di.hessian(lambda x: (x ** 3).sum(), backend, np.array([1.0, 2.0])).round(4)
    array([[ 6.,  0.],
           [ 0., 12.]])
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


class AutoTensorFlow(AbstractBackend, SweepsInBatches, Frozen):
    """TensorFlow: ``tf.GradientTape`` (reverse) and ``tf.autodiff.ForwardAccumulator`` (forward).

    Takes numpy arrays and TensorFlow tensors (results in x's family and
    dtype); ``f`` should use ``di.array_namespace(x)``. Needs
    ``pip install "diffinterface[tensorflow]"``.

    Parameters
    ----------
    mode : {None, "forward", "reverse"}, default None
        ``None`` picks per operator (reverse for gradients, forward for
        derivatives, by shape for jacobians); Hessians are forward over
        reverse. Where f holds a ``DifferentiateWith`` function, whose custom
        gradients TensorFlow's forward mode cannot see, every operator goes
        reverse.
    jit : bool, default True
        ``True`` traces every prepared operator into one ``tf.function`` at
        preparation, for x's shape and dtype; ``False`` runs eagerly (f may
        then branch on x's values in Python).
    batch_size : int, optional
        The most seeds one vectorized pass of a sweep takes (``pfor`` with
        ``parallel_iterations``, inside the one traced function). ``None``
        picks the largest batch that fits ``memory_budget``;
        ``di.batch_size(prep)`` tells.
    memory_budget : int, optional
        Bytes the automatic choice aims under (``None``: 1 GiB), by the bytes
        of every tensor in f's traced graph (nothing is run); not with a
        ``batch_size``, which replaces that choice.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: di.array_namespace(x).sum(x ** 3), di.AutoTensorFlow(), np.array([1.0, 2.0]))
    array([ 3., 12.])
    >>> di.AutoTensorFlow(mode="forward")
    AutoTensorFlow(mode='forward', jit=True)
    """

    mode: Optional[str] = None
    jit: bool = True
    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None

    def __post_init__(self):
        _check_framework_fields(self, "jit")


class AutoMLX(AbstractBackend, SweepsInBatches, Frozen):
    """MLX: ``mx.jvp`` (forward) and ``mx.vjp`` (reverse); preparation compiles with ``mx.compile``.

    Takes numpy arrays and MLX arrays (results in x's family and dtype;
    float64 stays float64, computed on MLX's CPU device); ``f`` should use
    ``di.array_namespace(x)`` or ``mlx.core``. Needs
    ``pip install "diffinterface[mlx]"``.

    Parameters
    ----------
    mode : {None, "forward", "reverse"}, default None
        ``None`` picks per operator (reverse for gradients, forward for
        derivatives, by shape for jacobians); Hessians are reverse over reverse.
    compile : bool, default True
        ``True`` compiles every prepared operator with ``mx.compile`` at
        preparation (f must then not branch on x's values); ``False`` runs
        MLX's transforms op by op.
    batch_size, memory_budget : int, optional
        As for ``AutoJAX``: ``batch_size`` seeds per ``mx.vmap`` pass of a
        sweep; with ``None``, what fits ``memory_budget`` bytes (1 GiB).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: di.array_namespace(x).sum(x ** 3), di.AutoMLX(), np.array([1.0, 2.0]))
    array([ 3., 12.])
    >>> di.AutoMLX(mode="forward")
    AutoMLX(mode='forward', compile=True)
    """

    mode: Optional[str] = None
    compile: bool = True
    batch_size: Optional[int] = None
    memory_budget: Optional[int] = None

    def __post_init__(self):
        _check_framework_fields(self, "compile")
