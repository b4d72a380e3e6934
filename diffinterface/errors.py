"""Exceptions raised by diffinterface, and the texts of the errors raised at the boundary of ``f``.

>>> import diffinterface as di
>>> issubclass(di.GraphBreakError, di.DifferentiationError)
True
"""


class PreparationMismatchError(ValueError):
    """A prepared call's arguments differ from those the preparation was made for.

    A ``ValueError``. The message lists every slot of the preparation's key (the
    function object, the backend, x's type, shape and dtype, the seeds, the
    contexts' kinds) as matching or not, with the prepared and the given value.
    Prepare again for the new arguments, or call without ``prep=``.

    Attributes
    ----------
    args : tuple of str
        ``(message,)``: one line per slot of the preparation's key, marked as
        matching or not, with the prepared and the given value.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x ** 2).sum()
    >>> prep = di.prepare_gradient(f, di.AutoFiniteDiff(), np.ones(3))
    >>> try:
    ...     di.gradient(f, di.AutoFiniteDiff(), np.ones(4), prep=prep)
    ... except di.PreparationMismatchError as error:
    ...     print(type(error).__name__, isinstance(error, ValueError))
    PreparationMismatchError True
    """


class MissingBackendError(ImportError):
    """The framework behind a backend selector is not installed.

    An ``ImportError`` whose message names the pip extra that installs the
    framework (``pip install "diffinterface[jax]"``). ``di.check_available``
    answers the same question without raising.

    Attributes
    ----------
    args : tuple of str
        ``(message,)``, naming the selector and the pip extra to install.
    name : str or None
        The module that could not be imported, as on every ``ImportError``.

    Examples
    --------
    >>> import diffinterface as di
    >>> issubclass(di.MissingBackendError, ImportError)
    True
    >>> di.check_available(di.AutoFiniteDiff())
    True
    """


class UnsupportedError(NotImplementedError):
    """A backend cannot do what was asked (for instance mutating functions).

    A ``NotImplementedError``; the message names the backend and the
    alternatives. ``di.check_inplace`` says beforehand whether a backend
    takes a two-argument ``f(y, x)`` or writes into a ``Cache``.

    Attributes
    ----------
    args : tuple of str
        ``(message,)``, naming the backend, what it cannot do and the
        backends or options that can.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> def f(y, x):
    ...     y[:] = 2 * x
    >>> try:
    ...     di.jacobian(f, di.AutoJAX(), np.ones(2), y=np.zeros(2))
    ... except di.UnsupportedError as error:
    ...     print(type(error).__name__)
    UnsupportedError
    >>> di.check_inplace(di.AutoFiniteDiff())
    True
    """


class DifferentiationError(RuntimeError):
    """``f`` ran, but the backend's framework could not differentiate what it computed.

    A ``RuntimeError``; the base class of :class:`GraphBreakError` and :class:`TracedArrayError`:
    catching it catches both. It is raised instead of a derivative that would
    be silently wrong (zeros, for instance).

    Attributes
    ----------
    args : tuple of str
        ``(message,)``, naming ``f``, the backend and the fix.
    __cause__ : BaseException or None
        The framework's own exception, where one was raised.

    Examples
    --------
    >>> import diffinterface as di
    >>> issubclass(di.GraphBreakError, di.DifferentiationError), issubclass(di.TracedArrayError, di.DifferentiationError)
    (True, True)
    """


class GraphBreakError(DifferentiationError):
    """``f``'s output does not depend on ``x`` through the framework's graph, although f was called with x.

    A :class:`DifferentiationError`, raised instead of returning a derivative
    of zeros that would be wrong. The usual causes: ``.item()``, ``float()``, ``.detach()`` or ``.numpy()`` on
    a value computed from x, or numpy functions applied to x. Write ``f`` with
    ``xp = di.array_namespace(x)`` and keep every computation on x in it.

    Attributes
    ----------
    args : tuple of str
        ``(message,)``, naming ``f``, the backend, the usual causes and the
        fix.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> def f(x):
    ...     return (x.detach() ** 2).sum()  # detach() cuts the output off torch's graph
    >>> try:
    ...     di.gradient(f, di.AutoTorch(), np.ones(2))
    ... except di.DifferentiationError as error:
    ...     print(type(error).__name__)
    GraphBreakError
    """


class TracedArrayError(DifferentiationError, TypeError):
    """``f`` called something that cannot take the framework's traced arrays (numpy on a tracer, ``float()``).

    Both a :class:`DifferentiationError` and a ``TypeError``. The message names
    the function and the fix: ``xp = di.array_namespace(x)`` instead of numpy,
    and ``di.Constant`` for values that are not differentiated.

    Attributes
    ----------
    args : tuple of str
        ``(message,)``, naming ``f``, the traced array it received and the fix.
    __cause__ : BaseException or None
        The exception ``f`` raised on the traced array, where it is kept.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> def f(x):
    ...     return np.sum(np.asarray(x) ** 2)  # numpy cannot read a JAX tracer
    >>> try:
    ...     di.gradient(f, di.AutoJAX(), np.ones(2))
    ... except di.TracedArrayError as error:
    ...     print(type(error).__name__)
    TracedArrayError
    """


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
