"""What a sparse preparation decided: its pattern, its coloring, a spy plot.

These functions read the structure an ``AutoSparse`` preparation keeps
(``prep.impl.sparse``); they import scipy or matplotlib only when called.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...families import as_numpy, sparse_family


def _structure(prep):
    structure = getattr(getattr(prep, "impl", None), "sparse", None)
    if structure is None:
        raise TypeError(
            "prep: expected the result of prepare_jacobian or prepare_hessian with a di.AutoSparse backend; "
            f"got {prep!r}"
        )
    return structure


@dataclass(frozen=True)
class Coloring:
    """The coloring of a sparse preparation; :func:`coloring` returns it.

    Each constructor parameter is also the attribute of the same name.

    Parameters
    ----------
    kind : str
        ``"columns"`` (one pushforward per color), ``"rows"`` (one pullback per
        color), ``"symmetric"`` (a Hessian's star coloring: one hvp per color),
        ``"acyclic"`` (a Hessian's acyclic coloring, decompressed by substitution)
        or ``"bidirectional"`` (``MixedMode``: one pushforward per column color and
        one pullback per row color).
    colors : numpy.ndarray
        One color per column, row or variable (-1: not needed by any product); a
        bicoloring's column colors.
    ncolors : int
        Number of products per prepared call (a bicoloring's: both sides).
    row_colors : numpy.ndarray or None
        A bicoloring's row colors (-1: the row is in no pullback); None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> columns = Coloring("columns", np.array([0, 1, 0]), 2)
    >>> [group.tolist() for group in columns.groups()]
    [[0, 2], [1]]
    >>> columns.row_groups()
    []
    """

    kind: str
    colors: np.ndarray
    ncolors: int
    row_colors: np.ndarray | None = None

    def groups(self):
        """The indices of each color, as a list of int arrays (color 0 first; a bicoloring's column colors)."""
        return [
            np.flatnonzero(self.colors == c) for c in range(int(self.colors.max(initial=-1)) + 1)
        ]

    def row_groups(self):
        """A bicoloring's rows of each row color, as a list of int arrays (empty otherwise)."""
        if self.row_colors is None:
            return []
        return [
            np.flatnonzero(self.row_colors == c)
            for c in range(int(self.row_colors.max(initial=-1)) + 1)
        ]


def coloring(prep):
    """The :class:`Coloring` of a sparse preparation.

    Parameters
    ----------
    prep : Preparation
        The result of ``prepare_jacobian`` or ``prepare_hessian`` with a ``di.AutoSparse`` backend
        (anything else: a TypeError naming ``prep``).

    Returns
    -------
    Coloring
        Its kind, one color per column/row/variable, the number of colors.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoSparse(di.AutoFiniteDiff())
    >>> prep = di.prepare_jacobian(lambda x: x ** 2, backend, np.ones(4))
    >>> c = di.coloring(prep)
    >>> c.kind, c.ncolors, [g.tolist() for g in c.groups()]
    ('columns', 1, [[0, 1, 2, 3]])
    """
    compression = _structure(prep).compression
    row_colors = None if compression.row_colors is None else compression.row_colors.copy()
    return Coloring(compression.kind, compression.colors.copy(), compression.ncolors, row_colors)


def ncolors(prep) -> int:
    """Number of products (pushforwards, pullbacks or hvps) a prepared sparse call runs.

    Parameters
    ----------
    prep : Preparation
        A preparation with a ``di.AutoSparse`` backend, of a Jacobian or a Hessian; anything else
        raises a TypeError naming ``prep``.

    Returns
    -------
    int
        The colors of its coloring: the seeds each prepared call sweeps.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x[1:] - x[:-1]) ** 2
    >>> di.ncolors(di.prepare_jacobian(f, di.AutoSparse(di.AutoFiniteDiff()), np.ones(6)))
    2
    """
    return _structure(prep).compression.ncolors


def sparsity_pattern(prep):
    """The prepared pattern as a boolean ``scipy.sparse.csr_array`` over flattened indices.

    Parameters
    ----------
    prep : Preparation
        A sparse preparation, as for :func:`coloring` (anything else: a TypeError naming ``prep``).

    Returns
    -------
    scipy.sparse.csr_array
        True at the entries the preparation computes. Shape ``(f(x).size, x.size)`` for a Jacobian, ``(x.size, x.size)`` for a Hessian.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> prep = di.prepare_hessian(lambda x: (x[0] * x[1]) ** 2 + x[2] ** 2,
    ...                           di.AutoSparse(di.AutoFiniteDiff()), np.ones(3))
    >>> di.sparsity_pattern(prep).toarray().astype(int)
    array([[1, 1, 0],
           [1, 1, 0],
           [0, 0, 1]])
    """
    from scipy.sparse import csr_array

    compression = _structure(prep).compression
    data = np.ones(len(compression.rows), dtype=bool)
    return csr_array((data, (compression.rows, compression.cols)), shape=compression.shape)


def plot_sparsity(matrix, ax=None, **spy_options):
    """A spy plot (matplotlib) of a sparse preparation's pattern, each entry in the color of the product it
    is read from, or of a matrix.

    Parameters
    ----------
    matrix : Preparation, scipy.sparse matrix, BCOO, torch sparse tensor or array
        What to draw: an AutoSparse preparation (its pattern) or a matrix
        (its nonzero entries).
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    **spy_options
        Passed to ``Axes.spy`` (``markersize=``...).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np, diffinterface as di, matplotlib
    >>> matplotlib.use("Agg")
    >>> prep = di.prepare_jacobian(lambda x: x[1:] * x[:-1], di.AutoSparse(di.AutoFiniteDiff()), np.ones(8))
    >>> ax = di.plot_sparsity(prep)
    >>> ax.get_title()
    '7 x 8, 14 entries, 2 colors'
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            "plot_sparsity draws with matplotlib, which is not installed: pip install 'diffinterface[plot]'",
            name="matplotlib",
        ) from error
    if ax is None:
        _, ax = plt.subplots()
    if hasattr(getattr(matrix, "impl", None), "sparse"):
        compression = _structure(matrix).compression
        title = (
            f"{compression.shape[0]} x {compression.shape[1]}, {len(compression.rows)} entries, "
            f"{compression.ncolors} colors"
        )
        if compression.kind == "bidirectional":
            title += f" ({len(compression.seeds)} column + {len(compression.row_seeds)} row)"
        size = (
            spy_options.pop("markersize", max(0.5, min(6.0, 300.0 / max(compression.shape)))) ** 2
        )
        spy_options.setdefault("cmap", "tab10")
        ax.scatter(
            compression.cols,
            compression.rows,
            c=_product_of_entries(compression),
            s=size,
            marker="s",
            **spy_options,
        )
        ax.set_xlim(-0.5, compression.shape[1] - 0.5)
        ax.set_ylim(compression.shape[0] - 0.5, -0.5)
        ax.set_aspect("equal")
        ax.set_title(title)
        return ax
    matrix = _as_scipy(matrix)
    spy_options.setdefault("markersize", max(0.5, min(6.0, 300.0 / max(matrix.shape))))
    ax.spy(matrix, **spy_options)
    ax.set_title(f"{matrix.shape[0]} x {matrix.shape[1]}, {matrix.nnz} entries")
    return ax


def _product_of_entries(compression):
    """For each entry, the product it is read from (0, 1, ...: a bicoloring's pullbacks after its pushforwards)."""
    if compression.gather is not None:
        return (
            compression.gather // compression.product_size
            if compression.kind != "bidirectional"
            else np.where(
                compression.gather < len(compression.seeds) * compression.shape[0],
                compression.gather // compression.shape[0],
                len(compression.seeds)
                + (compression.gather - len(compression.seeds) * compression.shape[0])
                // compression.shape[1],
            )
        )
    return compression.colors[compression.cols]  # substitution: colored by column


def _as_scipy(matrix):
    """A scipy.sparse matrix of any family's sparse or dense 2-D matrix."""
    from scipy.sparse import csr_array, issparse

    if issparse(matrix):
        return matrix
    family = sparse_family(matrix)
    if family is not None and family.is_sparse(matrix):
        values, rows, cols = family.sparse_coordinates(matrix)
        return csr_array((values, (rows, cols)), shape=tuple(matrix.shape))
    dense = as_numpy(matrix)
    if dense.ndim != 2:
        raise ValueError(
            f"matrix: expected a 2-D matrix or a sparse preparation; got shape {dense.shape}"
        )
    return csr_array(dense)
