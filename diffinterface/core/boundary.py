"""The boundary of ``f``: what it may return, and what an error it raised while being differentiated means.

Every public operator runs ``f`` through :mod:`diffinterface.core.call`,
which catches what ``f`` raises (Python's exceptions cost nothing until one is
raised, so the prepared fast path pays nothing) and hands it to
:func:`explain`. Two mistakes are common enough to be named with their fix:

- ``f`` returned something that is not an array or a number (a string,
  ``None``, a list): a TypeError naming ``f`` and what it returned, the same
  on every backend, found by evaluating ``f`` once at ``x`` after the failure;
- ``f`` called numpy (or ``float()``, ``.item()``, ``.numpy()``) on the
  framework's traced array: a :class:`~diffinterface.TracedArrayError`
  naming ``f``, the backend, the traced type and the fix
  (``di.array_namespace(x)``, ``di.Constant``). Each adapter recognizes its
  framework's errors (:meth:`~diffinterface.core.adapter.Adapter.is_traced_array_error`);
  an error raised from inside numpy's own Python code while a framework traced
  ``x`` counts too;
- ``f`` used something its framework cannot do although the array API allows
  it (the limits its array family declares, ``Family.limits``: negative-step
  slices in one, integer-array indexing in another): a ValueError naming ``f``, the backend, what is not supported and the way
  around it.

    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: "abc", di.AutoFiniteDiff(), np.ones(2))
    Traceback (most recent call last):
    ...
    TypeError: f: expected f to return an array or a number; it returned str object (f is <lambda>)
"""

from __future__ import annotations

import numpy as np

from ..families import FAMILIES, FLOAT_DTYPES, describe, dtype_name, family_of, is_array
from ..errors import (
    DifferentiationError,
    MissingBackendError,
    PreparationMismatchError,
    UnsupportedError,
    function_name,
    traced_array,
)
from .tree_key import optree_module

#: errors diffinterface raises itself: never reinterpreted
_OWN = (DifferentiationError, PreparationMismatchError, MissingBackendError, UnsupportedError)


def _is_tree_of_arrays(value):
    """True for a pytree output the operators take: real floating arrays, not only plain numbers."""
    if is_array(value):
        return False
    try:
        leaves = optree_module().tree_leaves(value)
    except Exception:  # noqa: BLE001 - not a tree (or no optree): f's output is the cause
        return False
    if not leaves or all(leaf.__class__ in (float, int) for leaf in leaves):
        return False  # a list of plain numbers is an output that forgot to be an array
    return all(
        is_array(leaf) and (leaf.__class__ is float or dtype_name(leaf) in FLOAT_DTYPES)
        for leaf in leaves
    )


def non_array_output(f, value, has_aux=False):
    """The TypeError for ``f`` that returned ``value``, which is not an array or a number.

    A pair returned without ``has_aux`` is most likely ``(y, aux)``: the message says so.

    >>> non_array_output(max, (1.0, "aux"))
    TypeError('f: expected f to return an array or a number; it returned tuple object (f is max). If f returns (y, aux), pass has_aux=True')
    """
    hint = (
        ". If f returns (y, aux), pass has_aux=True"
        if not has_aux and isinstance(value, tuple) and len(value) == 2
        else ""
    )
    return TypeError(
        f"f: expected f to return an array or a number; it returned {describe(value)} "
        f"(f is {function_name(f)}){hint}"
    )


def check_output(f, value, has_aux=False):
    """``value`` when it is an array or a number; otherwise the TypeError naming ``f`` (``has_aux``:
    ``value`` is the y of f's pair)."""
    if not is_array(value):
        raise non_array_output(f, value, has_aux)
    return value


def declared_limits(frameworks=None):
    """``(framework, words in its error, what is not supported, the way around it)`` for each limit
    the array families of ``frameworks`` (None: every registered family) declare (``Family.limits``)."""
    return tuple(
        (name, *limit)
        for name, family in FAMILIES.items()
        if frameworks is None or name in frameworks
        for limit in family.limits
    )


def framework_limit(error, adapter, frameworks, f):
    """The ValueError naming a declared limit of ``frameworks`` (:func:`declared_limits`) that ``error``
    shows, or None."""
    # the framework's own error may be in the chain of another raised while handling it
    # (TensorFlow's @ falls back to numpy, which cannot take a traced tensor), or of a refusal an
    # inner layer made
    texts = []
    for _ in range(4):
        if error is None:
            break
        texts.append(str(error))
        error = error.__cause__ or error.__context__
    for framework, words, what, around in declared_limits(frameworks):
        found = [text for text in texts if words in text]
        if found:
            return ValueError(
                f"f: {adapter.backend} cannot differentiate {function_name(f)}: {framework} does not "
                f"support {what} ({framework}: {found[-1]}); {around}"
            )
    return None


