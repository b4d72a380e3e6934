"""Where the user's arrays meet MLX: conversions in and out, ``mx.compile``, and sweeps in batches.

A numpy x (and each numpy array context) becomes an MLX array of its own
dtype (``mx.array`` alone would make float64 float32); results go back as
numpy arrays the caller owns. MLX arrays pass through both ways. float64 is
computed on MLX's CPU device (the only one with float64): where the default
device is another, each call runs under ``mx.stream(mx.cpu)``.

With ``compile=True`` every recipe is ``mx.compile``'d and traced at
preparation: MLX is lazy, so the call made there builds the graph without
computing it. Inside ``mx.compile`` f cannot read x's values (``.item()``,
numpy, a branch on a value): MLX refuses with its ``[eval]`` error, which
the core turns into a TracedArrayError naming ``compile=False``.
"""

from __future__ import annotations

import mlx.core as mx
import numpy as np

import optree

from ...contexts import Cache
from ...core.batching import choose_batch_size
from ...errors import TracedArrayError, UnsupportedError, graph_break, traced_array
from ...families import describe
from ...families.mlx_namespace import dtype_of

#: MLX's words when f reads a value of an array it traces (mx.compile, mx.vmap)
TRACED_ARRAY_MESSAGE = "Attempting to eval an array during function transformations"


def to_mlx(a, dtype=None):
    """The numpy array or number ``a`` as an MLX array of its dtype (``dtype``: another); MLX arrays as they are."""
    if isinstance(a, mx.array):
        return a
    a = np.asarray(a)
    if not a.flags.c_contiguous:  # MLX takes no negative strides
        a = a.copy()
    return mx.array(a, dtype=dtype_of(a.dtype if dtype is None else dtype))


def to_numpy(a):
    """An MLX result as a numpy array the caller owns."""
    return np.array(a, copy=True)


def checked_output(f, backend):
    """``f`` refusing an output that is not an MLX array: a numpy result has left MLX's graph."""

    def f_of_mlx(x, *ctx):
        y = f(x, *ctx)
        if isinstance(y, mx.array):
            return y
        if isinstance(y, (np.ndarray, np.generic, float, int)):  # computed outside MLX's graph
            raise graph_break(f, backend, "MLX") from TypeError(
                f"f returned {describe(y)}, not an MLX array computed from x"
            )
        raise TypeError(f"f: expected f to return an array or a number; it returned {describe(y)}")

    return f_of_mlx


def _host_arrays(value):
    return isinstance(value, (np.ndarray, np.generic)) or (
        isinstance(value, (tuple, list, dict))
        and any(isinstance(v, (np.ndarray, np.generic)) for v in optree.tree_leaves(value))
    )


def _in_mlx(value):
    return optree.tree_map(
        lambda v: to_mlx(v) if isinstance(v, (np.ndarray, np.generic)) else v, value
    )


def refuse_caches(problem, backend):
    """MLX traces f on arrays that no numpy buffer holds: a ``di.Cache`` context is refused by name."""
    for i, context in enumerate(problem.contexts):
        if isinstance(context, Cache):
            raise UnsupportedError(
                f"contexts[{i}]: {backend!r} cannot differentiate f with a di.Cache: MLX traces f on "
                "arrays that no buffer can hold, so f cannot write into it. Return the value from f "
                "instead, pass what f only reads as di.Constant, or use a backend that writes into "
                "buffers (di.check_inplace(backend) is True)"
            )


def branch_error(f, backend, error):
    """The TracedArrayError for ``f`` reading a value of an array ``mx.compile`` traces."""
    message = traced_array(f, backend, "MLX array traced by mx.compile", error)
    return TracedArrayError(
        f"{message} Where f branches on x's values (if x[0] > 0: ...), mx.compile cannot trace it: "
        "use AutoMLX(compile=False), which runs MLX's transforms op by op, or write the branch with "
        "xp.where"
    )


class HostCall(Exception):
    """f calls back into Python with x's values (a bridge to another framework) inside ``mx.compile``."""


