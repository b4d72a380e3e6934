"""asdex, the sparsity library over JAX: the pattern of ``f`` read off JAX's trace, and its colorings.

``AutoSparse`` (``diffinterface/wrappers/sparse/``) asks this module, and no
other, for what asdex does: its :class:`~diffinterface.TracerSparsityDetector`
traces ``f`` here (:func:`traced_pattern`), and its largest-first colorings
of columns, rows and stars are asdex's (:func:`one_sided_coloring`,
:func:`star_coloring`, :func:`gather_positions`). Importing this module
imports neither asdex nor JAX: each function imports them when called.

    >>> import numpy as np
    >>> ncolors, side, colors, _ = one_sided_coloring(np.array([0, 1]), np.array([0, 1]), (2, 2), None)
    >>> ncolors, side, colors.tolist()
    (1, 'columns', [0, 0])
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from ...families import FAMILIES, as_numpy, family_of, is_array
from ...families.jax import JaxFamily

#: the wrapper's sides -> asdex's modes
_JACOBIAN_MODES = {"columns": "fwd", "rows": "rev", None: None}


# -- tracing with JAX ----------------------------------------------------------------------------


def _to_jax(value):
    """A numpy, torch or JAX array (or number) as a JAX array of the same dtype (the others through the host)."""
    if family_of(value) == JaxFamily.name:
        return value
    return FAMILIES[JaxFamily.name].from_numpy(as_numpy(value), None)


def traced_pattern(problem, kind, alternatives):
    """``(rows, cols)`` of the ``kind`` ("jacobian" or "hessian") pattern of ``problem``, traced by asdex.

    What cannot be traced raises an UnsupportedError naming the cause and
    ``alternatives`` (the other detectors, in the caller's words).
    """
    import asdex
    import jax

    if problem.y is not None:
        raise UnsupportedError(
            "sparsity_detector: TracerSparsityDetector traces f with JAX, which cannot trace a two-argument "
            f"f(y, x) that writes into y; {alternatives}"
        )
    # Array contexts are traced arguments outside argnums (their entries are no columns);
    # other values are closed over, as f sees them.
    traced = [
        i
        for i, value in enumerate(problem.ctx)
        if is_array(value) and FAMILIES[family_of(value)].concrete
    ]
    ctx = list(problem.ctx)
    f = problem.f

    def function(x, *arrays):
        values = list(ctx)
        for i, a in zip(traced, arrays):
            values[i] = a
        return f(x, *values)

    args = (_to_jax(problem.x), *(_to_jax(ctx[i]) for i in traced))
    detector = asdex.hessian_sparsity if kind == "hessian" else asdex.jacobian_sparsity
    wide = any(str(a.dtype) == "float64" for a in args)
    try:
        with jax.enable_x64(wide):
            pattern = detector(function, *args, argnums=0)
    except Exception as error:  # noqa: BLE001 - explained below, by what failed
        raise _tracing_failure(jax, function, args, wide, error, alternatives) from error
    return pattern.rows, pattern.cols


def _tracing_failure(jax, function, args, wide, error, alternatives):
    """The UnsupportedError for asdex's ``error``: f that JAX cannot trace, or an operation asdex cannot handle.

    Tracing f once more with JAX alone (``jax.eval_shape``, no evaluation)
    tells the two apart, on this error path only.
    """
    try:
        with jax.enable_x64(wide):
            jax.eval_shape(function, *args)
    except Exception as traced:  # noqa: BLE001 - JAX itself cannot trace f: that is the cause
        return UnsupportedError(
            f"sparsity_detector: TracerSparsityDetector traces f with JAX, which could not trace it "
            f"({type(traced).__name__}: {traced}). Write f with xp = di.array_namespace(x) (or jax.numpy), "
            f"with no numpy, float() or .item() on values computed from x, so JAX can trace it, or {alternatives}"
        )
    return UnsupportedError(
        f"sparsity_detector: TracerSparsityDetector traced f with JAX, but asdex, which reads the sparsity "
        f"pattern off that trace, cannot handle one of its operations ({type(error).__name__}: {error}). "
        f"f itself is fine; {alternatives}"
    )


# -- colorings -----------------------------------------------------------------------------------


def one_sided_coloring(rows, cols, shape, side):
    """asdex's largest-first coloring of the Jacobian pattern ``(rows, cols)`` of ``shape``.

    ``side``: "columns", "rows" or None (asdex's choice). Returns ``(ncolors,
    side, colors, colored)``, ``colored`` being asdex's object (for :func:`gather_positions`).
    """
    import asdex

    pattern = asdex.SparsityPattern.from_coo(rows, cols, shape)
    colored = asdex.jacobian_coloring_from_sparsity(pattern, mode=_JACOBIAN_MODES[side])
    side = "columns" if colored.mode == "fwd" else "rows"
    return int(colored.num_colors), side, np.asarray(colored.colors), colored


def star_coloring(rows, cols, shape, postprocess):
    """asdex's largest-first star coloring of the symmetric pattern ``(rows, cols)`` of ``shape``:
    ``(ncolors, colors, colored)`` (``postprocess``: drop the colors the stars do not need)."""
    import asdex

    pattern = asdex.SparsityPattern.from_coo(rows, cols, shape)
    colored = asdex.hessian_coloring_from_sparsity(pattern, postprocess=postprocess)
    return int(colored.num_colors), np.asarray(colored.colors), colored


def gather_positions(colored, ncolors, product_size):
    """Flat positions of the entries in the stacked products, from asdex's own decompression.

    asdex gathers entries out of a compressed matrix; gathering out of the
    matrix of flat positions gives the positions, through its public API
    (star colorings read each entry in its star's hub: asdex knows where).
    """
    import asdex
    import jax.numpy as jnp

    total = ncolors * product_size
    if total >= 2**31:
        raise ValueError(
            f"the compressed products hold {total} entries; at most 2**31 - 1 are supported"
        )
    positions = jnp.arange(total, dtype=jnp.int32).reshape(ncolors, product_size)
    return np.asarray(asdex.decompress_data(positions, colored)).astype(np.int64)


__all__ = ["gather_positions", "one_sided_coloring", "star_coloring", "traced_pattern"]
