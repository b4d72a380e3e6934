"""Checking backends against the contract: cases, their checks, and the report.

A *case* is one (backend, scenario, array family). Running it calls the
scenario's operator in every way the contract allows and compares each result
with the scenario's analytic answer:

- prepared (``prepare_<op>(...)``, then again with ``strict=True``) at *other
  values* of x, the tangents and the Constants (same shapes), then called
  twice at the scenario's values;
- prepared with ``out=`` (the buffer itself must come back);
- prepared ``value_and_<op>`` (and its second-order siblings), with and without ``out=``;
- unprepared, plain and ``value_and_``;
- a strictly prepared call with an ``x`` of another shape, which must raise
  ``PreparationMismatchError``;
- afterwards, ``x``, the tangents and the contexts must be unchanged.

``f`` is wrapped in a :class:`CountingFunction`, so each stage records how
many times it evaluated ``f``. For a jitted JAX backend a "call of f" is a
trace: compiled calls do not run Python, so prepared calls count 0.

    >>> import diffinterface as di
    >>> from diffinterface.testing import default_scenarios, test_differentiation
    >>> report = test_differentiation(di.AutoFiniteDiff(), default_scenarios(operators="gradient"))
    >>> report.ok, len(report.passed)
    (True, 4)
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Optional

import numpy as np

from ..arrays import describe, dtype_name, family_of, shape_of
from ..errors import MissingBackendError, PreparationMismatchError, UnsupportedError
from ..selectors import AbstractBackend, AutoFiniteDiff, SecondOrder
from .families import CONVERTIBLE_FAMILIES, convert, reshaped_other, to_family, to_numpy, zeros_like
from .scenarios import Scenario

# -- operators: how each one is called and what it returns ---------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Operator:
    name: str
    tangents: bool
    #: name of the "value and" function and the layout of its result
    value_function: str
    value_layout: tuple
    #: which expected field the plain operator returns
    result: str


_OPERATORS = {
    op.name: op
    for op in (
        _Operator("pushforward", True, "value_and_pushforward", ("value", "first"), "first"),
        _Operator("pullback", True, "value_and_pullback", ("value", "first"), "first"),
        _Operator("derivative", False, "value_and_derivative", ("value", "first"), "first"),
        _Operator("gradient", False, "value_and_gradient", ("value", "first"), "first"),
        _Operator("jacobian", False, "value_and_jacobian", ("value", "first"), "first"),
        _Operator("second_derivative", False, "value_derivative_and_second_derivative",
                  ("value", "first", "second"), "second"),
        _Operator("hvp", True, "gradient_and_hvp", ("first", "second"), "second"),
        _Operator("hessian", False, "value_gradient_and_hessian", ("value", "first", "second"), "second"),
    )
}


def _api(name):
    import diffinterface

    function = getattr(diffinterface, name, None)
    if function is None:
        raise AttributeError(f"diffinterface has no {name}(): this operator is not implemented yet")
    return function


# -- evaluation counting --------------------------------------------------------------------------------


class CountingFunction:
    """``f`` with a counter: each call adds one to ``count`` (for a jitted JAX function, each trace).

        >>> counted = CountingFunction(lambda x: 2 * x)
        >>> counted(3.0), counted(4.0), counted.count
        (6.0, 8.0, 2)
    """

    def __init__(self, f):
        self.f = f
        self.count = 0
        self.__name__ = getattr(f, "__name__", "f")
        self.__doc__ = getattr(f, "__doc__", None)

    def __call__(self, *args):
        self.count += 1
        return self.f(*args)

    def take(self):
        """The count since the last ``take()``, resetting it."""
        count, self.count = self.count, 0
        return count

    def __repr__(self):
        return f"CountingFunction({self.__name__}, count={self.count})"


#: evaluation-count stages of the plain preparation, in the order a case runs them (the strict
#: preparation's stages follow with a ``strict_`` prefix, then the unprepared ones)
COUNT_STAGES = ("prepare", "call1", "call", "out", "value_and", "value_and_out", "unprepared", "unprepared_value_and")


# -- tolerances -----------------------------------------------------------------------------------------

#: (rtol, atol) per dtype for exact AD backends
EXACT_TOLERANCES = {"float64": (1e-9, 1e-11), "float32": (2e-5, 2e-6)}
#: (rtol, atol) per dtype for finite differences, first order (central float32 is ~1e-3 relative)
FINITE_DIFFERENCE_TOLERANCES = {"float64": (1e-5, 1e-7), "float32": (5e-3, 2e-3)}
#: (rtol, atol) per dtype for second order with finite differences in the chain
FINITE_DIFFERENCE_SECOND_ORDER_TOLERANCES = {"float64": (1e-3, 1e-5), "float32": (1e-1, 5e-2)}


def _uses_finite_differences(backend):
    from ..wrappers import AutoSparse

    if isinstance(backend, AutoSparse):
        return _uses_finite_differences(backend.dense_backend)
    if isinstance(backend, SecondOrder):
        return _uses_finite_differences(backend.outer) or _uses_finite_differences(backend.inner)
    return isinstance(backend, AutoFiniteDiff)


def default_tolerances(backend, dtype, order=1):
    """``(rtol, atol)`` the kit uses for ``backend`` on ``dtype`` results of an ``order`` operator.

        >>> import diffinterface as di
        >>> default_tolerances(di.AutoFiniteDiff(), "float64")
        (1e-05, 1e-07)
    """
    if _uses_finite_differences(backend):
        table = FINITE_DIFFERENCE_TOLERANCES if order == 1 else FINITE_DIFFERENCE_SECOND_ORDER_TOLERANCES
    else:
        table = EXACT_TOLERANCES
    return table.get(dtype, table["float32"])


def _pick(override, dtype, default):
    if override is None:
        return default
    if isinstance(override, dict):
        return override.get(dtype, default)
    return float(override)


# -- cases ----------------------------------------------------------------------------------------------


@dataclasses.dataclass
class CaseResult:
    """What running one case found: ``status`` is "passed", "failed" or "excluded"."""

    backend_id: str
    scenario: str
    operator: str
    family: str
    status: str
    problems: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)
    counts: dict = dataclasses.field(default_factory=dict)

    @property
    def id(self):
        return f"{self.backend_id}-{self.scenario}-{self.family}"

    def message(self):
        lines = [f"{self.id}: {self.status}"]
        lines += [f"  - {p}" for p in self.problems]
        lines += [f"  (note) {n}" for n in self.notes]
        return "\n".join(lines)


@dataclasses.dataclass
class Case:
    """One backend on one scenario in one array family; ``run()`` checks it, ``check()`` asserts.

    ``zero`` marks backends whose derivatives are all zeros: only families,
    shapes and dtypes of derivatives are checked (values of f are still checked).
    """

    backend_id: str
    backend: AbstractBackend
    scenario: Scenario
    family: str = "numpy"
    zero: bool = False
    rtol: Any = None
    atol: Any = None
    counts: bool = True
    excluded: Optional[str] = None
    #: Why the backend declares it cannot run this scenario; the case then checks
    #: that it refuses clearly (UnsupportedError, buffers untouched) instead of running it.
    refused: Optional[str] = None

    @property
    def id(self):
        """``backend-operator-scenario-family``, the pytest id (scenario names start with the operator)."""
        return f"{self.backend_id}-{self.scenario.name}-{self.family}"

    def tolerances(self):
        dtype = self.scenario.dtype
        rtol, atol = default_tolerances(self.backend, dtype, self.scenario.order)
        return _pick(self.rtol, dtype, rtol), _pick(self.atol, dtype, atol)

    def run(self) -> CaseResult:
        s = self.scenario
        result = CaseResult(self.backend_id, s.name, s.operator, self.family, "excluded")
        if self.excluded:
            result.notes.append(self.excluded)
            return result
        if self.refused:
            result.notes.append(f"refused as declared: {self.refused}")
            _Runner(self, result).refusal()
        else:
            _Runner(self, result).run()
        result.status = "failed" if result.problems else "passed"
        return result

    def check(self):
        """Run the case and raise AssertionError listing every problem (inside pytest: skip if excluded)."""
        if self.excluded:
            _skip(f"excluded: {self.excluded}")
        result = self.run()
        if result.problems:
            raise AssertionError(result.message())
        return result

    def __repr__(self):
        return f"<Case {self.id}>"


def _skip(reason):
    import pytest

    pytest.skip(reason)


class _Runner:
    """Runs the stages of one case, collecting problems instead of stopping at the first."""

    def __init__(self, case, result):
        self.case = case
        self.result = result
        self.op = _OPERATORS[case.scenario.operator]
        self.s = to_family(case.scenario, case.family)
        self.rtol, self.atol = case.tolerances()
        self.f = CountingFunction(self.s.f) if case.counts else self.s.f

    # -- helpers ---------------------------------------------------------------------------------------

    def problem(self, text):
        self.result.problems.append(text)

    def count(self, stage):
        if isinstance(self.f, CountingFunction):
            self.result.counts[stage] = self.f.take()

    def args(self, x=None):
        s = self.s
        args = (self.f, self.case.backend, s.x if x is None else x)
        if self.op.tangents:
            args += (s.tangents,)
        return args + s.contexts

    def preparation_args(self):
        """Arguments for preparing: same families, shapes and dtypes, other values.

        A preparation may depend on shapes and dtypes only, and a Constant's
        value may change between prepared calls; preparing at other values
        and calling at the scenario's catches a backend that bakes them in.
        """
        numpy_scenario, family = self.case.scenario, self.case.family

        def moved(a):
            if a is None:
                return None
            if isinstance(a, tuple):
                return tuple(moved(i) for i in a)
            if a.__class__ in (int, float):
                return 0.5 * a + 0.25
            base = np.asarray(a)
            return convert(np.asarray(0.5 * base + 0.25, dtype=base.dtype), family)

        args = (self.f, self.case.backend, moved(numpy_scenario.x))
        if self.op.tangents:
            args += (moved(numpy_scenario.tangents),)
        return args + tuple(type(c)(moved(c.value)) for c in numpy_scenario.contexts)

    def y_buffer(self):
        return None if self.s.y is None else zeros_like(self.case.scenario.y, self.case.family)

    def y_kwargs(self):
        y = self.y_buffer()
        return ({"y": y} if y is not None else {}), y

    def expected(self, field):
        return getattr(self.case.scenario, field)  # numpy: comparisons happen in numpy

    def compare(self, stage, what, got, expected, derivative=True):
        """Record a problem unless ``got`` matches ``expected`` in family, shape, dtype and value."""
        label = f"{stage}: {what}"
        if isinstance(expected, tuple):
            if not isinstance(got, tuple) or len(got) != len(expected):
                self.problem(f"{label}: expected a tuple of {len(expected)} results; got {_describe_any(got)}")
                return
            for i, (g, e) in enumerate(zip(got, expected)):
                self.compare(stage, f"{what}[{i}]", g, e, derivative)
            return
        expected = np.asarray(expected)
        family = family_of(got)
        if family != self.case.family:
            self.problem(f"{label}: expected a {self.case.family} result; got {_describe_any(got)}")
            return
        if shape_of(got) != expected.shape or dtype_name(got) != str(expected.dtype):
            self.problem(
                f"{label}: expected shape {expected.shape} and dtype {expected.dtype}; got {describe(got)}"
            )
            return
        if derivative and self.case.zero:
            return
        got_np = to_numpy(got)
        if not np.allclose(got_np, expected, rtol=self.rtol, atol=self.atol, equal_nan=False):
            error = np.abs(got_np - expected)
            worst = np.unravel_index(np.argmax(error - self.rtol * np.abs(expected)), expected.shape)
            self.problem(
                f"{label}: values differ (rtol={self.rtol:g}, atol={self.atol:g}); at index {tuple(int(i) for i in worst)} "
                f"got {got_np[worst]!r}, expected {expected[worst]!r}; max abs error {error.max():.3g}"
            )

    def compare_layout(self, stage, got, layout):
        if not isinstance(got, tuple) or len(got) != len(layout):
            self.problem(f"{stage}: expected a tuple ({', '.join(layout)}); got {_describe_any(got)}")
            return
        for field, part in zip(layout, got):
            self.compare(stage, field, part, self.expected(field), derivative=field != "value")

    def check_y(self, stage, y):
        """With a two-argument f, y must hold f(x) after the call."""
        if y is not None:
            self.compare(stage, "y (the output buffer)", y, self.expected("value"), derivative=False)

    def attempt(self, stage, action):
        try:
            return action(), True
        except MissingBackendError as error:
            self.problem(f"{stage}: the backend's framework failed to import: {error}")
        except Exception as error:  # noqa: BLE001 - every failure is reported with its stage
            self.problem(f"{stage}: raised {type(error).__name__}: {error}")
        return None, False

    def out_buffers(self, fields):
        """Buffers for ``out=``: one per derivative field (a bare buffer when there is one)."""
        buffers = []
        for field in fields:
            expected = self.expected(field)
            if isinstance(expected, tuple):
                buffers.append(tuple(zeros_like(e, self.case.family) for e in expected))
            else:
                buffers.append(zeros_like(expected, self.case.family))
        return buffers[0] if len(buffers) == 1 else tuple(buffers)

    # -- stages ------------------------------------------------------------------------------------------

    def refusal(self):
        """A declared incapability: preparing and calling must raise UnsupportedError, y untouched."""
        op = self.op
        for label, call in (("prepare", _api("prepare_" + op.name)), ("call", _api(op.name))):
            # Not y_kwargs(): the family conversion drops y for families that cannot be written.
            y = convert(np.zeros_like(np.asarray(self.case.scenario.y)), self.case.family)
            kwargs = {"y": y}
            before = np.array(to_numpy(y), copy=True)
            try:
                call(*self.args(), **kwargs)
            except UnsupportedError:
                pass
            except Exception as error:  # noqa: BLE001 - any other error is the problem reported
                self.problem(f"{label} with y=: expected UnsupportedError, got {type(error).__name__}: {error}")
            else:
                self.problem(f"{label} with y=: expected UnsupportedError (check_inplace is False), got a result")
            if not np.array_equal(to_numpy(y), before):
                self.problem(f"{label} with y=: the refused call modified y")

    def run(self):
        s, op = self.s, self.op
        snapshot = _snapshot(s)
        try:
            operator, value_and = _api(op.name), _api(op.value_function)
            prepare = _api("prepare_" + op.name)
        except AttributeError as error:
            self.problem(str(error))
            return
        if isinstance(self.f, CountingFunction):
            self.f.take()
        # Plain preparation first (the fast path users take; its counts are the main ones), then strict.
        self.prepared_stages(prepare, operator, value_and, strict=False)
        self.prepared_stages(prepare, operator, value_and, strict=True)
        self.unprepared_stages(operator, value_and)
        changed = _changed_inputs(snapshot, s)
        if changed:
            self.problem(f"inputs modified: {', '.join(changed)} changed during the calls")

    def prepared_stages(self, prepare, operator, value_and, *, strict):
        s, op = self.s, self.op
        expected = self.expected(op.result)
        tag = "strict " if strict else ""
        key = "strict_" if strict else ""
        kwargs, _ = self.y_kwargs()
        prep, prepared = self.attempt(f"{tag}prepare",
                                      lambda: prepare(*self.preparation_args(), strict=strict, **kwargs))
        self.count(key + "prepare")
        if not prepared:
            return

        for stage in ("call1", "call"):
            label = f"{tag}prepared call" + (" (first)" if stage == "call1" else " (second)")
            kwargs, y = self.y_kwargs()
            got, ok = self.attempt(label, lambda: operator(*self.args(), prep=prep, **kwargs))
            self.count(key + stage)
            if ok:
                self.compare(label, op.result, got, expected)
                self.check_y(label, y)

        if self.case.family == "jax":
            if not strict:
                self.result.notes.append("out= not checked: JAX arrays are immutable")
        else:
            label = f"{tag}prepared with out="
            out = self.out_buffers((op.result,))
            kwargs, y = self.y_kwargs()
            got, ok = self.attempt(label, lambda: operator(*self.args(), prep=prep, out=out, **kwargs))
            self.count(key + "out")
            if ok:
                if not _same_objects(got, out):
                    self.problem(f"{label}: the result is not the out= buffer itself")
                self.compare(label, op.result, got, expected)
                self.check_y(label, y)

        label = f"{tag}prepared {op.value_function}"
        kwargs, y = self.y_kwargs()
        got, ok = self.attempt(label, lambda: value_and(*self.args(), prep=prep, **kwargs))
        self.count(key + "value_and")
        if ok:
            self.check_value_and(label, got, y)

        if self.case.family != "jax":
            label = f"{tag}prepared {op.value_function} with out="
            derivative_fields = tuple(f for f in op.value_layout if f != "value")
            out = self.out_buffers(derivative_fields)
            kwargs, y = self.y_kwargs()
            got, ok = self.attempt(label, lambda: value_and(*self.args(), prep=prep, out=out, **kwargs))
            self.count(key + "value_and_out")
            if ok:
                self.check_value_and(label, got, y)
                parts = got[len(op.value_layout) - len(derivative_fields):] if isinstance(got, tuple) else ()
                wanted = out if len(derivative_fields) > 1 else (out,)
                if not _same_objects(tuple(parts), wanted):
                    self.problem(f"{label}: the derivatives are not the out= buffers")

        if strict:
            # another shape of x must be refused by the strict preparation
            other = reshaped_other(s.x, self.case.family)
            kwargs, _ = self.y_kwargs()
            try:
                operator(*self.args(x=other), prep=prep, **kwargs)
                self.problem(
                    f"strict mismatch: a call with x of shape {shape_of(other)} (prepared for {shape_of(s.x)}) "
                    "did not raise PreparationMismatchError"
                )
            except PreparationMismatchError:
                pass
            except Exception as error:  # noqa: BLE001
                self.problem(
                    f"strict mismatch: raised {type(error).__name__} instead of PreparationMismatchError: {error}"
                )
            self.count("strict_mismatch")

    def unprepared_stages(self, operator, value_and):
        op = self.op
        kwargs, y = self.y_kwargs()
        got, ok = self.attempt("unprepared", lambda: operator(*self.args(), **kwargs))
        self.count("unprepared")
        if ok:
            self.compare("unprepared", op.result, got, expected=self.expected(op.result))
            self.check_y("unprepared", y)
        label = f"unprepared {op.value_function}"
        kwargs, y = self.y_kwargs()
        got, ok = self.attempt(label, lambda: value_and(*self.args(), **kwargs))
        self.count("unprepared_value_and")
        if ok:
            self.check_value_and(label, got, y)

    def check_value_and(self, label, got, y):
        self.compare_layout(label, got, self.op.value_layout)
        if y is not None and isinstance(got, tuple) and got and got[0] is not y:
            self.problem(f"{label}: with y=, the value returned must be y itself")


def _describe_any(a):
    if isinstance(a, tuple):
        return f"tuple of length {len(a)}"
    return describe(a)


def _same_objects(got, wanted):
    if isinstance(wanted, tuple):
        return isinstance(got, tuple) and len(got) == len(wanted) and all(
            _same_objects(g, w) for g, w in zip(got, wanted)
        )
    return got is wanted


def _snapshot(s):
    def copy(a):
        if isinstance(a, tuple):
            return tuple(copy(i) for i in a)
        return None if a is None else to_numpy(a)

    return {
        "x": copy(s.x),
        "tangents": copy(s.tangents),
        **{f"contexts[{i}]": copy(c.value) for i, c in enumerate(s.contexts)},
    }


def _changed_inputs(snapshot, s):
    now = _snapshot(s)
    changed = []
    for name, before in snapshot.items():
        after = now[name]
        pairs = zip(before, after) if isinstance(before, tuple) else [(before, after)]
        if any(not np.array_equal(b, a) for b, a in pairs):
            changed.append(name)
    return changed


# -- building cases -------------------------------------------------------------------------------------


def _as_backend_dict(backends):
    """``backends`` as {id: selector}: a selector, a list of selectors, or a dict."""
    if isinstance(backends, AbstractBackend):
        return {_default_id(backends): backends}
    if isinstance(backends, dict):
        for key, value in backends.items():
            if not isinstance(value, AbstractBackend):
                raise TypeError(f"backends[{key!r}]: expected a backend selector such as di.AutoJAX(); got {value!r}")
        return dict(backends)
    if isinstance(backends, (list, tuple)):
        result = {}
        for i, b in enumerate(backends):
            if not isinstance(b, AbstractBackend):
                raise TypeError(f"backends[{i}]: expected a backend selector such as di.AutoJAX(); got {b!r}")
            result[_default_id(b)] = b
        return result
    raise TypeError(
        f"backends: expected a backend selector, a list of selectors or a dict id -> selector; got {type(backends).__name__}"
    )


def _default_id(backend):
    """A short id: the selector's class and its non-default fields, e.g. ``AutoJAX(mode='forward')``."""
    if not dataclasses.is_dataclass(backend):
        return type(backend).__name__
    changed = [
        f"{field.name}={getattr(backend, field.name)!r}"
        for field in dataclasses.fields(backend)
        if field.default is dataclasses.MISSING or getattr(backend, field.name) != field.default
    ]
    return type(backend).__name__ + (f"({','.join(changed)})" if changed else "")


