"""Building the cases (backends × scenarios × array families) and running them: ``test_differentiation``.

>>> import diffinterface as di
>>> from diffinterface.testing import default_scenarios, test_differentiation
>>> report = test_differentiation(di.AutoFiniteDiff(), default_scenarios(operators="gradient"))
>>> report.ok, len(report.passed)
(True, 5)
"""

from __future__ import annotations

import os

from ..core import get_adapter
from ..errors import MissingBackendError
from ..frozen import changed_fields
from ..selectors import AbstractBackend
from .cases import Case
from .families import CONVERTIBLE_FAMILIES
from .report import Report
from .scenarios import Scenario


def _as_backend_dict(backends):
    """``backends`` as {id: selector}: a selector, a list of selectors, or a dict."""
    if isinstance(backends, AbstractBackend):
        return {_default_id(backends): backends}
    if isinstance(backends, dict):
        for key, value in backends.items():
            if not isinstance(value, AbstractBackend):
                raise TypeError(
                    f"backends[{key!r}]: expected a backend selector such as di.AutoJAX(); got {value!r}"
                )
        return dict(backends)
    if isinstance(backends, (list, tuple)):
        result = {}
        for i, b in enumerate(backends):
            if not isinstance(b, AbstractBackend):
                raise TypeError(
                    f"backends[{i}]: expected a backend selector such as di.AutoJAX(); got {b!r}"
                )
            result[_default_id(b)] = b
        return result
    raise TypeError(
        f"backends: expected a backend selector, a list of selectors or a dict id -> selector; got {type(backends).__name__}"
    )


def _default_id(backend):
    """A short id: the selector's class and its non-default fields, e.g. ``AutoJAX(mode='forward')``."""
    changed = [f"{name}={value!r}" for name, value in changed_fields(backend)]
    return type(backend).__name__ + (f"({','.join(changed)})" if changed else "")


def _capabilities(backend):
    """(families, inplace) of the backend's adapter; numpy only and inplace when the import fails,
    so that the cases run and fail with MissingBackendError rather than disappear."""
    try:
        adapter = get_adapter(backend)
    except MissingBackendError:
        return ("numpy",), True
    return tuple(adapter.capabilities.families), bool(adapter.capabilities.inplace)


def _writes_cache(backend):
    """The adapter's ``capabilities.writes_cache`` (True when its import fails: the cases then fail loudly)."""
    try:
        return bool(get_adapter(backend).capabilities.writes_cache)
    except MissingBackendError:
        return True


def build_cases(
    backends,
    scenarios,
    *,
    excluded=(),
    rtol=None,
    atol=None,
    counts=True,
    zero=(),
    families=None,
    device=None,
):
    """Every (backend, scenario, family) case, with exclusions decided from the backends' capabilities.

    A scenario a backend declares it cannot run (a two-argument ``f`` without
    ``check_inplace``) becomes a case that checks the backend refuses it
    clearly; one it cannot run for lack of a capability is excluded, with
    the reason.

    Parameters
    ----------
    backends : AbstractBackend, list of AbstractBackend or dict
        A selector, a list of selectors (ids from their class and non-default
        fields) or a dict test id -> selector.
    scenarios : iterable of Scenario
        The scenarios to check.
    excluded : str or sequence of str, default ()
        Operator or scenario names to leave out (their cases are "excluded").
    rtol, atol : float or dict, optional
        A number, or a dict dtype name -> number, overriding
        :func:`default_tolerances`.
    counts : bool, default True
        Wrap ``f`` in a :class:`CountingFunction` and record its evaluations
        per stage.
    zero : sequence of str, default ()
        The backend ids whose derivatives are zeros by design (families,
        shapes and dtypes checked, not values).
    families : sequence of str, optional
        The array families to try (default: every family the backend accepts
        among numpy, torch and jax).
    device : str or dict, optional
        Place the inputs on this device, in the framework's terms (``"cuda"``
        for torch, ``"gpu"`` or ``"gpu:0"`` for JAX), and check that every
        result comes back on it; a dict family -> device (``{"torch":
        "cuda", "jax": "gpu"}``) tries those families only, each on its
        device. With one device for all, pass ``families`` too: numpy arrays
        have no device but ``"cpu"``.

    Returns
    -------
    list of Case
        One per (backend, scenario, family); run each with ``case.run()`` or
        ``case.check()``.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import build_cases, default_scenarios
    >>> cases = build_cases({"fd": di.AutoFiniteDiff()}, default_scenarios("derivative")[:1])
    >>> cases
    [<Case fd-derivative-scalar_to_scalar-float64-numpy>]
    >>> cases[0].run().status
    'passed'
    """
    backends = _as_backend_dict(backends)
    scenarios = list(scenarios)
    for i, s in enumerate(scenarios):
        if not isinstance(s, Scenario):
            raise TypeError(f"scenarios[{i}]: expected a Scenario; got {type(s).__name__}")
    if isinstance(excluded, str):
        excluded = (excluded,)
    excluded = set(excluded)
    cases = []
    for backend_id, backend in backends.items():
        accepted, inplace = _capabilities(backend)
        wanted = [
            f
            for f in CONVERTIBLE_FAMILIES
            if f in accepted
            and (families is None or f in families)
            and (not isinstance(device, dict) or f in device)
        ]
        for s in scenarios:
            reason = (
                "excluded by the caller" if s.operator in excluded or s.name in excluded else None
            )
            refused = None
            if s.y is not None and not inplace:
                refused = (
                    "the backend cannot differentiate two-argument f(y, x) (check_inplace is False)"
                )
            elif reason is None and any(c.kind == "Cache" for c in s.contexts):
                # nothing to refuse at preparation: f's write into the Cache fails inside the
                # framework
                if not inplace:
                    reason = "the backend cannot differentiate functions that write into a di.Cache (check_inplace is False)"
                elif not _writes_cache(backend):
                    reason = "the backend evaluates f where a Cache of x's dtype cannot hold the values (writes_cache is False)"
            for family in wanted:
                if s.python_number and family != "numpy":
                    continue  # a Python float stays a Python float: there is no torch or JAX variant
                cases.append(
                    Case(
                        backend_id,
                        backend,
                        s,
                        family,
                        backend_id in zero,
                        rtol,
                        atol,
                        counts,
                        reason,
                        refused,
                        device.get(family) if isinstance(device, dict) else device,
                    )
                )
    return cases


