"""The one check of a preparation: does this call fit what was prepared?

Every preparation holds one :class:`Check`, built from the call it was made
for. It decides, in this order:

- the operator: a preparation serves the operator that made it;
- ``has_aux``: the call passes the prepared setting;
- the signature (only when the preparation is strict): f, backend, x's
  kind, the seeds' and the contexts' kinds (:mod:`.signature`);
- the point (only for a same-point preparation): x and the contexts have the
  prepared values, since the preparation holds what depends on them; when
  strict, x and each Constant's arrays that can be written in place are kept
  as copies, so that one changed in place is refused too.

It has two forms. Its attributes are the cheapest tests of the common calls
(identities, classes, raw ``shape``/``dtype`` reads), which the prepared
fast path (:func:`diffinterface.core.call.prepared_call`) reads in one
expression; a call they refuse leaves the fast path for the full
comparison, ``check(call)``, which raises
:class:`~diffinterface.errors.PreparationMismatchError` naming what does not
fit, and lets through what only looked different (a Python float, a NumPy
scalar and a 0-d array are one kind there).

    >>> import numpy as np, diffinterface as di
    >>> backend, x = di.AutoFiniteDiff(), np.array([1.0, 2.0])
    >>> prep = di.prepare_pushforward_same_point(np.sin, backend, x, (np.ones(2),))
    >>> di.pushforward(np.sin, backend, x + 1, (np.ones(2),), prep=prep)
    Traceback (most recent call last):
    ...
    diffinterface.errors.PreparationMismatchError: x: this preparation (prepare_pushforward_same_point) ...
"""

from __future__ import annotations

import numpy as np

from ..errors import PreparationMismatchError
from ..families import FAMILIES, as_numpy, family_of, is_array, traced_family
from .signature import mismatch_report, signature
from .tree_key import optree_module


def _metadata_attribute(x):
    """The attribute of ``x`` whose ``shape`` and ``dtype`` are plain reads (None: ``x``'s own).

    Its family says (:class:`~diffinterface.families.Family`); the attribute must
    hold x's very shape and dtype, else x's own are read.
    """
    name = FAMILIES[family_of(x)].metadata if family_of(x) in FAMILIES else None
    if name is None:
        return None
    meta = getattr(x, name, None)
    if getattr(meta, "shape", None) != x.shape or getattr(meta, "dtype", None) != x.dtype:
        return None
    return name


def _shape_and_dtype(a):
    """(attribute, shape, dtype): where ``a``'s shape and dtype are read (None: ``a`` itself), and their values.

    The per-call comparison reads them the same way and compares a dtype by
    identity first: numpy's dtypes of one kind are one object, and ``==``
    (which accepts dtype-like strings) is the slower test.
    """
    meta = _metadata_attribute(a)
    source = a if meta is None else getattr(a, meta)
    return meta, source.shape, source.dtype


#: the array kinds whose class says all (a Python int is an int64 kind, a float a float64 one)
_PYTHON_NUMBERS = (float, int)


def _has_metadata(value):
    """True for an array whose shape and dtype are read (not a Python number, whose class says all)."""
    return value.__class__ not in _PYTHON_NUMBERS and is_array(value)


def _kind(value, tree_fits=None):
    """(class, attribute, shape, dtype, tree_fits): the per-call test of one seed or context value.

    A pytree seed is tested by ``tree_fits``; an array by its shape and dtype
    (read from ``attribute``, None: its own); anything else, a Python number
    included, by its class alone (``shape`` None).
    """
    if tree_fits is None and _has_metadata(value):
        return (value.__class__, *_shape_and_dtype(value), None)
    return value.__class__, None, None, None, tree_fits


def _same_values(given, prepared):
    """True when ``given`` is ``prepared`` or holds equal values (leaf by leaf for a pytree)."""
    if given is prepared:
        return True
    try:
        leaves = optree_module().tree_leaves
        given_leaves = leaves(given, none_is_leaf=True)
        prepared_leaves = leaves(prepared, none_is_leaf=True)
        return len(given_leaves) == len(prepared_leaves) and all(
            _same_leaf(g, p) for g, p in zip(given_leaves, prepared_leaves)
        )
    except Exception:  # noqa: BLE001 - values that cannot be compared are not the prepared ones
        return False


