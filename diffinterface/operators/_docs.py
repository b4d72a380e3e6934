"""Docstrings of the public operators, written once from the operator table.

Each operator module calls :func:`document` with what is particular to its
family (a summary, what ``x`` may be, what the results are, one runnable
example); the parameters, keywords, errors and cross references follow from
the family's row of :data:`diffinterface.core.OPERATORS`, so the three
functions of every family (``prepare_op``, ``op``, its value form) read the same.
"""

from __future__ import annotations

from functools import lru_cache

_SEEDS = {
    "tangents": "tangents : tuple of arrays\n    A batch of one or more tangents, each shaped like ``x`` (same family and dtype).",
    "cotangents": "cotangents : tuple of arrays\n    A batch of one or more cotangents, each shaped like ``f(x)`` (same family and dtype).",
}


def _parameters(op, x, *, prepare, same_point=False):
    f = "f : callable\n    ``f(x, *contexts)``, returning an array (or a number)."
    if op.two_argument:
        f += (
            " With ``y=``, a two-argument ``f(y, x, *contexts)`` that writes its output into ``y``."
        )
    lines = [
        f,
        "backend : backend selector\n    Which library differentiates, and how: a framework's selector "
        "(``di.AutoJAX()``, ``di.AutoTorch()``, ``di.AutoTensorFlow()``, ``di.AutoAutograd()``, "
        "``di.AutoFiniteDiff()``), one made of others (``di.SecondOrder(outer, inner)``, "
        "``di.AutoSparse(dense_backend)``, ``di.AutoSelect(candidates)``), or one registered with "
        "``di.register_backend``; every selector is on the reference's Backends and Wrappers pages.",
        f"x : {x}\n    The point. Results come back in x's array family, dtype and device; x is never modified.",
    ]
    if op.seeds:
        lines.append(_SEEDS[op.seeds])
    lines.append(
        "*contexts : di.Constant or di.Cache\n    Extra arguments passed to ``f`` after ``x``, not "
        "differentiated. A Constant's value may change between prepared calls."
    )
    if prepare:
        if op.two_argument and not same_point:
            lines.append(
                "y : array, optional\n    The output buffer of a two-argument ``f``; its shape gives the output's."
            )
        lines.append(
            "strict : bool, default True\n    Every prepared call checks that its arguments fit this preparation "
            "(the function object, the backend, x's type, shape and dtype"
            + (", the seeds' count, shapes and dtypes" if op.seeds else "")
            + ", the contexts' kinds) and raises ``PreparationMismatchError`` otherwise. ``strict=False`` "
            "skips the check, at your own risk: a call that does not fit may return wrong results."
        )
        if not same_point:
            lines.append(_HAS_AUX + " The calls must pass the same setting.")
        return lines
    lines.append(
        f"prep : Preparation, optional\n    The result of ``prepare_{op.name}`` with arguments like these. "
        "Without it the call prepares, then runs."
    )
    lines.append(
        "out : array or tuple, optional\n    Buffers (same family, shape and dtype as the derivatives; a tuple "
        "for several, None entries allowed) written in place and returned."
    )
    if op.two_argument:
        lines.append(
            "y : array, optional\n    The output buffer of a two-argument ``f``; holds ``f(x)`` afterwards."
        )
    lines.append(_HAS_AUX)
    return lines


_HAS_AUX = (
    "has_aux : bool, default False\n    ``f`` returns ``(y, aux)``: ``y`` is differentiated, ``aux`` (any pytree) is "
    "returned as computed at x. The plain operator then returns ``(result, aux)``, the value form "
    "``((value, aux), ...)`` (``gradient_and_hvp``: ``((gradient, hvps), aux)``), as JAX does."
)


@lru_cache(maxsize=None)
def _wrapped(entry):
    """``"name : type\n    description"`` with the description wrapped at 88 columns.

    Cached: most entries are the same in every family, and wrapping them is most of
    what importing the operators costs. Words are not broken at hyphens (none of
    these texts needs it, and the simpler split is faster).
    """
    head, _, description = entry.partition("\n")
    if not description:
        return entry
    return head + "\n" + _fill(description, 88, "    ")


