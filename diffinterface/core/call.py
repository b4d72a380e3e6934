"""The one prepared-call path: every public operator function is decorated by :func:`prepared_call`.

A preparation of the operator, with no ``out=`` and no ``y=``, is served in
the public function's own frame:
the call is compared with the preparation's one check (one expression for
every operator, arrays and pytrees alike, see :mod:`diffinterface.core.check`),
then the prepared method runs.
Everything else leaves the fast path as a named
:class:`~diffinterface.core.preparation.Call`: no preparation, ``out=``,
``y=`` or a call the quick comparison refuses go to :func:`_call_slowly`,
which prepares when needed, compares in full (raising the mismatch that
lists every slot), and handles ``out=`` and ``y=``; an exception from f goes
to the explanation of core/boundary.py.
"""

from __future__ import annotations

from functools import wraps

from ..families import write_out
from .aux import AuxCapture, join_aux, split_aux
from .boundary import explain
from .prepare import prepare, require_has_aux
from .preparation import Call, Preparation
from .pytree import write_tree_out
from .registry import get_adapter
from .signature import same_function


def prepared_call(op, valued):
    """Decorator of an operator's public function: its prepared call is served in that function's own frame.

    The returned function takes the decorated one's arguments (``f, backend,
    x``, the seeds for seeded operators, the contexts, ``prep=``, ``out=``,
    ``y=``). A preparation of ``op`` with no ``out=`` and no ``y=`` is
    compared with the call by its one check (one expression for every
    operator, arrays and pytrees alike, see :mod:`diffinterface.core.check`),
    then its method runs: no other Python frame
    stands between the user and the adapter. A call the quick comparison
    refuses goes to :func:`_call_slowly` as a named :class:`Call`; anything
    else (no preparation, ``out=``, ``y=``) to the decorated function's body,
    which calls :func:`call`. A ``y=`` given to an operator without it reaches
    that body, whose own signature refuses it (TypeError naming the function).
    """
    seeded = op.seeds is not None

    def decorate(public):
        def run(f, backend, x, *args, prep=None, out=None, y=None, has_aux=False):
            # prep=None fails the class test too; an operator or has_aux the check refuses goes
            # to the body, whose full comparison raises
            if (
                prep.__class__ is Preparation
                and (check := prep.check).op is op
                and has_aux is check.has_aux
                and out is None
                and y is None
            ):
                if seeded:
                    if not args:  # no seeds: the body's signature says so
                        return public(
                            f,
                            backend,
                            x,
                            prep=prep,
                            **({"has_aux": has_aux} if has_aux is not False else {}),
                        )
                    seeds = args[0]
                    contexts = args[1:]
                else:
                    seeds = None
                    contexts = args
                if check.off or (
                    (f is check.f or same_function(f, check.f))
                    and (backend is check.backend or backend == check.backend)
                    and x.__class__ is check.x_class
                    and (
                        check.x_known
                        or (
                            (m := x if (attr := check.x_attr) is None else getattr(x, attr)).shape
                            == check.x_shape
                            and ((d := m.dtype) is check.x_dtype or d == check.x_dtype)
                        )
                    )
                    # plain: prepared without seeds or contexts (so an operator with seeds is never
                    # plain)
                    and (
                        check.plain
                        and not contexts
                        or check.one_seed
                        and not contexts
                        and seeds.__class__ is tuple
                        and len(seeds) == 1
                        and (t := seeds[0]).__class__ is check.seed_class
                        and (
                            m := t if (attr := check.seed_attr) is None else getattr(t, attr)
                        ).shape
                        == check.seed_shape
                        and ((d := m.dtype) is check.seed_dtype or d == check.seed_dtype)
                        or check.rest(x, seeds, contexts)
                    )
                ):
                    try:
                        if not contexts:
                            return (
                                prep.methods[valued](x)
                                if seeds is None
                                else prep.methods[valued](x, seeds)
                            )
                        values = [c.value for c in contexts]
                        method = prep.methods[valued]
                        return method(x, *values) if seeds is None else method(x, seeds, *values)
                    except Exception as error:
                        return _off_the_fast_path(
                            Call(
                                op,
                                f,
                                backend,
                                x,
                                seeds,
                                contexts,
                                None,
                                valued,
                                prep,
                                None,
                                has_aux,
                            ),
                            error,
                        )
                # the full comparison raises on a real mismatch, and lets through what only looked
                # different
                return _call_slowly(
                    Call(op, f, backend, x, seeds, contexts, None, valued, prep, None, has_aux)
                )
            # has_aux only when given: an operator family defined outside the package may not take
            # it
            extra = {"has_aux": has_aux} if has_aux is not False else {}
            if y is None:
                return public(f, backend, x, *args, prep=prep, out=out, **extra)
            return public(f, backend, x, *args, prep=prep, out=out, y=y, **extra)

        return wraps(public)(run)

    return decorate


