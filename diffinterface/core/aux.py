"""Auxiliary outputs (``has_aux=True``): ``f`` returns ``(y, aux)``; the operator differentiates ``y`` and
returns ``aux`` as computed at the call's x.

The core hands every adapter an :class:`AuxCapture` as ``f``: it returns ``y``
and keeps ``aux``, so no adapter needs to know about auxiliary outputs. Which
evaluation of a call was at x (finite differences evaluate f at other points
too) is decided by the call's x itself: the first evaluation whose argument,
unwrapped from the framework's recording (``Adapter.primal_value``), equals x.
An adapter that traces f without values (JAX) cannot take aux out of its
transforms this way: it differentiates ``problem.aux_entry`` with its own
``has_aux`` (:meth:`AuxCapture.with_aux` gives the pair ``(y, aux)``) and hands
the aux over with :meth:`AuxCapture.put` (``problem.aux``). A recipe that never evaluates f at x
itself (central differences of a gradient) gets one evaluation at x for aux.

Results follow JAX: ``op`` returns ``(result, aux)``; a value-and method
returns its usual tuple with the value replaced by ``(value, aux)``;
``gradient_and_hvp``, which returns no value, returns ``((gradient, hvps), aux)``.
"""

from __future__ import annotations

import numpy as np

from ..families import as_numpy, is_array, traced_family
from .adapter import Adapter
from .transform import Step


def capture_of(f):
    """The :class:`AuxCapture` that ``f`` is, or None."""
    return f if isinstance(f, AuxCapture) else None


def primal_of(adapter):
    """The concrete value of what f receives or computes under ``adapter`` (every part's recording unwrapped)."""
    unwraps = []
    for part in adapter.parts():
        unwrap = part.primal_value
        if type(part).primal_value is not Adapter.primal_value and unwrap not in unwraps:
            unwraps.append(unwrap)
    if not unwraps:
        return _identity
    if len(unwraps) == 1:
        return unwraps[0]

    def primal(value):
        for unwrap in unwraps:
            value = unwrap(value)
        return value

    return primal


def _identity(value):
    return value


def _leaves(tree):
    import optree

    return optree.tree_leaves(tree, none_is_leaf=True)


def _map(fn, tree):
    import optree

    return optree.tree_map(fn, tree, none_is_leaf=True)


def _concrete_leaves(x):
    """x's leaves as numpy arrays to compare evaluations' arguments with, or None where x is a traced
    value with no concrete values (its family says: a tracer inside ``jax.jit``, a batched tensor
    inside ``torch.func.vmap``): :meth:`AuxCapture.take` then evaluates f at x itself."""
    if traced_family(x) is not None:
        return None
    return [as_numpy(leaf) if is_array(leaf) else leaf for leaf in _leaves(x)]


