"""What an adapter prepares from: the :class:`Problem`, the output :class:`Spec`, seeded batches.

``Problem.impl(operator)`` asks the adapter for a native implementation and,
where it has none, builds one with the operator family's fallback, which the
operator modules register in :data:`FALLBACKS` (the core imports no operator).
Fallbacks work in the user's array family with the namespace of
:mod:`diffinterface.families`.
"""

from __future__ import annotations

import numpy as np

from ..families import (
    describe,
    dtype_name,
    family_of,
    from_numpy,
    is_array,
    namespace,
    shape_of,
    size_of,
)
from .batching import choose_batch_size, cut
from .dtypes import require_real_output
from .operator_table import FALLBACKS, OPERATORS


class Spec:
    """Shape and dtype of an array, as learned at preparation."""

    __slots__ = ("shape", "dtype", "size")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.size = size_of(self.shape)

    @classmethod
    def of(cls, a):
        if not is_array(a):
            raise TypeError(
                f"f: expected f to return an array or a number; it returned {describe(a)}"
            )
        return cls(shape_of(a), dtype_name(a))

    def __repr__(self):
        return f"Spec({self.shape}, {self.dtype})"


class Problem:
    """Everything an adapter needs to prepare one operator (see :mod:`diffinterface.core.adapter`)."""

    def __init__(
        self,
        adapter,
        f,
        x,
        tangents,
        contexts,
        y,
        tree=None,
        strict=True,
        one_off=False,
        *,
        spec=None,
        aux=None,
        same_point=False,
        leaf_dtypes=None,
        batched_f=None,
        constant_output_is_zero=False,
    ):
        self.adapter = adapter
        #: True for the preparation of an unprepared call, used once: an adapter need not compile
        #: it, and must not reuse code compiled for an earlier one (f's globals may have changed
        #: since)
        self.one_off = one_off
        #: False for a preparation made with ``strict=False`` (and for unprepared calls): its calls
        #: may bring an x of another shape or dtype, which the core does not refuse
        self.strict = strict
        self.f = f
        self.x = x
        self.tangents = tangents
        self.contexts = contexts
        self.ctx = tuple(c.value for c in contexts)
        self.y = y
        #: the flattening plan when ``x`` is a pytree handed to the adapter as it is
        #: (``adapter.capabilities.pytrees``);
        #: then x_shape, x_size and x_dtype describe its flat form (the promoted dtype).
        self.tree = tree
        if tree is None:
            self.family = family_of(x)
            self.x_shape = shape_of(x)
            self.x_dtype = dtype_name(x)
        else:
            self.family, self.x_shape, self.x_dtype = tree.family, (tree.size,), tree.dtype
        self.x_size = size_of(self.x_shape)
        #: the output's shape and dtype, once learned (:attr:`spec`)
        self._spec = spec if y is None else Spec.of(y)
        #: for the flat problem of a tree whose leaves have several dtypes: ``(slice, dtype)`` of
        #: each leaf's entries in the flat x (whose dtype is the widest), so that a step can suit
        #: each leaf
        self.leaf_dtypes = leaf_dtypes
        #: True when f is itself a derivative (SecondOrder's outer differentiates the inner's): an
        #: output the framework cannot trace back to x is then a true zero, not a broken graph
        self.constant_output_is_zero = constant_output_is_zero
        #: ``batched_f(tangents, formulas)``: an evaluating outer's formulas around f at a stack of
        #: points, prepared whole by the inner (an Impl, or None), or None: set when f is an inner's
        #: gradient with ``prepare_batched_gradient``
        self.batched_f = batched_f
        #: with ``has_aux``: the :class:`~diffinterface.core.aux.AuxCapture` that ``f`` evaluates
        #: through, and ``aux_entry``, the function of the adapter's x that reaches it (for adapters
        #: computing aux natively)
        self.aux = aux
        self.aux_entry = f if aux is not None else None
        #: a same-point preparation: methods are called at this x and these contexts only (adapters
        #: may then compute what depends on them once, ``Adapter.prepare_same_point``)
        self.same_point = same_point

    @classmethod
    def of(cls, draft, setting):
        """The problem of a preparation's :class:`~diffinterface.core.transform.Draft` and ``Setting``."""
        call = draft.call
        return cls(
            setting.adapter,
            call.f,
            call.x,
            call.seeds,
            call.contexts,
            call.y,
            tree=draft.tree,
            strict=setting.strict,
            one_off=setting.one_off,
            spec=draft.spec,
            aux=draft.aux,
            same_point=call.same_point,
            leaf_dtypes=draft.leaf_dtypes,
        )

    @property
    def spec(self):
        """Output shape and dtype, learned once (the adapter decides how)."""
        if self._spec is None:
            spec = self.adapter.output_spec(self)
            require_real_output(spec, self.x_dtype, self.f)
            self._spec = spec
        return self._spec

    def is_empty(self, op):
        """True when ``op`` has no derivative entries here: ``x`` or (known) ``f(x)`` of size 0.

        ``f(x)``'s size is consulted only when the preparation already learned it,
        so deciding costs no evaluation for a non-empty ``x`` (:mod:`diffinterface.core.empty`).
        """
        if self.x_size == 0:
            return True
        spec = self._spec
        return not op.scalar_y and spec is not None and spec.size == 0

    def replace(self, **changes):
        """A copy with some fields changed (for instance other tangents); keeps the spec."""
        new = object.__new__(Problem)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    def mode(self, operator):
        return self.adapter.choose_mode(operator, self)

    def impl(self, operator, tangents=None):
        """The adapter's implementation of ``operator``, or the fallback built from primitives."""
        problem = self if tangents is None else self.replace(tangents=tangents)
        impl = self.adapter.prepare(operator, problem)
        if impl is None:
            impl = FALLBACKS[operator](problem)
        return impl

    # Helpers for fallbacks, in the user's array family.
    @property
    def xp(self):
        return namespace(self.family)

    def basis(self, shape, dtype):
        """The standard basis of arrays of ``shape`` and ``dtype`` in the user's family, as a tuple."""
        n = size_of(shape)
        eye = from_numpy(np.eye(n, dtype=dtype).reshape((n, *shape)), self.family, self.x)
        return tuple(eye[i] for i in range(n))

    def seeded(self, operator, seeds):
        """The primitive ``operator`` over all ``seeds``, as a :class:`Seeded` (batches prepared here once)."""
        return Seeded(self, operator, seeds)


