"""Backends made of backends: ``AutoSparse`` (``sparse/``).

Each wrapper registers its selector with the backends' registry; its adapter
module is imported on first use.
"""

from .sparse import AutoSparse, Coloring, DenseSparsityDetector, GreedyColoring, KnownSparsity, TracerSparsityDetector, coloring, ncolors, plot_sparsity, sparsity_pattern  # noqa: E501,F401