def _same_leaf(given, prepared):
    if given is prepared:
        return True
    if not (is_array(given) and is_array(prepared)):
        return given == prepared
    a, b = as_numpy(given), as_numpy(prepared)
    # a NaN where the prepared value has one is that value, as for a kept copy (_equal_to_kept)
    return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc")


def _kept(leaf):
    """A copy of ``leaf`` as numpy where it is an array that can be written in place, else None."""
    if leaf.__class__ in (float, int, complex, bool) or not is_array(leaf):
        return None
    family = FAMILIES.get(family_of(leaf))
    if family is None or family.write is None:  # immutable arrays (JAX): identity says all
        return None
    return np.array(as_numpy(leaf), copy=True)


def _equal_to_kept(given, kept):
    if given.__class__ is np.ndarray:
        a = given
    elif is_array(given):
        a = as_numpy(given)
    else:
        return False
    if a.shape != kept.shape:
        return False
    if bool((a == kept).all()):
        return True
    return kept.dtype.kind in "fc" and np.array_equal(a, kept, equal_nan=True)


class _Held:
    """A same-point preparation's x or context value, as prepared: what a call's value must equal.

    With ``keep``, each leaf that can be written in place (a numpy or torch
    array) is copied, so that a value changed in place (the very object,
    other values) is told from the prepared one; ``compare`` costs one
    comparison of each such leaf per call. Without (a Cache, whose content
    does not matter; a preparation made with ``strict=False``), the prepared
    object itself passes.
    """

    __slots__ = ("value", "fixed", "single", "leaves", "kept")

    def __init__(self, value, keep):
        self.value = value
        self.single = is_array(value)
        self.leaves = [value] if self.single else _leaves(value)
        self.kept = tuple(_kept(leaf) for leaf in self.leaves) if keep else None
        # nothing in it can change in place: the prepared object itself is the prepared value
        self.fixed = not keep or (is_array(value) and self.kept[0] is None)

    def compare(self, given):
        """None when ``given`` holds the prepared values; "in place" when it is the prepared object,
        changed since; "values" when it is another object of other values."""
        if given is self.value and self.fixed:
            return None
        try:
            if self.kept is None:
                same = _same_values(given, self.value)
            elif self.single:
                kept = self.kept[0]
                same = (
                    _same_leaf(given, self.value) if kept is None else _equal_to_kept(given, kept)
                )
            else:
                leaves = [given] if is_array(given) else _leaves(given)
                same = len(leaves) == len(self.leaves) and all(
                    _same_leaf(g, p) if k is None else _equal_to_kept(g, k)
                    for g, p, k in zip(leaves, self.leaves, self.kept)
                )
        except Exception:  # noqa: BLE001 - values that cannot be compared are not the prepared ones
            same = False
        if same:
            return None
        return "in place" if given is self.value else "values"


def _leaves(value):
    return optree_module().tree_leaves(value, none_is_leaf=True)


def held_point(call, keep):
    """``(x, contexts)`` of a same-point call as :class:`_Held` values; with ``keep`` (a strict
    preparation), x's and each Constant's leaves that can change in place are kept as copies."""
    return (
        _Held(call.x, keep=keep),
        tuple(_Held(c.value, keep=keep and c.kind != "Cache") for c in call.contexts),
    )


