"""Tolerances the kit compares results with: per dtype, per order, exact or approximate results
(as the backend's adapter declares them, ``capabilities.approximate``)."""

from __future__ import annotations

from ..core import get_adapter
from ..errors import MissingBackendError

EXACT_TOLERANCES = {"float64": (1e-9, 1e-11), "float32": (2e-5, 2e-6)}
#: (rtol, atol) per dtype for finite differences, first order (central float32 is ~1e-3 relative)
FINITE_DIFFERENCE_TOLERANCES = {"float64": (1e-5, 1e-7), "float32": (5e-3, 2e-3)}
#: (rtol, atol) per dtype for second order with finite differences in the chain
FINITE_DIFFERENCE_SECOND_ORDER_TOLERANCES = {"float64": (1e-3, 1e-5), "float32": (1e-1, 5e-2)}


def is_approximate(backend):
    """True when ``backend``'s adapter declares approximate results (``capabilities.approximate``:
    finite differences, itself or inside ``AutoSparse``, ``AutoSelect`` or ``SecondOrder``).

    >>> import diffinterface as di
    >>> is_approximate(di.SecondOrder(di.AutoFiniteDiff(), di.AutoZeroReverse()))
    True
    """
    try:
        return get_adapter(backend).capabilities.approximate
    except MissingBackendError:  # not installed: it computes nothing to compare
        return False


def default_tolerances(backend, dtype, order=1):
    """``(rtol, atol)`` the kit uses for ``backend`` on ``dtype`` results of an ``order`` operator.

    Exact differentiation gets tight tolerances; a backend whose adapter
    declares approximate results (``Capabilities.approximate``: finite
    differences, itself or inside ``AutoSparse``, ``AutoSelect`` or
    ``SecondOrder``) gets looser ones, looser still at second order.

    Parameters
    ----------
    backend : AbstractBackend
        The selector whose results are compared.
    dtype : str
        The results' dtype name, ``"float64"`` or ``"float32"`` (any other
        name gets the float32 tolerances).
    order : int, default 1
        The operator's order, 1 or 2.

    Returns
    -------
    tuple of float
        ``(rtol, atol)``, as ``numpy.allclose`` takes them.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import default_tolerances
    >>> default_tolerances(di.AutoFiniteDiff(), "float64")
    (1e-05, 1e-07)
    >>> default_tolerances(di.AutoZeroForward(), "float32", order=2)
    (2e-05, 2e-06)
    """
    if is_approximate(backend):
        table = (
            FINITE_DIFFERENCE_TOLERANCES
            if order == 1
            else FINITE_DIFFERENCE_SECOND_ORDER_TOLERANCES
        )
    else:
        table = EXACT_TOLERANCES
    rtol, atol = table.get(dtype, table["float32"])
    accuracy = float64_accuracy(backend) if dtype == "float64" else None
    if accuracy is not None:
        # results of functions computed to ``accuracy``, through a few operations (second order)
        rtol, atol = max(rtol, 30 * order * accuracy), max(atol, 3 * order * accuracy)
    return rtol, atol


def float64_accuracy(backend):
    """The relative accuracy ``backend``'s adapter declares for float64 results where it is worse than
    float64's (``capabilities.float64_accuracy``), else None."""
    try:
        declared = get_adapter(backend).capabilities.float64_accuracy
    except MissingBackendError:
        return None
    return None if declared is None else declared[0]


def over_finite_differences(backend, rtol, atol, method="central"):
    """``(rtol, atol)`` for float64 finite differences (default steps of ``method``) taken of, or
    under, ``backend``'s derivatives: evaluations accurate to the backend's declared
    ``float64_accuracy`` only lose it divided by the step in a difference quotient.

    >>> import diffinterface as di
    >>> over_finite_differences(di.AutoJAX(), 1e-4, 1e-6)
    (0.0001, 1e-06)
    """
    accuracy = float64_accuracy(backend)
    if accuracy is None:
        return rtol, atol
    from ..backends.finitediff.steps import default_rel_step

    lost = accuracy / default_rel_step(method, "float64")
    return max(rtol, lost), max(atol, lost)


def pick(override, dtype, default):
    if override is None:
        return default
    if isinstance(override, dict):
        return override.get(dtype, default)
    return float(override)
