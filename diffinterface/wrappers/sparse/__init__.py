"""AutoSparse: sparse Jacobians and Hessians by sparsity detection, coloring and compressed products.

=================  ===========================================================
module             what it holds
=================  ===========================================================
``config.py``      the selector and its detectors and coloring (import nothing)
``detection.py``   the pattern: traced by asdex, from one dense derivative, or given
``coloring.py``    asdex's colorings, the seeds and where each entry is read
``matrices.py``    decompression into scipy.sparse / BCOO / torch sparse CSR
``orders.py``      vertex orders: natural, largest-first, smallest-last, incidence-degree...
``greedy.py``      distance-2, star and acyclic greedy colorings, and their validity checks
``bicoloring.py``  star bicoloring of a Jacobian (``MixedMode``): column and row colors
``acyclic.py``     decompression by substitution (acyclic colorings of Hessians)
``adapter.py``     the adapter: prepared compressed products, other operators delegated
``mixed.py``       the adapter of ``MixedMode``: a forward and a reverse dense adapter
``introspection``  ``sparsity_pattern``, ``ncolors``, ``coloring``, ``plot_sparsity``
=================  ===========================================================

Only ``config.py`` and ``introspection.py`` are imported with diffinterface;
the rest (asdex, JAX) on the first use of an ``AutoSparse`` backend.
"""

from ...core import register_backend
from .config import (
    AutoSparse,
    DenseSparsityDetector,
    GreedyColoring,
    KnownSparsity,
    MixedMode,
    TracerSparsityDetector,
)
from .introspection import Coloring, coloring, ncolors, plot_sparsity, sparsity_pattern

register_backend(AutoSparse, "diffinterface.wrappers.sparse.adapter:SparseAdapter", extra="sparse")
register_backend(MixedMode, "diffinterface.wrappers.sparse.mixed:MixedModeAdapter", extra="sparse")

__all__ = [
    "AutoSparse",
    "DenseSparsityDetector",
    "GreedyColoring",
    "KnownSparsity",
    "MixedMode",
    "TracerSparsityDetector",
    "Coloring",
    "coloring",
    "ncolors",
    "plot_sparsity",
    "sparsity_pattern",
]