def _fill(text, width, indent=""):
    """``text``'s words on lines of at most ``width`` characters, each line begun with ``indent``.

    What ``textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent,
    break_on_hyphens=False)`` gives for these texts (no word is longer than a line), at a
    fraction of its cost: the operators' docstrings are written when the package is imported.

    >>> print(_fill("one two three", 9, "  "))
      one two
      three
    """
    lines, line = [], ""
    for word in text.split():
        if line and len(indent) + len(line) + 1 + len(word) > width:
            lines.append(indent + line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(indent + line)
    return "\n".join(lines)


def _section(title, lines):
    return [title, "-" * len(title), *(_wrapped(line) for line in lines), ""]


def _raises(op, *, prepare):
    lines = [
        "TypeError, ValueError\n    Bad input, naming the argument: x not a real floating-point array of a family "
        "the backend accepts"
        + (", or not a scalar" if op.scalar_x else "")
        + (", f not returning a scalar" if op.scalar_y else "")
        + (f", {op.seeds} not a tuple shaped as stated" if op.seeds else "")
        + ("" if prepare else ", an ``out=`` buffer of the wrong family, shape or dtype")
        + ".",
    ]
    if not prepare:
        lines.append(
            "PreparationMismatchError\n    ``prep`` was made by another operator, or (checked preparations) "
            "for other arguments; the message lists every slot."
        )
    if op.two_argument:
        lines.append(
            "UnsupportedError\n    ``y=`` on a backend that cannot differentiate two-argument functions."
        )
    lines.append(
        "MissingBackendError\n    The backend's framework is not installed (the message names the pip extra)."
    )
    return lines


def _docstring(summary, body, op, x, returns, example, *, prepare, see_also, same_point=False):
    lines = [summary, ""]
    if body:
        lines += [_fill(body, 88), ""]
    lines += _section("Parameters", _parameters(op, x, prepare=prepare, same_point=same_point))
    lines += _section("Returns", returns)
    lines += _section("Raises", _raises(op, prepare=prepare))
    lines += ["See Also", "--------", ", ".join(see_also), ""]
    lines += ["Examples", "--------", *example.strip("\n").splitlines(), ""]
    return "\n".join(lines).rstrip() + "\n"


def document(
    op, prepare_function, plain, valued, *, summary, x, result, example, valued_summary=None
):
    """Write the docstrings of one family's three public functions.

    ``result`` describes what the plain operator returns; the value form
    returns, in the order of ``op.valued_returns``, the value ``f(x)``, the
    first derivative and (second order) the plain result.
    """
    first = {1: result, 2: "the first derivative (the gradient, or the derivative for a scalar x)"}[
        op.order
    ]
    described = {
        "value": "``f(x)``: for a scalar-valued f, a 0-d array of x's family and dtype",
        "first": first,
        "second": result,
    }
    # "name : type" lines, as the NumPy docstring standard reads Returns entries
    names = {
        "value": "value",
        "first": op.name if op.order == 1 else "first_derivative",
        "second": op.name,
    }

    def entry(field):
        kind = "tuple" if described[field].startswith("tuple") else "array"
        return f"{names[field]} : {kind}\n    {described[field]}"

    plain_returns = [entry(op.plain_returns)]
    valued_returns = [entry(field) for field in op.valued_returns]
    plain.__doc__ = _docstring(
        summary,
        None,
        op,
        x,
        plain_returns,
        example,
        prepare=False,
        see_also=[f"prepare_{op.name}", op.valued],
    )
    valued.__doc__ = _docstring(
        valued_summary
        or f"``{op.name}`` together with ``f(x)``, from the same pass (no second evaluation).",
        None,
        op,
        x,
        valued_returns,
        example,
        prepare=False,
        see_also=[op.name, f"prepare_{op.name}"],
    )
    prepare_function.__doc__ = _docstring(
        f"Prepare ``{op.name}`` (and ``{op.valued}``) for arguments like these.",
        "Decides once what every call can reuse: the output's shape and dtype, seeds and batches, "
        "compiled functions (JAX), buffers. Pass the result as ``prep=``; preparing at one point and "
        "calling at others of the same shapes and dtypes is the intended use.",
        op,
        x,
        ["Preparation\n    Pass it as ``prep=`` to the calls."],
        example,
        prepare=True,
        see_also=[op.name, op.valued],
    )


def document_same_point(op, prepare_function, *, example):
    """Write the docstring of ``prepare_<op>_same_point``."""
    prepare_function.__doc__ = _docstring(
        f"Prepare ``{op.name}`` for many {op.seeds} at this one ``x`` (and these contexts).",
        "Computes once what depends only on x: a linearization (JAX), a recorded graph kept for many "
        "backward passes (torch, autograd), so that each call runs the part that depends on the seeds only. "
        f"Pass the result as ``prep=`` to ``{op.name}`` or ``{op.valued}`` with the same x and contexts (the "
        "very objects, or equal values); another x raises ``PreparationMismatchError``. Changing x in place "
        "after preparing is your risk: the results stay those at the prepared values. Backends without "
        "such a recipe give the ordinary preparation, with the same check.",
        op,
        "array or pytree",
        ["Preparation\n    Pass it as ``prep=`` to the calls at this x."],
        example,
        prepare=True,
        see_also=[f"prepare_{op.name}", op.name],
        same_point=True,
    )
