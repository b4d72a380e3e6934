"""Configuration of ``AutoSparse``: the selector, its detectors and its coloring (import nothing).

Every object here is a frozen, hashable :class:`~diffinterface.frozen.Frozen` value
validated at construction, like the backend selectors in ``diffinterface/selectors.py``; the work is done
by ``detection.py``, ``coloring.py`` and ``adapter.py`` of this folder,
imported the first time an ``AutoSparse`` backend is used.

    >>> import diffinterface as di
    >>> di.AutoSparse(di.AutoJAX()) == di.AutoSparse(di.AutoJAX(), di.TracerSparsityDetector())
    True
"""

from __future__ import annotations

import numpy as np

from ...frozen import Frozen
from ...selectors import AbstractBackend


class TracerSparsityDetector(Frozen):
    """The global sparsity pattern, found by tracing ``f`` with JAX (``asdex``).

    The pattern holds at every ``x`` (it follows the operations of ``f``, not
    the values), so one preparation serves every point. ``f`` must be
    traceable by JAX: a JAX function, or a one-source function written with
    ``xp = di.array_namespace(x)``, whatever the dense backend (a one-source
    function is detected through JAX and differentiated by torch, for
    instance). Functions JAX cannot trace (torch-only code, two-argument
    ``f(y, x)``) raise an error naming :class:`DenseSparsityDetector` and
    :class:`KnownSparsity`. Branches on values (``where``, ``cond``) keep the
    entries of every branch, so the pattern may hold a few structural zeros.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoSparse(di.AutoFiniteDiff(), sparsity_detector=di.TracerSparsityDetector())
    >>> prep = di.prepare_jacobian(lambda x: x[1:] * x[:-1], backend, np.ones(4))
    >>> di.sparsity_pattern(prep).toarray().astype(int)
    array([[1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
    """


class DenseSparsityDetector(Frozen):
    """The pattern of one dense Jacobian or Hessian computed by ``backend`` at the preparation point.

    The pattern is *local*: an entry that happens to be zero at the
    preparation point (``|value| <= atol``) is left out, so later calls at other
    points may miss entries that are nonzero there. It costs one dense
    Jacobian or Hessian (an ``m x n`` array) at preparation. Use it for
    functions JAX cannot trace; prefer :class:`TracerSparsityDetector`
    (global) or :class:`KnownSparsity` when possible.

    Parameters
    ----------
    backend : AbstractBackend
        The backend computing the dense Jacobian or Hessian (any selector).
    atol : float
        Entries with ``|value| <= atol`` count as zeros (default 0.0).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> detector = di.DenseSparsityDetector(di.AutoFiniteDiff(), atol=1e-8)
    >>> backend = di.AutoSparse(di.AutoFiniteDiff(), sparsity_detector=detector)
    >>> di.jacobian(lambda x: x ** 2, backend, np.array([1.0, 2.0])).toarray().round(4)
    array([[2., 0.],
           [0., 4.]])
    """

    backend: AbstractBackend
    atol: float = 0.0

    def __post_init__(self):
        if not isinstance(self.backend, AbstractBackend):
            raise TypeError(
                f"DenseSparsityDetector(backend=...) expected a backend selector such as di.AutoJAX(); "
                f"got {self.backend!r}"
            )
        if (
            isinstance(self.atol, bool)
            or not isinstance(self.atol, (int, float))
            or not self.atol >= 0
        ):
            raise ValueError(
                f"DenseSparsityDetector(atol=...) expected a float >= 0; got {self.atol!r}"
            )


class KnownSparsity(Frozen):
    """A pattern the user knows: a scipy.sparse matrix or a 2-D boolean (or 0/1) array.

    The pattern is over flattened indices: ``f(x).size x x.size`` for a
    Jacobian, ``x.size x x.size`` (symmetric) for a Hessian. It is stored as
    sorted flat indices so that the object stays hashable.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array
        Nonzero (or True) where the derivative may be nonzero; stored entries
        of a sparse matrix count whatever their value.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> known = di.KnownSparsity(np.eye(3, dtype=bool))
    >>> known.shape, known.nnz
    ((3, 3), 3)
    """

    shape: tuple
    entries: bytes

    def __init__(self, pattern):
        if hasattr(pattern, "tocoo") and hasattr(
            pattern, "nnz"
        ):  # scipy.sparse, without importing it
            coo = pattern.tocoo()
            shape = tuple(int(d) for d in coo.shape)
            rows, cols = np.asarray(coo.row, dtype=np.int64), np.asarray(coo.col, dtype=np.int64)
        else:
            try:
                dense = np.asarray(pattern)
            except Exception as error:  # noqa: BLE001 - any unconvertible object is the user's error
                raise TypeError(
                    "KnownSparsity(pattern=...) expected a scipy.sparse matrix or a 2-D boolean array; "
                    f"got {type(pattern).__name__}"
                ) from error
            if dense.ndim != 2 or dense.dtype.kind not in "biuf":
                raise TypeError(
                    "KnownSparsity(pattern=...) expected a scipy.sparse matrix or a 2-D boolean array; "
                    f"got a {dense.dtype} array of shape {dense.shape}"
                )
            shape = tuple(int(d) for d in dense.shape)
            rows, cols = (np.asarray(i, dtype=np.int64) for i in np.nonzero(dense))
        flat = np.unique(rows * shape[1] + cols)
        self.__dict__.update(shape=shape, entries=flat.tobytes())  # the fields, in order

    def __repr__(self):
        return f"KnownSparsity(shape={self.shape}, nnz={self.nnz})"

    @property
    def nnz(self) -> int:
        """Number of entries of the pattern."""
        return len(self.entries) // 8

    def coordinates(self):
        """``(rows, cols)``: int64 arrays of the entries, row-major sorted."""
        flat = np.frombuffer(self.entries, dtype=np.int64)
        return flat // self.shape[1], flat % self.shape[1]