class Boundary:
    """One preparation's conversions and compilation, decided once from its problem."""

    def __init__(self, adapter, problem):
        self.adapter, self.problem = adapter, problem
        self.passes_through = problem.family == "mlx"
        self.dtype = dtype_of(problem.x_dtype)
        self.compiles = adapter.backend.compile
        #: True once a trace found f calling Python on x's values (:class:`HostCall`)
        self.calls_host = False
        self.on_cpu = problem.x_dtype == "float64" and mx.default_device() != mx.cpu
        refuse_caches(problem, adapter.backend)
        self.f = checked_output(problem.f, adapter.backend)

    # -- arrays ----------------------------------------------------------------------------------

    def x_in(self, x):
        # the user's MLX array as a handle of its own: an f that writes into its argument (x += 1
        # rebinds the array object in place) leaves the caller's x as it was
        return mx.array(x) if self.passes_through else to_mlx(x, self.problem.x_dtype)

    def ctx_in(self, ctx):
        # a context's kind may change between calls (Constant(2), then Constant(np.int64(3)))
        return tuple(_in_mlx(c) if _host_arrays(c) else c for c in ctx) if ctx else ctx

    def out(self, a):
        return a if self.passes_through else to_numpy(a)

    def seeds_in(self, seeds):
        """A tuple of seeds (the user's family) as one MLX stack, first axis the seed."""
        return mx.stack([to_mlx(s) for s in seeds])

    # -- compiled calls --------------------------------------------------------------------------

    def compiled(self, run, *example):
        """``run`` compiled with ``mx.compile`` (and traced now at ``example``, computing nothing), or as it is.

        Where f calls Python on x's values (a ``DifferentiateWith`` function,
        another framework's inner backend: :class:`HostCall`), which no compiled
        function can, ``run`` stays as it is.
        """
        plain = self._on_device(run)
        if not self.compiles:
            return plain
        compiled = self._on_device(mx.compile(run))
        try:
            compiled(*example)  # traces and compiles; MLX computes nothing until a result is read
        except HostCall:
            self.calls_host = True
            return plain
        except ValueError as error:  # f read a value of x while mx.compile traced it
            if TRACED_ARRAY_MESSAGE not in str(error):
                raise
            raise branch_error(self.problem.f, self.adapter.backend, error) from error
        except IndexError as error:
            # MLX's own failure compiling a graph it runs uncompiled (the transposed VJP of eigh's
            # eigenvectors, forward mode): the MLX family's limits name it and the way around
            raise ValueError(f"mx.compile failed (IndexError: {error})") from error
        return compiled

    def sweep(self, recipe, size, example):
        """``(run, size)``: ``recipe(f, one)`` compiled for batches of ``size`` seeds (``example(size)``:
        its arguments); where f calls Python on x's values, which neither ``mx.compile`` nor
        ``mx.vmap`` can trace, uncompiled and one seed at a time."""
        run = self.compiled(recipe(self.f, size == 1), *example(size))
        if not self.calls_host:
            return run, size
        return self._on_device(recipe(self.f, True)), 1

    def _on_device(self, run):
        if not self.on_cpu:
            return run

        def on_cpu(*args):
            with mx.stream(mx.cpu):
                return run(*args)

        return on_cpu

    def example(self, *seeds):
        problem = self.problem
        return (self.x_in(problem.x), *seeds, *self.ctx_in(problem.ctx))

    # -- sweeps in batches -----------------------------------------------------------------------

    def batch(self, n, product):
        """Seeds per ``mx.vmap`` pass of a sweep over ``n`` seeds: the selector's choice, or what fits
        its memory budget by ``product()``'s peak memory for one seed."""
        backend, problem = self.adapter.backend, self.problem

        def seed_bytes():
            try:
                mx.reset_peak_memory()
                mx.eval(product())
                return mx.get_peak_memory()
            except Exception:  # noqa: BLE001 - no estimate: the sweep runs whole, and f's errors come from it
                return None

        return choose_batch_size(backend, n, seed_bytes, problem.one_off)