def _rest(call, x_plan, y_plan, strict, point):
    """``rest(x, seeds, contexts) -> bool``: all that the plain attributes of :class:`Check` leave.

    A pytree x leaf by leaf; the seeds, a tuple of as many, each of its kind
    (cotangents of a pytree output checked against the output's plan, tangents
    that are pytrees against x's: a class test alone would pass any dict);
    as many contexts, each of its class, its value of its kind; for a
    same-point preparation, x's and the contexts' values (``point``, from
    :func:`held_point`). One frame, whatever
    the mix: seeds and context values are compared in one loop.
    """
    seeds, contexts = call.seeds, call.contexts
    tree_fits = x_plan.fits if x_plan is not None else None
    n_seeds = None if seeds is None else len(seeds)
    seed_kinds = (
        ()
        if seeds is None
        else tuple(
            _kind(
                s,
                y_plan.fits
                if y_plan is not None
                else x_plan.fits
                if x_plan is not None and not is_array(s)
                else None,
            )
            for s in seeds
        )
    )
    classes = tuple(c.__class__ for c in contexts)
    kinds = (*seed_kinds, *(_kind(c.value) for c in contexts))

    def at_point(x, contexts):
        x0, ctx0 = point
        try:
            return (
                x0.compare(x) is None
                and len(contexts) == len(ctx0)
                and all(h.compare(c.value) is None for c, h in zip(contexts, ctx0))
            )
        except AttributeError:  # not a context: the full comparison says what is wrong
            return False

    def rest(x, seeds, contexts):
        if not strict:  # a same-point preparation that compares the point only
            return at_point(x, contexts)
        if tree_fits is not None and not tree_fits(x):
            return False
        if seeds is None:
            if n_seeds is not None:
                return False
            values = ()
        elif seeds.__class__ is not tuple or len(seeds) != n_seeds:
            return False
        else:
            values = seeds
        if contexts or classes:
            if len(contexts) != len(classes) or any(
                c.__class__ is not k for c, k in zip(contexts, classes)
            ):
                return False
            values = (*values, *[c.value for c in contexts])
        for v, (cls, attr, shape, dtype, fits) in zip(values, kinds):
            if v.__class__ is not cls:
                return False
            if fits is not None:
                if not fits(v):
                    return False
            elif shape is not None:
                m = v if attr is None else getattr(v, attr)
                if m.shape != shape or not ((d := m.dtype) is dtype or d == dtype):
                    return False
        return point is None or at_point(x, contexts)

    return rest


