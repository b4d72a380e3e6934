"""The ``AutoMLX`` selector: configuration only, importing nothing (``mlx`` is imported by the adapter)."""

from __future__ import annotations

from typing import Optional

from ...frozen import Frozen
from ...placement import check_batch_fields
from ...selector_checks import check_flag, check_mode
from ...selectors import AbstractBackend, SweepsInBatches


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
        check_mode(self, self.mode)
        check_batch_fields(self)
        check_flag(self, "compile")