def _capabilities(backend):
    """(families, inplace) of the backend's adapter; numpy only and inplace when the import fails,
    so that the cases run and fail with MissingBackendError rather than disappear."""
    from ..backends import get_adapter

    try:
        adapter = get_adapter(backend)
    except MissingBackendError:
        return ("numpy",), True
    return tuple(adapter.families), bool(adapter.inplace)


def build_cases(backends, scenarios, *, excluded=(), rtol=None, atol=None, counts=True, zero=(), families=None):
    """Every (backend, scenario, family) case, with exclusions decided from the backends' capabilities.

    ``families`` limits the array families tried (default: every family the
    backend accepts among numpy, torch and jax). ``zero`` names the backend ids
    whose derivatives are zeros (shapes and dtypes checked, not values).
    ``excluded`` holds operator or scenario names to leave out.
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
        wanted = [f for f in CONVERTIBLE_FAMILIES if f in accepted and (families is None or f in families)]
        for s in scenarios:
            reason = "excluded by the caller" if s.operator in excluded or s.name in excluded else None
            refused = None
            if s.y is not None and not inplace:
                refused = "the backend cannot differentiate two-argument f(y, x) (check_inplace is False)"
            for family in wanted:
                if s.python_number and family != "numpy":
                    continue  # a Python float stays a Python float: there is no torch or JAX variant
                cases.append(Case(backend_id, backend, s, family, backend_id in zero, rtol, atol, counts, reason,
                                  refused))
    return cases


def pytest_cases(backends, scenarios, **options):
    """``pytest.param`` objects (one per case, with readable ids) for ``@pytest.mark.parametrize``.

        import pytest, diffinterface.testing as dit
        @pytest.mark.parametrize("case", dit.pytest_cases({"mine": MyBackend()}, dit.default_scenarios()))
        def test_my_backend(case):
            case.check()
    """
    import pytest

    return [pytest.param(case, id=case.id) for case in build_cases(backends, scenarios, **options)]


# -- the report -----------------------------------------------------------------------------------------


class Report:
    """The results of :func:`test_differentiation`; ``str(report)`` is a table, one row per case."""

    def __init__(self, results):
        self.results = list(results)

    @property
    def passed(self):
        return [r for r in self.results if r.status == "passed"]

    @property
    def failed(self):
        return [r for r in self.results if r.status == "failed"]

    @property
    def excluded(self):
        return [r for r in self.results if r.status == "excluded"]

    @property
    def ok(self):
        return not self.failed

    def raise_for_failures(self):
        if self.failed:
            raise AssertionError(
                f"{len(self.failed)} of {len(self.results)} cases failed:\n"
                + "\n".join(r.message() for r in self.failed)
            )
        return self

    def counts_table(self):
        """Evaluations of f per (backend, operator, family): at preparation and per prepared call.

        Each cell is the range over the scenarios (sizes differ, and finite
        differences cost more on bigger inputs); "call" is the second prepared
        call, after any one-time compilation.
        """
        ranges = {}
        for r in self.results:
            if r.status != "passed" or not r.counts:
                continue
            cell = ranges.setdefault((r.backend_id, r.operator, r.family), {"prepare": [], "call": []})
            for stage in cell:
                cell[stage].append(r.counts.get(stage, 0))

        def span(values):
            low, high = min(values), max(values)
            return str(low) if low == high else f"{low}-{high}"

        rows = [("backend", "operator", "family", "prepare", "call")]
        rows += [(*key, span(cell["prepare"]), span(cell["call"])) for key, cell in ranges.items()]
        return _format_table(rows)

    def __str__(self):
        header = ("backend", "scenario", "family", "status", "prep", "call", "value_and", "unprepared")
        rows = [header]
        for r in self.results:
            c = r.counts
            rows.append((r.backend_id, r.scenario, r.family, r.status,
                         *(str(c.get(k, "")) for k in ("prepare", "call", "value_and", "unprepared"))))
        lines = _format_table(rows).splitlines()
        lines.append(f"{len(self.passed)} passed, {len(self.failed)} failed, {len(self.excluded)} excluded")
        for r in self.failed + self.excluded:
            lines.append(r.message())
        return "\n".join(lines)

    def __repr__(self):
        return f"<Report: {len(self.passed)} passed, {len(self.failed)} failed, {len(self.excluded)} excluded>"


def _format_table(rows):
    """Rows of strings as aligned columns, with a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def test_differentiation(backends, scenarios, *, excluded=(), rtol=None, atol=None, counts=True, zero=(),
                         families=None, raise_on_failure=None):
    """Check backends against the contract on scenarios; return a :class:`Report`.

    ``backends``: a selector, a list of selectors or a dict id -> selector.
    ``rtol``/``atol``: a number, or a dict dtype -> number, overriding
    :func:`default_tolerances`. ``excluded``: operator or scenario names to
    leave out. ``counts``: wrap f in a :class:`CountingFunction` and record
    evaluations per stage. ``raise_on_failure`` (default: only when running
    inside a pytest test) raises AssertionError listing every failed case.
    For one pytest test id per case, use :func:`pytest_cases` or the
    ``di_case`` fixture of ``diffinterface.testing.pytest_plugin``.

        >>> import diffinterface as di
        >>> from diffinterface.testing import default_scenarios
        >>> print(test_differentiation(di.AutoFiniteDiff(), default_scenarios("derivative")[:1]))
        backend         scenario                             family  status  prep  call  value_and  unprepared
        --------------  -----------------------------------  ------  ------  ----  ----  ---------  ----------
        AutoFiniteDiff  derivative-scalar_to_scalar-float64  numpy   passed  0     2     3          2
        1 passed, 0 failed, 0 excluded
    """
    cases = build_cases(backends, scenarios, excluded=excluded, rtol=rtol, atol=atol, counts=counts, zero=zero,
                        families=families)
    report = Report(case.run() for case in cases)
    if raise_on_failure is None:
        raise_on_failure = "PYTEST_CURRENT_TEST" in os.environ
    if raise_on_failure:
        report.raise_for_failures()
    return report


# pytest must not collect the kit's entry point as a test when a test module imports it.
test_differentiation.__test__ = False