#: the vertex orders of the greedy colorings (``orders.py`` implements them)
ORDERS = (
    "natural",
    "largest_first",
    "smallest_last",
    "incidence_degree",
    "dynamic_largest_first",
    "random",
)
_DECOMPRESSIONS = ("direct", "substitution")


class GreedyColoring(Frozen):
    """Greedy coloring of the pattern, in one vertex order or the best of several.

    Jacobians get a partial distance-2 coloring of the columns (forward dense
    backends: one pushforward per color) or of the rows (reverse: one pullback
    per color); a backend doing both takes whichever needs fewer colors,
    unless its ``mode=`` is set; :class:`MixedMode` gets a star bicoloring
    (columns and rows: pushforwards and pullbacks). Hessians get a star
    coloring (``decompression="direct"``: each entry read from one
    Hessian-vector product) or an acyclic coloring (``"substitution"``: fewer
    colors, the entries solved for from the products, on the host).

    Parameters
    ----------
    order : str or tuple of str
        Vertex order of the greedy pass: ``"natural"``, ``"largest_first"``,
        ``"smallest_last"``, ``"incidence_degree"``, ``"dynamic_largest_first"``
        or ``"random"`` (drawn from ``seed``); a tuple tries each and keeps
        the coloring with the fewest colors (the first of equals).
    postprocess : bool
        For Hessians colored by asdex, drop colors that star coloring does not need
        (asdex's postprocessing; may save a product).
    decompression : str
        For Hessians: ``"direct"`` (star coloring) or ``"substitution"``
        (acyclic coloring).
    seed : int
        Seed of the ``"random"`` order.

    Examples
    --------
    >>> import diffinterface as di
    >>> di.GreedyColoring(order=("largest_first", "smallest_last"), decompression="substitution").order
    ('largest_first', 'smallest_last')
    """

    order: object = "largest_first"
    postprocess: bool = False
    decompression: str = "direct"
    seed: int = 0

    def __post_init__(self):
        orders = self.order if isinstance(self.order, tuple) else (self.order,)
        if not orders or any(not isinstance(o, str) or o not in ORDERS for o in orders):
            raise ValueError(
                f"GreedyColoring(order=...) expected one of {ORDERS} or a non-empty tuple of them; got {self.order!r}"
            )
        if not isinstance(self.postprocess, bool):
            raise TypeError(
                f"GreedyColoring(postprocess=...) expected True or False; got {self.postprocess!r}"
            )
        if self.decompression not in _DECOMPRESSIONS:
            raise ValueError(
                f"GreedyColoring(decompression=...) expected one of {_DECOMPRESSIONS}; got {self.decompression!r}"
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise TypeError(f"GreedyColoring(seed=...) expected an int; got {self.seed!r}")

    @property
    def orders(self) -> tuple:
        """The orders tried, as a tuple."""
        return self.order if isinstance(self.order, tuple) else (self.order,)


_DETECTORS = (TracerSparsityDetector, DenseSparsityDetector, KnownSparsity)


class AutoSparse(AbstractBackend, Frozen):
    """Sparse Jacobians and Hessians from colored, compressed products of ``dense_backend``.

    At preparation the sparsity pattern is detected and colored; each call
    then runs one pushforward, pullback or Hessian-vector product of the dense
    backend per color (batched as the dense backend prefers) and scatters the
    compressed results into a sparse matrix. No dense ``m x n`` array is built.
    ``jacobian`` and ``hessian`` (and their ``value_*`` variants) are sparse;
    every other operator is the dense backend's.

    Results are 2-D matrices over flattened indices, ``f(x).size x x.size``
    (``x.size x x.size`` for Hessians), in x's family: ``scipy.sparse.csr_array``
    for numpy, ``jax.experimental.sparse.BCOO`` for JAX, a sparse CSR tensor
    for torch. ``out=`` takes such a matrix with the prepared pattern and
    overwrites its values. ``dense_result=True`` returns dense arrays shaped as
    the dense operators' results (for small problems and comparisons).

    Parameters
    ----------
    dense_backend : AbstractBackend
        Any backend selector (``SecondOrder`` included, for Hessians), or
        :class:`MixedMode` ``(forward_backend, reverse_backend)`` for Jacobians
        colored on both sides (pushforwards and pullbacks).
    sparsity_detector : TracerSparsityDetector, DenseSparsityDetector or KnownSparsity
        How the pattern is found at preparation. The default traces ``f``
        with JAX, so ``f`` must be JAX-traceable (``xp =
        di.array_namespace(x)`` or ``jax.numpy``); a function of torch or
        numpy only needs :class:`DenseSparsityDetector` (the pattern at x,
        from one dense derivative) or :class:`KnownSparsity` (yours).
    coloring_algorithm : GreedyColoring
        How the pattern is colored: the vertex order, and for Hessians the
        decompression (default: ``GreedyColoring()``).
    dense_result : bool
        ``True`` returns dense arrays shaped as the dense operators' results
        instead of sparse matrices (default ``False``).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoSparse(di.AutoFiniteDiff(method="forward"))
    >>> f = lambda x: x[1:] ** 2 - x[:-1]
    >>> prep = di.prepare_jacobian(f, backend, np.ones(5))
    >>> di.ncolors(prep)
    2
    >>> di.jacobian(f, backend, np.arange(5.0), prep=prep).toarray().round(3)
    array([[-1.,  2.,  0.,  0.,  0.],
           [ 0., -1.,  4.,  0.,  0.],
           [ 0.,  0., -1.,  6.,  0.],
           [ 0.,  0.,  0., -1.,  8.]])
    """

    dense_backend: AbstractBackend
    sparsity_detector: object = TracerSparsityDetector()
    coloring_algorithm: GreedyColoring = GreedyColoring()
    dense_result: bool = False

    def __post_init__(self):
        if not isinstance(self.dense_backend, AbstractBackend) or isinstance(
            self.dense_backend, AutoSparse
        ):
            raise TypeError(
                "AutoSparse(dense_backend=...) expected a dense backend selector such as di.AutoJAX(); "
                f"got {self.dense_backend!r}"
            )
        if not isinstance(self.sparsity_detector, _DETECTORS):
            raise TypeError(
                "AutoSparse(sparsity_detector=...) expected di.TracerSparsityDetector(), "
                "di.DenseSparsityDetector(backend) or di.KnownSparsity(pattern); "
                f"got {self.sparsity_detector!r}"
            )
        if not isinstance(self.coloring_algorithm, GreedyColoring):
            raise TypeError(
                f"AutoSparse(coloring_algorithm=...) expected di.GreedyColoring(); got {self.coloring_algorithm!r}"
            )
        if not isinstance(self.dense_result, bool):
            raise TypeError(
                f"AutoSparse(dense_result=...) expected True or False; got {self.dense_result!r}"
            )


class MixedMode(AbstractBackend, Frozen):
    """Forward and reverse mode together, as the dense backend of :class:`AutoSparse`.

    The Jacobian's pattern gets a star bicoloring: some columns are colored
    (one pushforward of ``forward_backend`` per column color) and some rows
    (one pullback of ``reverse_backend`` per row color), each entry read
    directly from one product. A pattern with a dense row and a dense column
    (an arrowhead) then takes a few products where either one-sided coloring
    takes one per row or column. Every other operator, Hessians included, is
    ``forward_backend``'s.

    Parameters
    ----------
    forward_backend : AbstractBackend
        Computes the pushforwards (finite differences welcome).
    reverse_backend : AbstractBackend
        Computes the pullbacks.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> def arrowhead(x):  # y[0] = sum(sin(x)), y[i] = x[i]**2 + x[0] * x[i]
    ...     xp = di.array_namespace(x)
    ...     return xp.concat([xp.reshape(xp.sum(xp.sin(x)), (1,)), x[1:] ** 2 + x[0] * x[1:]])
    >>> backend = di.AutoSparse(di.MixedMode(di.AutoFiniteDiff(), di.AutoJAX()))
    >>> prep = di.prepare_jacobian(arrowhead, backend, np.ones(50))
    >>> di.ncolors(prep), di.coloring(prep).kind
    (3, 'bidirectional')
    """

    forward_backend: AbstractBackend
    reverse_backend: AbstractBackend

    def __post_init__(self):
        for name in ("forward_backend", "reverse_backend"):
            value = getattr(self, name)
            if not isinstance(value, AbstractBackend) or isinstance(value, (AutoSparse, MixedMode)):
                raise TypeError(
                    f"MixedMode({name}=...) expected a dense backend selector such as di.AutoJAX(); "
                    f"got {value!r}"
                )
