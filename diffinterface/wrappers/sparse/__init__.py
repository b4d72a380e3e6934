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

The public names defined here (``AutoSparse``, ``GreedyColoring``,
``sparsity_pattern``...) are listed once, in
:data:`diffinterface.wrappers.LAZY_NAMES`, and read from this package through
that table.

    >>> from diffinterface.wrappers.sparse import GreedyColoring
    >>> GreedyColoring.__module__
    'diffinterface.wrappers.sparse.config'
"""

import importlib

from ...core import register_backend
from .config import AutoSparse, MixedMode

register_backend(AutoSparse, "diffinterface.wrappers.sparse.adapter:SparseAdapter", extra="sparse")
register_backend(MixedMode, "diffinterface.wrappers.sparse.mixed:MixedModeAdapter", extra="sparse")


def __getattr__(name):
    from .. import LAZY_NAMES

    module = LAZY_NAMES.get(name, "")
    if not module.startswith("sparse."):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"diffinterface.wrappers.{module}"), name)