class AuxCapture:
    """``f`` returning ``(y, aux)`` as a function returning ``y``; ``aux`` at the call's x is kept.

    ``primal`` unwraps a value f received or computed from the adapters'
    recordings (a torch tensor that requires grad, an autograd box) into the
    concrete value. ``native`` is set (to the adapter's own object) by an
    adapter that computes aux itself (:meth:`put`); an evaluation at x's
    values while preparing an unprepared call (:meth:`prime`) still gives the
    aux of that call.

    >>> import numpy as np
    >>> capture = AuxCapture(lambda x: ((x ** 2).sum(), {"norm": float(x[0])}), lambda v: v)
    >>> x = np.ones(2)
    >>> capture.begin(x)
    >>> float(capture(x + 0.5)), float(capture(x)), capture.take(x, ())
    (4.5, 2.0, {'norm': 1.0})
    """

    def __init__(self, f, primal):
        self.f = f
        self.primal = primal
        self.native = False
        self.want = False
        self.raw = None
        self._x = self._x_leaves = None
        #: the object standing for the call's x in the adapter's problem (a pytree x's flat copy),
        #: or None
        self._stand_in = None
        self._found = False
        self._aux = None
        self._primed = None
        self.__name__ = getattr(f, "__name__", "f")
        self.__doc__ = getattr(f, "__doc__", None)

    def __call__(self, x, *ctx):
        y, aux = self._split(self.f(x, *ctx))
        if self.want:
            self.raw = aux
        elif not self._found and self._x_leaves is not None and self._at_x(x):
            self._aux = _map(self.primal, aux)
            self._found = True
        return y

    def _split(self, out):
        if out.__class__ is not tuple or len(out) != 2:
            raise TypeError(
                "f: with has_aux=True, f must return a pair (y, aux); it returned "
                + (f"a tuple of {len(out)}" if isinstance(out, tuple) else type(out).__name__)
                + ". Return (y, aux), or call without has_aux"
            )
        return out

    def _at_x(self, arg):
        if arg is self._x or arg is self._stand_in:
            return True
        try:
            given = _leaves(arg)
            wanted = self._x_leaves
            if (
                len(given) != len(wanted) and self._stand_in is not None
            ):  # the flat problem's x, by value
                wanted = [as_numpy(self._stand_in)]
            if len(given) != len(wanted):
                return False
            return all(
                g is w or np.array_equal(as_numpy(self.primal(g)), w) for g, w in zip(given, wanted)
            )
        except Exception:  # noqa: BLE001 - a value with no concrete form (a tracer) is not the call's x
            return False

    def prime(self, x):
        """Keep the aux of an evaluation at ``x`` while preparing: an unprepared call at ``x`` follows."""
        self.begin(x)
        self._primed = x

    def begin(self, x):
        """Start a call at ``x``: forget the last aux (but one found at ``x`` while preparing for this call)."""
        if self._primed is not None:
            primed, self._primed = self._primed, None
            if primed is x:
                return
        self._found, self._aux, self._stand_in = False, None, None
        self._x = x
        if not self.native:
            self._x_leaves = _concrete_leaves(x)

    def stand_in(self, x):
        """Note ``x`` as the call's x in the adapter's problem (the core flattens a pytree x: the adapter sees
        the flat copy): :meth:`put` and the first evaluation at x accept it as the call's own x."""
        self._stand_in = x

    def noting_stand_in(self, method):
        """``method`` (a prepared method of the adapter's problem, x first) noting its x as the call's."""

        def noting(x, *rest):
            self._stand_in = x
            return method(x, *rest)

        return noting

    def put(self, x, aux):
        """The aux computed by a native adapter at ``x``: this call's when ``x`` is the call's x itself (or what
        stands for it, :meth:`stand_in`), or, where the capture compares values (an adapter that is not
        ``native``: an outer backend's recording of x reached an inner's transform), x's values unwrapped."""
        if (
            x is self._x
            or (x is self._stand_in and x is not None)
            or (not self._found and self._x_leaves is not None and self._at_x(x))
        ):
            self._aux, self._found = aux, True

    def take(self, x, ctx):
        """The aux of the call at ``x`` (evaluating f there once more only if the recipe never did)."""
        if not self._found:
            self._aux = self._split(self.f(x, *ctx))[1]
        aux, self._aux, self._found = self._aux, None, False
        self._x = self._x_leaves = self._stand_in = None
        return aux

    def with_aux(self, entry, x, ctx):
        """``(y, aux)`` of ``entry(x, *ctx)`` (the adapter's f, whose evaluation reaches this object), as
        computed (tracers included): for an adapter differentiating with its framework's own ``has_aux``."""
        self.want = True
        try:
            return entry(x, *ctx), self.raw
        finally:
            self.want, self.raw = False, None


def aux_outputs(draft, setting):
    """The transform of ``has_aux=True``: every later step sees f returning y; the wrap returns aux."""
    call = draft.call
    if not call.has_aux:
        return None
    capture = AuxCapture(call.f, primal_of(setting.adapter))
    if setting.one_off:  # an evaluation at x while preparing gives the aux of the call that follows
        capture.prime(call.x)

    def wrap(built):
        return built._replace(methods=aux_methods(call.op, capture, built.methods))

    rewritten = draft._replace(call=call._replace(f=capture, has_aux=False), aux=capture)
    return Step(rewritten, wrap)


def aux_methods(op, capture, methods):
    """The (plain, valued) methods returning aux as the module docstring says, over the prepared ``methods``.

    Each runs its prepared method and takes the aux of that run's evaluation at
    x (or, where the recipe made none, of one evaluation there).
    """
    plain_method, valued_method = methods
    offset = 2 if op.seeds is not None else 1
    begin, take = capture.begin, capture.take

    def plain(*args):
        x = args[0]
        begin(x)
        result = plain_method(*args)
        return result, take(x, args[offset:])

    if op.n_values:

        def valued(*args):
            x = args[0]
            begin(x)
            value, *rest = valued_method(*args)
            return ((value, take(x, args[offset:])), *rest)

    else:

        def valued(*args):
            x = args[0]
            begin(x)
            result = valued_method(*args)
            return result, take(x, args[offset:])

    return plain, valued


def split_aux(op, valued, result):
    """``(result without aux, aux)`` of a method of :func:`aux_methods`."""
    if not valued or not op.n_values:
        return result
    (value, aux), rest = result[0], result[1:]
    return (value, *rest), aux


def join_aux(op, valued, result, aux):
    """The inverse of :func:`split_aux`."""
    if not valued or not op.n_values:
        return result, aux
    return ((result[0], aux), *result[1:])
