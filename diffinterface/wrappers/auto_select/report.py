"""What an ``AutoSelect`` preparation chose, and why: :func:`explain` and :func:`selected_backend`."""

from __future__ import annotations

from ...core import Preparation
from ...docstrings import shared_sections
from .selection import SelectedImpl

#: what explain and selected_backend both take
_SECTIONS = {
    "prep": """Parameters
----------
prep : Preparation
    A preparation made with ``di.AutoSelect(...)`` as its backend.""",
}


def _selection(prep, name):
    if not isinstance(prep, Preparation):
        raise TypeError(
            f"prep: {name} expected a preparation made with di.AutoSelect(...) "
            f"(di.prepare_<operator>(f, di.AutoSelect(), x)); got {type(prep).__name__}"
        )
    impl = prep.impl
    if not isinstance(impl, SelectedImpl):
        raise TypeError(
            f"prep: {name} expected a preparation made with di.AutoSelect(...); got {prep!r}, "
            "which was not selected"
        )
    return impl.selection


@shared_sections(_SECTIONS)
def explain(prep):
    """The table of what an ``AutoSelect`` preparation tried and chose.

    $prep

    Returns
    -------
    Selection
        Its ``str`` is the table: each candidate, whether it prepared (or the
        error it raised), whether its result agreed with the majority, its
        median time per call, and the choice. Its ``rows`` hold the same as
        attributes (``backend``, ``status``, ``reason``, ``median``).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoSelect([di.AutoFiniteDiff(), di.AutoTorch(mode="reverse")], time_budget=0.01)
    >>> prep = di.prepare_gradient(lambda x: np.sum(x ** 2), backend, np.ones(3))
    >>> print(di.explain(prep))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    AutoSelect for gradient: agreement within rtol=1e-05, ... timed rounds
    candidate                  prepared  agreed  median per call
    AutoFiniteDiff()           yes       yes     ... <- chosen
    AutoTorch(mode='reverse')  no        -       -   preparation raised TracedArrayError: f: <lambda> raised ...
    chosen: AutoFiniteDiff() (the fastest median of those that agree)
    """
    return _selection(prep, "explain")


@shared_sections(_SECTIONS)
def selected_backend(prep):
    """The backend an ``AutoSelect`` preparation chose.

    $prep

    Returns
    -------
    AbstractBackend
        The chosen candidate's selector; a preparation made with it directly
        runs the same methods as ``prep``.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoSelect([di.AutoTorch(), di.AutoFiniteDiff()], time_budget=0.01)
    >>> prep = di.prepare_jacobian(lambda x: np.cumsum(x), backend, np.ones(3))  # numpy code
    >>> di.selected_backend(prep)
    AutoFiniteDiff(method='central', rel_step=None, abs_step=None)
    """
    return _selection(prep, "selected_backend").chosen