class Seeded:
    """A primitive (pushforward or pullback) run over a fixed set of seeds.

    The seeds go in batches of at most the adapter's ``max_batch`` (and, for an
    adapter that does not bound its own sweeps, ``bounds_sweeps``, of the
    selector's ``batch_size``), each batch prepared once. ``results(x, *ctx)`` gives the list of per-seed results;
    ``value_and_results(x, *ctx)`` gives ``(f(x), list)``: fallbacks use the
    former for plain operators so that no evaluation is spent on a value that
    is thrown away.
    """

    def __init__(self, problem, operator, seeds):
        adapter = problem.adapter
        step = adapter.capabilities.max_batch or len(seeds) or 1
        if not adapter.capabilities.bounds_sweeps:
            # an adapter that runs any batch it is given at once: batches of the selector's
            # batch_size
            step = min(step, choose_batch_size(adapter.backend, len(seeds), lambda: None))
        batches = cut(seeds, step)
        impls = [problem.impl(operator, tangents=batch) for batch in batches]
        #: seeds per vectorized pass: the primitive's own bound where it has one, else the batches'
        self.batch_size = getattr(impls[0], "batch_size", None) or step if impls else None
        plain = [(getattr(impl, operator), batch) for impl, batch in zip(impls, batches)]
        valued = [
            (getattr(impl, "value_and_" + operator), batch) for impl, batch in zip(impls, batches)
        ]
        if len(batches) == 1:
            (fn, batch), (value_fn, _) = plain[0], valued[0]
            self.results = lambda x, *ctx: fn(x, batch, *ctx)
            self.value_and_results = lambda x, *ctx: value_fn(x, batch, *ctx)
            return

        def results(x, *ctx):
            return [r for fn, batch in plain for r in fn(x, batch, *ctx)]

        def value_and_results(x, *ctx):
            (value_fn, first), rest = valued[0], plain[1:]
            value, parts = value_fn(x, first, *ctx)
            return value, [*parts, *(r for fn, batch in rest for r in fn(x, batch, *ctx))]

        self.results, self.value_and_results = results, value_and_results


def require_scalar_output(problem, operator):
    """The output spec, or a ValueError naming ``f`` when ``operator`` needs a scalar output."""
    spec = problem.spec
    if spec.shape != ():
        instead = OPERATORS[operator].for_array_outputs
        raise ValueError(
            f"f: {operator} needs f to return a scalar; it returns shape {spec.shape}"
            + (f" (use {instead} for array outputs)" if instead else "")
        )
    return spec