def pytest_cases(backends, scenarios, **options):
    """``pytest.param`` objects (one per case, with readable ids) for ``@pytest.mark.parametrize``.

    Needs pytest. In a test module::

        import pytest, diffinterface.testing as dit
        @pytest.mark.parametrize("case", dit.pytest_cases({"mine": MyBackend()}, dit.default_scenarios()))
        def test_my_backend(case):
            case.check()

    Parameters
    ----------
    backends : AbstractBackend, list of AbstractBackend or dict
        As for :func:`build_cases`.
    scenarios : iterable of Scenario
        The scenarios to check.
    **options
        The keyword arguments of :func:`build_cases` (``excluded``, ``rtol``,
        ``atol``, ``counts``, ``zero``, ``families``).

    Returns
    -------
    list of pytest.param
        One per case, holding the :class:`Case`, with ``case.id`` as its id.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import default_scenarios, pytest_cases
    >>> [p.id for p in pytest_cases({"fd": di.AutoFiniteDiff()}, default_scenarios("derivative")[:1])]
    ['fd-derivative-scalar_to_scalar-float64-numpy']
    """
    import pytest

    return [pytest.param(case, id=case.id) for case in build_cases(backends, scenarios, **options)]


def test_differentiation(backends, scenarios, *, raise_on_failure=None, **options):
    """Check backends against the contract on scenarios; return a :class:`Report`.

    For one pytest test id per case, use :func:`pytest_cases` or the
    ``di_case`` fixture of ``diffinterface.testing.pytest_plugin``.

    Parameters
    ----------
    backends : AbstractBackend, list of AbstractBackend or dict
        A selector, a list of selectors or a dict test id -> selector.
    scenarios : iterable of Scenario
        The scenarios to check.
    raise_on_failure : bool, optional
        Raise AssertionError listing every failed case. Default: only when
        running inside a pytest test.
    **options
        The keyword arguments of :func:`build_cases` (``excluded``, ``rtol``, ``atol``,
        ``counts``, ``zero``, ``families``, ``device``): names to leave out, tolerance overrides
        (a number or a dict dtype -> number), whether to count evaluations of
        ``f``, the ids of zero backends, the array families to try, the device
        to place inputs on (results must come back on it).

    Returns
    -------
    Report
        One result per case; ``report.ok`` is True when none failed.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import default_scenarios
    >>> print(test_differentiation(di.AutoFiniteDiff(), default_scenarios("derivative")[:1]))
    backend         scenario                             family  status  prep  call  value_and  unprepared
    --------------  -----------------------------------  ------  ------  ----  ----  ---------  ----------
    AutoFiniteDiff  derivative-scalar_to_scalar-float64  numpy   passed  1     2     3          3
    1 passed, 0 failed, 0 excluded
    """
    # build_cases owns the options and their defaults: one list, in one place
    report = Report(case.run() for case in build_cases(backends, scenarios, **options))
    if raise_on_failure is None:
        raise_on_failure = "PYTEST_CURRENT_TEST" in os.environ
    if raise_on_failure:
        report.raise_for_failures()
    return report


# pytest must not collect the kit's entry point as a test when a test module imports it.
test_differentiation.__test__ = False  # type: ignore[attr-defined]