def _raised_inside_another_family(error, frameworks):
    """True when ``error`` was raised inside the Python code of another array family than ``frameworks``'.

    The innermost frame of its traceback is read: numpy's code under any
    framework, or one framework's Python code while another traces ``x`` (the
    families registry says which modules are whose). A function written in C
    leaves no frame of its own: the adapter recognizes its framework's
    errors about such calls (``Adapter.is_traced_array_error``).
    """
    others = {
        module
        for name, family in FAMILIES.items()
        if name not in frameworks
        for module in family.modules
    }
    # JAX strips its own frames from the error it raises; the error it caught (the context) keeps
    # them
    for _ in range(3):
        if error is None:
            return False
        tb, last = error.__traceback__, None
        while tb is not None:
            last, tb = tb, tb.tb_next
        if last is not None and last.tb_frame.f_globals.get("__name__", "").split(".")[0] in others:
            return True
        error = error.__cause__ or error.__context__
    return False


def explain(error, adapter, f, x, ctx, y, trees=False, has_aux=False):
    """A clearer exception for ``error`` raised while ``adapter`` differentiated ``f`` at ``x``, or None.

    Only called once ``error`` was raised; the caller raises the result ``from error``.
    ``trees``: the operator takes pytree outputs (jacobian, pushforward,
    pullback), so a tree of arrays returned by ``f`` is not the cause.
    ``has_aux``: the call was made with ``has_aux=True`` (``f`` here returns its y), so no pair
    ``f`` returned is blamed on a forgotten ``has_aux``.
    """
    if isinstance(error, _OWN) or not isinstance(
        error, (TypeError, ValueError, RuntimeError, AttributeError)
    ):
        return None
    value = None
    if y is None:
        # f may have failed because of what it returned: look at it, outside any framework, on
        # copies (f may write into its arguments, and the user's arrays are never changed)
        try:
            value = f(*_copies((x, *ctx)))
        except Exception:  # noqa: BLE001 - f cannot run on x itself: the framework's error stands
            pass
        else:
            if not is_array(value) and not (trees and _is_tree_of_arrays(value)):
                return non_array_output(f, value, has_aux)
    # a wrapper (SecondOrder, AutoSparse) runs f through the frameworks of its parts
    # and a backend computing in the namespace of x's family (traceable_families) through its framework
    family = _family_of_x(x, adapter)
    tracing = [
        part
        for part in adapter.parts()
        if part.capabilities.framework is not None or family in part.capabilities.traceable_families
    ]
    if not tracing:
        return None
    frameworks = {part.capabilities.framework or family for part in tracing}
    limit = framework_limit(error, adapter, frameworks, f)
    if limit is not None:
        return limit
    for part in tracing:
        if part.is_traced_array_error(error):
            return traced_array(f, adapter.backend, part.capabilities.traced_array_name, error)
    if (
        _raised_inside_another_family(error, frameworks)
        or any(
            family.refuses_foreign_array(error)
            for name, family in FAMILIES.items()
            if name not in frameworks
        )
        or _of_another_framework(value, frameworks)
    ):
        return traced_array(f, adapter.backend, tracing[-1].capabilities.traced_array_name, error)
    return None


def _of_another_framework(value, frameworks):
    """True when f's ``value`` is an array of a framework other than ``frameworks`` (its functions
    took x's values out of the graph)."""
    return value is not None and is_array(value) and family_of(value) not in {"numpy", *frameworks}


def _copies(arguments):
    """Fresh arrays of the same families with the values of ``arguments``' array leaves."""

    def copy(leaf):
        if not is_array(leaf) or isinstance(leaf, (int, float, complex)):
            return leaf
        family = FAMILIES[family_of(leaf)]
        return family.from_numpy(np.array(family.to_numpy(leaf), copy=True), like=leaf)

    return optree_module().tree_map(copy, arguments, none_is_leaf=True)


def _family_of_x(x, adapter):
    """The family of x (an array or a pytree's first array leaf) where some part of ``adapter``
    computes in the namespace of a family (``traceable_families``); else None, unread."""
    if not any(part.capabilities.traceable_families for part in adapter.parts()):
        return None
    if is_array(x):
        return family_of(x)
    leaves = [leaf for leaf in optree_module().tree_leaves(x) if is_array(leaf)]
    return family_of(leaves[0]) if leaves else None


__all__ = ["check_output", "explain", "function_name", "non_array_output"]
