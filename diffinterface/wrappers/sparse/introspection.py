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
    """The coloring of a sparse preparation.

    Attributes
    ----------
    kind : str
        ``"columns"`` (one pushforward per color), ``"rows"`` (one pullback per
        color) or ``"symmetric"`` (a Hessian's star coloring: one hvp per color).
    colors : numpy.ndarray
        One color per column, row or variable (-1: not needed by any product).
    ncolors : int
        Number of products per prepared call.
    """

    kind: str
    colors: np.ndarray
    ncolors: int

    def groups(self):
        """The indices of each color, as a list of int arrays (color 0 first)."""
        return [np.flatnonzero(self.colors == c) for c in range(self.ncolors)]


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
    return Coloring(compression.kind, compression.colors.copy(), compression.ncolors)


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
    """A spy plot (matplotlib) of a sparse preparation's pattern or of a matrix.

    Parameters
    ----------
    matrix : Preparation, scipy.sparse matrix, BCOO, torch sparse tensor or array
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
    title = None
    if hasattr(getattr(matrix, "impl", None), "sparse"):
        compression = _structure(matrix).compression
        title = f"{compression.shape[0]} x {compression.shape[1]}, {len(compression.rows)} entries, " \
                f"{compression.ncolors} colors"
        matrix = sparsity_pattern(matrix)
    else:
        matrix = _as_scipy(matrix)
    if ax is None:
        _, ax = plt.subplots()
    spy_options.setdefault("markersize", max(0.5, min(6.0, 300.0 / max(matrix.shape))))
    ax.spy(matrix, **spy_options)
    ax.set_title(title or f"{matrix.shape[0]} x {matrix.shape[1]}, {matrix.nnz} entries")
    return ax


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
        raise ValueError(f"matrix: expected a 2-D matrix or a sparse preparation; got shape {dense.shape}")
    return csr_array(dense)
