"""Backends made of backends: ``SecondOrder`` (``second_order.py``), ``AutoSparse`` (``sparse/``),
and ``DifferentiateWith`` (``differentiate_with/``), one framework's function inside another's derivative.

Each wrapper backend registers its selector here; its adapter module is imported on first use.
"""

from ..core import register_backend
from ..selectors import SecondOrder
from .differentiate_with import DifferentiateWith  # noqa: F401  (re-exported by diffinterface)
from .sparse import (  # noqa: F401  (re-exported by diffinterface)
    AutoSparse,
    Coloring,
    DenseSparsityDetector,
    GreedyColoring,
    KnownSparsity,
    TracerSparsityDetector,
    coloring,
    ncolors,
    plot_sparsity,
    sparsity_pattern,
)

register_backend(SecondOrder, "diffinterface.wrappers.second_order:SecondOrderAdapter")
