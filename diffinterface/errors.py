"""Exceptions raised by diffinterface, and the texts of the errors raised at the boundary of ``f``.

    >>> import diffinterface as di
    >>> issubclass(di.GraphBreakError, di.DifferentiationError)
    True
"""


class PreparationMismatchError(ValueError):
    """A prepared call's arguments differ from those the preparation was made for."""


class XSignatureChangedError(PreparationMismatchError):
    """A prepared method that checks its ``x`` itself (``Impl(checks_x=True)``) met another shape or dtype.

    Adapters raise it (JAX's compiled functions do, when JAX traces them again);
    the core then compares the whole call with the preparation and raises a
    :class:`PreparationMismatchError` naming every slot.
    """


class MissingBackendError(ImportError):
    """The framework behind a backend selector is not installed."""


class UnsupportedError(NotImplementedError):
    """A backend cannot do what was asked (for instance mutating functions)."""


class DifferentiationError(RuntimeError):
    """``f`` ran, but the backend's framework could not differentiate what it computed."""


class GraphBreakError(DifferentiationError):
    """``f``'s output does not depend on ``x`` through the framework's graph, although f was called with x.

    Raised instead of returning a derivative of zeros that would be wrong.
    """


class TracedArrayError(DifferentiationError, TypeError):
    """``f`` called something that cannot take the framework's traced arrays (numpy on a tracer, ``float()``)."""


#: the fix for both errors above, quoted in their messages
FIX = (
    "Write f with the array namespace of its input (xp = di.array_namespace(x); xp.sin(x), not np.sin(x)), "
    "keep every computation on x inside that namespace, and pass values that must not be differentiated "
    "as di.Constant(value) after x."
)

GRAPH_BREAK_CAUSES = (
    ".item(), float() or int() on a value computed from x; .detach() or .numpy(); numpy functions "
    "applied to x; writing into a buffer that is not differentiated (a numpy array, a tensor created "
    "without the graph)"
)


def function_name(f):
    """A short name for ``f`` in messages: its qualified name, or its type."""
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    return name if isinstance(name, str) else type(f).__name__


def graph_break(f, backend, framework):
    """The :class:`GraphBreakError` for ``f`` whose output the ``framework`` cannot trace back to x."""
    return GraphBreakError(
        f"f: {function_name(f)} was called with x by {backend!r}, but its output does not depend on x "
        f"through {framework}'s graph, so its derivative is unknown (not zero). The usual causes: "
        f"{GRAPH_BREAK_CAUSES}. {FIX} (A function that truly ignores x, such as 0 * x.sum(), differentiates "
        "to zeros.)"
    )


def traced_array(f, backend, received, error):
    """The :class:`TracedArrayError` for ``f`` that raised ``error`` on the traced array it ``received``."""
    return TracedArrayError(
        f"f: {function_name(f)} raised {type(error).__name__} while {backend!r} differentiated it: it called "
        f"a function that cannot take the {received} it received as x ({error}). {FIX}"
    )