class Check:
    """The one check of a preparation (see the module docstring): its fast form and, called, its full one.

    The fast form: a call of the operator ``op`` with ``has_aux`` passes
    with nothing more compared when ``off`` (a preparation that is neither
    strict nor same-point). Otherwise the common calls (an array x, no
    contexts, no seeds or one array seed) are decided by plain attributes:
    ``f``, ``backend``, ``x_class`` and, unless ``x_known`` (a float's class
    says all; a pytree is compared by its plan), x's shape and dtype as read
    from ``x_attr`` (None: x's own; its family's ``metadata`` attribute,
    such as a JAX array's ``aval``). ``plain`` says that nothing more is
    compared; ``one_seed`` that the one seed's ``seed_class``, shape and
    dtype are. Otherwise ``rest(x, seeds, contexts)`` compares a pytree x
    leaf by leaf, the seeds, the contexts and a same-point preparation's
    values. A call the fast form refuses is compared in full by
    ``check(call)``.

    Parameters
    ----------
    call : Call
        The call the preparation was made for.
    x_plan, y_plan : TreePlan or OutputPlan, optional
        The plans of a pytree x and of a pytree output (cotangents are
        compared with the output's).
    strict : bool
        Whether the signature is compared.
    """

    __slots__ = (
        "op",
        "has_aux",
        "strict",
        "off",
        "recorded",
        "point",
        "f",
        "backend",
        "x_class",
        "x_known",
        "x_attr",
        "x_shape",
        "x_dtype",
        "plain",
        "one_seed",
        "seed_class",
        "seed_attr",
        "seed_shape",
        "seed_dtype",
        "rest",
    )

    def __init__(self, call, x_plan, y_plan, strict):
        x, seeds, contexts = call.x, call.seeds, call.contexts
        self.op, self.has_aux, self.strict = call.op, call.has_aux, bool(strict)
        self.off = not strict and not call.same_point
        self.recorded = signature(call) if strict else None  # what a mismatch report compares
        self.point = held_point(call, keep=strict) if call.same_point else None
        self.f, self.backend, self.x_class = call.f, call.backend, x.__class__
        # a pytree x is compared by its plan, in rest
        self.x_known = x_plan is not None or not _has_metadata(x)
        self.x_attr, self.x_shape, self.x_dtype = (
            (None, None, None) if self.x_known else _shape_and_dtype(x)
        )
        # a same-point preparation compares values, in rest
        simple = x_plan is None and not contexts and not call.same_point
        self.plain = simple and seeds is None
        seed = seeds[0] if seeds is not None and len(seeds) == 1 else None
        self.one_seed = simple and y_plan is None and seed is not None and _has_metadata(seed)
        self.seed_class = seed.__class__
        self.seed_attr, self.seed_shape, self.seed_dtype = (
            _shape_and_dtype(seed) if self.one_seed else (None,) * 3
        )
        self.rest = _rest(call, x_plan, y_plan, strict, self.point)

    def __call__(self, call):
        """Raise :class:`~diffinterface.errors.PreparationMismatchError` unless ``call`` fits."""
        op = call.op
        if op is not self.op:
            raise PreparationMismatchError(
                f"prep: this preparation was made by prepare_{self.op.name}, "
                f"but it was passed to {op.name}; use prepare_{op.name}"
            )
        if call.has_aux is not self.has_aux:
            raise PreparationMismatchError(
                f"has_aux: this preparation was made with has_aux={self.has_aux}, but this call "
                f"has has_aux={call.has_aux}; pass has_aux={self.has_aux}, or prepare again with "
                f"has_aux={call.has_aux}"
            )
        if self.strict:
            report = mismatch_report(op.name, self.recorded, signature(call))
            if report is not None:
                raise PreparationMismatchError(report + _traced_hint(call.x))
        if self.point is not None:
            self._same_point(call)

    def _same_point(self, call):
        x0, ctx0 = self.point
        name = self.op.name
        prepared = f"prepare_{name}_same_point"
        again = (
            f"Prepare again with these values, or use prepare_{name} for calls at several points"
        )
        found = x0.compare(call.x)
        if found == "in place":
            raise PreparationMismatchError(
                f"x: changed in place since {prepared}, which holds what depends on x's values (it "
                f"keeps a copy of x to see this); this call's x is the prepared array with other "
                f"values. {again}"
            )
        if found is not None:
            raise PreparationMismatchError(
                f"x: this preparation ({prepared}) holds what depends on its own x; "
                f"this call's x has other values. {again}"
            )
        ctx = call.ctx
        if len(ctx) != len(ctx0):
            raise PreparationMismatchError(
                f"contexts: this preparation ({prepared}) was made with {len(ctx0)} contexts; this "
                f"call passes {len(ctx)}. {again}"
            )
        for i, (c, held) in enumerate(zip(ctx, ctx0)):
            found = held.compare(c)
            if found == "in place":
                raise PreparationMismatchError(
                    f"contexts[{i}]: changed in place since {prepared}, which holds what depends on "
                    f"its contexts' values (it keeps a copy of each Constant array to see this); this "
                    f"call's contexts[{i}] is the prepared object with other values. {again}"
                )
            if found is not None:
                raise PreparationMismatchError(
                    f"contexts[{i}]: this preparation ({prepared}) holds what depends on its "
                    f"contexts' values; this call's differ. {again}"
                )


def _traced_hint(x):
    """A line for a mismatch whose x is a traced value: the transform, and the preparation that fits."""
    family = traced_family(x)
    if family is None:
        return ""
    return (
        f"\nx is a traced {family.name} value (inside {family.traced_by}): prepare outside the "
        f"transform with a {family.name} array of x's shape and dtype, as the transform passes, and "
        "a backend that differentiates in its framework; a preparation made with another family's x "
        "does not fit"
    )