def call(arguments):
    """Run the operator call ``arguments`` (a :class:`Call`) off the fast path.

    The body of every public operator function: what :func:`prepared_call`
    does not serve itself (no preparation, ``out=``, ``y=``) comes here, its
    arguments named; ``arguments.valued`` picks the value-and method.
    """
    require_has_aux(arguments.has_aux)
    return _call_slowly(arguments)


def _off_the_fast_path(call, error):
    """A prepared call whose method raised ``error`` (f's exception, most often).

    An exception is explained (core/boundary.py), unless it was a pytree
    output met for the first time: then the call goes on off the fast path.
    """
    if _learned_tree_output(error, call):
        return _call_slowly(call)
    _raise_explained(error, call)


def explained(error, call, backend):
    """The clearer error for ``error``, raised while ``backend`` ran ``call``
    (:func:`~diffinterface.core.boundary.explain`), or None."""
    # with has_aux, what f returns is the pair (y, aux): y is what is explained
    f = AuxCapture(call.f, None) if call.has_aux else call.f
    return explain(
        error,
        get_adapter(backend),
        f,
        call.x,
        call.ctx,
        call.y,
        trees=call.op.tree_output,
        has_aux=call.has_aux,
    )


def _raise_explained(error, call):
    """Raise ``error`` as :func:`~diffinterface.core.boundary.explain` rewrites it (chained), or as it is."""
    better = explained(error, call, call.prep.backend)
    if better is None:
        raise error
    raise better from error


def _learned_tree_output(error, call):
    """True when ``call.prep`` took the plan for a pytree output that its adapter met only at this call.

    An adapter that learns f's output from each call's forward pass
    (``output_from_each_call``, autograd's jacobian) is prepared without
    evaluating f, so a pytree output first shows up as that call's TypeError.
    Only then, on this error path, f's output is learned (one evaluation) and
    the preparation adopts the plan for that output tree: the caller's object
    keeps working, and array outputs never pay for this.
    """
    op, prep = call.op, call.prep
    if not (
        isinstance(error, TypeError)
        and prep.ytree is None
        and call.y is None
        and op.tree_output
        and op.listed_in(get_adapter(call.backend).capabilities.output_from_each_call)
    ):
        return False
    try:
        fresh = prepare(
            call, prep.strict, learn_output=True
        )  # has_aux: the call's, checked to be prep's
    except TypeError:  # not a pytree either: the original error stands
        return False
    if fresh.ytree is None:
        return False
    prep.adopt(fresh)
    return True


def _call_slowly(call):
    """Preparing when needed, checking, and handling ``out=`` and ``y=``."""
    op, prep, y, out, valued = call.op, call.prep, call.y, call.out, call.valued
    if prep is None:
        prep = prepare(call, strict=False, one_off=True)
        call = call._replace(prep=prep)
    elif not isinstance(prep, Preparation):
        raise TypeError(
            f"prep: expected the result of prepare_{op.name}(...); got {type(prep).__name__}"
        )
    else:
        prep.check(call)  # raises on a mismatch
    try:
        result = prep.plan.methods[1 if y is not None else valued](*call.arguments)
    except Exception as error:
        if _learned_tree_output(error, call):
            return _call_slowly(call)
        _raise_explained(error, call)
    if call.has_aux:  # y= is refused with has_aux at preparation: only out= to write
        if out is None:
            return result
        result, aux = split_aux(op, valued, result)
        return join_aux(op, valued, _written(call, prep, result), aux)
    return _written(call, prep, result)


def _written(call, prep, result):
    """``result`` with its derivatives written into ``out=`` and the value into ``y=`` (as given)."""
    op, x, y, out, valued = call.op, call.x, call.y, call.out, call.valued
    plan = prep.plan
    if plan.tree is None and plan.ytree is None:

        def write(o, r):
            return write_out(o, r, avoid=x)
    else:
        write = write_tree_out
    if y is None and not valued:
        return result if out is None else write(out, result)
    n_values = op.n_values
    if y is not None:
        result = (write_out(y, result[0], "y"), *result[1:])
    if out is not None:
        derivatives = result[n_values:]
        if len(derivatives) == 1:
            derivatives = (write(out, derivatives[0]),)
        else:
            derivatives = write(out, tuple(derivatives))
        result = (*result[:n_values], *derivatives)
    if (
        y is not None and not valued
    ):  # only the value-and method gives the value that must land in y
        return result[1] if len(result) == 2 else result[1:]
    return result
