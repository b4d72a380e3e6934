"""Timing and evaluation counts of operators, per backend and scenario.

    >>> import diffinterface as di
    >>> from diffinterface.testing import benchmark_differentiation, default_scenarios
    >>> rows = benchmark_differentiation(di.AutoFiniteDiff(), default_scenarios("gradient")[:1], repeats=3)
    >>> list(rows[0])
    ['backend', 'scenario', 'family', 'operator', 'prepared', 'evaluations', 'median_time_s', 'preparation_time_s']
    >>> [(r["prepared"], r["evaluations"]) for r in rows]
    [(True, 8), (False, 9)]

Each scenario runs prepared (one preparation timed on its own, then
``repeats`` prepared calls) and unprepared (``repeats`` calls, each preparing).
``evaluations`` is the number of calls of f in one call (for a jitted JAX
backend, traces: a compiled call counts 0). Times are wall-clock medians in
seconds; they are for reading, never for asserting.
"""

from __future__ import annotations

import statistics
import time

from ..core import OPERATORS
from .stages import _api
from .counting import CountingFunction
from .runner import _as_backend_dict, _capabilities
from .families import CONVERTIBLE_FAMILIES, to_family

_COLUMNS = (
    "backend",
    "scenario",
    "family",
    "operator",
    "prepared",
    "evaluations",
    "median_time_s",
    "preparation_time_s",
)


class BenchmarkRows(list):
    """A list of dicts (one per measurement) that prints as a table; ``.dataframe()`` needs pandas."""

    def dataframe(self):
        """The rows as a pandas DataFrame (pandas is optional: ``pip install pandas``)."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError(
                "BenchmarkRows.dataframe() needs pandas, which is not installed: pip install pandas"
            ) from error
        return pandas.DataFrame(list(self), columns=list(_COLUMNS))

    def __str__(self):
        def cell(row, key):
            value = row[key]
            if isinstance(value, float):
                return f"{value:.3g}"
            return "" if value is None else str(value)

        rows = [_COLUMNS] + [tuple(cell(r, k) for k in _COLUMNS) for r in self]
        widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)


def _measure(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def benchmark_differentiation(backends, scenarios, *, repeats=10, families=("numpy",), excluded=()):
    """Measure each (backend, scenario): evaluations of f and median time, prepared and unprepared.

    Cases a backend cannot run (array family, two-argument f) are left out;
    a call that raises is recorded with ``evaluations=None`` and its error.

    Parameters
    ----------
    backends : AbstractBackend, list of AbstractBackend or dict
        A selector, a list of selectors or a dict id -> selector.
    scenarios : iterable of Scenario
        The scenarios to measure.
    repeats : int, default 10
        Timed calls per measurement (a positive int; the median is kept).
    families : sequence of str, default ("numpy",)
        The array families to measure in.
    excluded : sequence of str, default ()
        Operator or scenario names to leave out.

    Returns
    -------
    BenchmarkRows
        A list of dicts with keys ``backend``, ``scenario``, ``family``,
        ``operator``, ``prepared``, ``evaluations``, ``median_time_s`` and
        ``preparation_time_s`` (None for unprepared rows), two rows (prepared,
        unprepared) per case; ``str(rows)`` is a table, ``rows.dataframe()``
        a pandas DataFrame.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import benchmark_differentiation, default_scenarios
    >>> rows = benchmark_differentiation({"fd": di.AutoFiniteDiff()}, default_scenarios("gradient")[:1], repeats=2)
    >>> [(r["backend"], r["prepared"], r["evaluations"]) for r in rows]
    [('fd', True, 8), ('fd', False, 9)]
    """
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats: expected a positive int; got {repeats!r}")
    rows = BenchmarkRows()
    for backend_id, backend in _as_backend_dict(backends).items():
        accepted, inplace = _capabilities(backend)
        for scenario in scenarios:
            if scenario.operator in excluded or scenario.name in excluded:
                continue
            if scenario.y is not None and not inplace:
                continue
            for family in families:
                if family not in accepted or family not in CONVERTIBLE_FAMILIES:
                    continue
                rows.extend(
                    _benchmark_one(
                        backend_id, backend, to_family(scenario, family), scenario, family, repeats
                    )
                )
    return rows


def _benchmark_one(backend_id, backend, s, original, family, repeats):
    op = OPERATORS[s.operator]
    operator, prepare = _api(op.name), _api("prepare_" + op.name)
    f = CountingFunction(s.f)
    args = (f, backend, s.x) + ((s.tangents,) if op.seeds else ()) + s.contexts
    kwargs = {} if s.y is None else {"y": s.y.copy() if hasattr(s.y, "copy") else s.y}
    base = {"backend": backend_id, "scenario": original.name, "family": family, "operator": op.name}
    rows = []
    try:
        start = time.perf_counter()
        prep = prepare(*args, **kwargs)
        preparation_time = time.perf_counter() - start
        operator(*args, prep=prep, **kwargs)  # warm-up (JAX compiles on first call)
        f.take()
        operator(*args, prep=prep, **kwargs)
        evaluations = f.take()
        median = _measure(lambda: operator(*args, prep=prep, **kwargs), repeats)
        rows.append(
            {
                **base,
                "prepared": True,
                "evaluations": evaluations,
                "median_time_s": median,
                "preparation_time_s": preparation_time,
            }
        )
    except Exception as error:  # noqa: BLE001 - a benchmark records failures instead of stopping
        rows.append(
            {
                **base,
                "prepared": True,
                "evaluations": None,
                "median_time_s": None,
                "preparation_time_s": None,
                "error": f"{type(error).__name__}: {error}",
            }
        )
    try:
        f.take()
        operator(*args, **kwargs)
        evaluations = f.take()
        median = _measure(lambda: operator(*args, **kwargs), repeats)
        rows.append(
            {
                **base,
                "prepared": False,
                "evaluations": evaluations,
                "median_time_s": median,
                "preparation_time_s": None,
            }
        )
    except Exception as error:  # noqa: BLE001
        rows.append(
            {
                **base,
                "prepared": False,
                "evaluations": None,
                "median_time_s": None,
                "preparation_time_s": None,
                "error": f"{type(error).__name__}: {error}",
            }
        )
    return rows
