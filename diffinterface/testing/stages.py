"""The stages of one conformance case: preparing, calling, comparing, refusing (see :mod:`.cases`).

A :class:`CaseRun` runs every stage of a :class:`~diffinterface.testing.cases.Case`
and collects the problems it finds instead of stopping at the first.
"""

from __future__ import annotations

import numpy as np

from .. import operators
from ..families import FAMILIES, describe, dtype_name, family_of, shape_of
from ..core import OPERATORS
from ..errors import MissingBackendError, PreparationMismatchError, UnsupportedError
from .counting import CountingFunction
from .families import convert, is_container, to_family, to_numpy, tree_leaves, tree_map, zeros_like
from .mismatches import mismatched_calls


def _api(name):
    function = getattr(operators, name, None)
    if function is None:
        raise AttributeError(f"diffinterface has no {name}(): this operator is not implemented yet")
    return function


class CaseRun:
    """Runs the stages of one case, collecting problems instead of stopping at the first."""

    def __init__(self, case, result):
        self.case = case
        self.result = result
        self.op = OPERATORS[case.scenario.operator]
        self.s = to_family(case.scenario, case.family, case.device)
        #: the device x was placed on, as the family names it (None: the default device, not
        #: checked)
        self.placed_on = None if case.device is None else _device_name(self.s.x, case.family)
        self.rtol, self.atol = case.tolerances()
        self.f = CountingFunction(self.s.f) if case.counts else self.s.f

    # -- helpers ----------------------------------------------------------------------------------

    def problem(self, text):
        self.result.problems.append(text)

    def count(self, stage):
        if isinstance(self.f, CountingFunction):
            self.result.counts[stage] = self.f.take()

    def args(self, x=None):
        s = self.s
        args = (self.f, self.case.backend, s.x if x is None else x)
        if self.op.seeds:
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
            if is_container(a):
                return tree_map(moved, a)
            if a.__class__ in (int, float):
                return 0.5 * a + 0.25
            base = np.asarray(a)
            return convert(
                np.asarray(0.5 * base + 0.25, dtype=base.dtype), family, self.case.device
            )

        args = (self.f, self.case.backend, moved(numpy_scenario.x))
        if self.op.seeds:
            args += (moved(numpy_scenario.tangents),)
        return args + tuple(type(c)(moved(c.value)) for c in numpy_scenario.contexts)

    def y_buffer(self):
        return (
            None
            if self.s.y is None
            else zeros_like(self.case.scenario.y, self.case.family, self.case.device)
        )

    def y_kwargs(self):
        y = self.y_buffer()
        return ({"y": y} if y is not None else {}), y

    def expected(self, field):
        return getattr(self.case.scenario, field)  # numpy: comparisons happen in numpy

    def compare(self, stage, what, got, expected, derivative=True):
        """Record a problem unless ``got`` matches ``expected`` in family, shape, dtype and value."""
        label = f"{stage}: {what}"
        if isinstance(expected, dict):
            if not isinstance(got, dict) or sorted(got) != sorted(expected):
                self.problem(
                    f"{label}: expected a dict with keys {sorted(expected)}; got {_describe_any(got)}"
                )
                return
            for k in expected:
                self.compare(stage, f"{what}[{k!r}]", got[k], expected[k], derivative)
            return
        if (
            isinstance(expected, tuple)
            and hasattr(expected, "_fields")
            and type(got) is not type(expected)
        ):
            self.problem(f"{label}: expected a {type(expected).__name__}; got {_describe_any(got)}")
            return
        if isinstance(expected, (tuple, list)):
            kind = list if isinstance(expected, list) else tuple
            if not isinstance(got, kind) or len(got) != len(expected):
                self.problem(
                    f"{label}: expected a {kind.__name__} of {len(expected)} results; got {_describe_any(got)}"
                )
                return
            for i, (g, e) in enumerate(zip(got, expected)):
                self.compare(stage, f"{what}[{i}]", g, e, derivative)
            return
        expected = np.asarray(expected)
        family = family_of(got)
        if family != self.case.family:
            self.problem(f"{label}: expected a {self.case.family} result; got {_describe_any(got)}")
            return
        if self.placed_on is not None and _device_name(got, family) != self.placed_on:
            self.problem(
                f"{label}: expected a result on x's device {self.placed_on}; got one on {_device_name(got, family)}"
            )
            return
        if family == "numpy" and not isinstance(got, np.ndarray):
            # the contract: numpy results are arrays, a 0-d one for a scalar (not a NumPy scalar or
            # float)
            self.problem(
                f"{label}: expected a numpy.ndarray (0-d for a scalar); got {type(got).__name__} {got!r}"
            )
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
            worst = np.unravel_index(
                np.argmax(error - self.rtol * np.abs(expected)), expected.shape
            )
            self.problem(
                f"{label}: values differ (rtol={self.rtol:g}, atol={self.atol:g}); at index {tuple(int(i) for i in worst)} "
                f"got {got_np[worst]!r}, expected {expected[worst]!r}; max abs error {error.max():.3g}"
            )

    def compare_layout(self, stage, got, layout):
        if not isinstance(got, tuple) or len(got) != len(layout):
            self.problem(
                f"{stage}: expected a tuple ({', '.join(layout)}); got {_describe_any(got)}"
            )
            return
        for field, part in zip(layout, got):
            self.compare(stage, field, part, self.expected(field), derivative=field != "value")

    def check_y(self, stage, y):
        """With a two-argument f, y must hold f(x) after the call."""
        if y is not None:
            self.compare(
                stage, "y (the output buffer)", y, self.expected("value"), derivative=False
            )

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
            buffers.append(zeros_like(expected, self.case.family, self.case.device))
        return buffers[0] if len(buffers) == 1 else tuple(buffers)

    # -- stages -----------------------------------------------------------------------------------

    def refusal(self):
        """A declared incapability: preparing and calling must raise UnsupportedError, y untouched."""
        op = self.op
        for label, call in (("prepare", _api("prepare_" + op.name)), ("call", _api(op.name))):
            # Not y_kwargs(): the family conversion drops y for families that cannot be written.
            y = convert(
                np.zeros_like(np.asarray(self.case.scenario.y)), self.case.family, self.case.device
            )
            kwargs = {"y": y}
            before = np.array(to_numpy(y), copy=True)
            try:
                call(*self.args(), **kwargs)
            except UnsupportedError:
                pass
            except Exception as error:  # noqa: BLE001 - any other error is the problem reported
                self.problem(
                    f"{label} with y=: expected UnsupportedError, got {type(error).__name__}: {error}"
                )
            else:
                self.problem(
                    f"{label} with y=: expected UnsupportedError (check_inplace is False), got a result"
                )
            if not np.array_equal(to_numpy(y), before):
                self.problem(f"{label} with y=: the refused call modified y")

    def run(self):
        s, op = self.s, self.op
        snapshot = _snapshot(s)
        try:
            operator, value_and = _api(op.name), _api(op.valued)
            prepare = _api("prepare_" + op.name)
        except AttributeError as error:
            self.problem(str(error))
            return
        if isinstance(self.f, CountingFunction):
            self.f.take()
        # The default (checked) preparation first: its counts are the main ones; then strict=False.
        self.prepared_stages(prepare, operator, value_and, strict=True)
        self.prepared_stages(prepare, operator, value_and, strict=False)
        self.unprepared_stages(operator, value_and)
        changed = _changed_inputs(snapshot, s)
        if changed:
            self.problem(f"inputs modified: {', '.join(changed)} changed during the calls")

    def prepared_stages(self, prepare, operator, value_and, *, strict):
        op = self.op
        expected = self.expected(op.plain_returns)
        tag = "" if strict else "strict=False "
        key = "" if strict else "unchecked_"
        kwargs, _ = self.y_kwargs()
        if not strict:
            kwargs["strict"] = False
        prep, prepared = self.attempt(
            f"{tag}prepare", lambda: prepare(*self.preparation_args(), **kwargs)
        )
        self.count(key + "prepare")
        if not prepared:
            return

        for stage in ("call1", "call"):
            label = f"{tag}prepared call" + (" (first)" if stage == "call1" else " (second)")
            kwargs, y = self.y_kwargs()
            got, ok = self.attempt(label, lambda: operator(*self.args(), prep=prep, **kwargs))
            self.count(key + stage)
            if ok:
                self.compare(label, op.plain_returns, got, expected)
                self.check_y(label, y)

        immutable = FAMILIES[self.case.family].write is None  # no buffer of the family takes out=
        if immutable:
            if strict:
                self.result.notes.append(
                    f"out= not checked: {self.case.family} arrays are immutable"
                )
        else:
            label = f"{tag}prepared with out="
            out = self.out_buffers((op.plain_returns,))
            kwargs, y = self.y_kwargs()
            got, ok = self.attempt(
                label, lambda: operator(*self.args(), prep=prep, out=out, **kwargs)
            )
            self.count(key + "out")
            if ok:
                if not _same_objects(got, out):
                    self.problem(f"{label}: the result is not the out= buffer itself")
                self.compare(label, op.plain_returns, got, expected)
                self.check_y(label, y)

        label = f"{tag}prepared {op.valued}"
        kwargs, y = self.y_kwargs()
        got, ok = self.attempt(label, lambda: value_and(*self.args(), prep=prep, **kwargs))
        self.count(key + "value_and")
        if ok:
            self.check_value_and(label, got, y)

        if not immutable:
            label = f"{tag}prepared {op.valued} with out="
            derivative_fields = tuple(f for f in op.valued_returns if f != "value")
            out = self.out_buffers(derivative_fields)
            kwargs, y = self.y_kwargs()
            got, ok = self.attempt(
                label, lambda: value_and(*self.args(), prep=prep, out=out, **kwargs)
            )
            self.count(key + "value_and_out")
            if ok:
                self.check_value_and(label, got, y)
                parts = (
                    got[len(op.valued_returns) - len(derivative_fields) :]
                    if isinstance(got, tuple)
                    else ()
                )
                wanted = out if len(derivative_fields) > 1 else (out,)
                if not _same_objects(tuple(parts), wanted):
                    self.problem(f"{label}: the derivatives are not the out= buffers")

        if strict:
            self.mismatches(operator, prep)

    def mismatches(self, operator, prep):
        """Every slot of a checked preparation, changed one at a time, must raise PreparationMismatchError."""
        for slot, args in mismatched_calls(self.case, self.s, self.args(), self.op):
            kwargs, _ = self.y_kwargs()
            if isinstance(self.f, CountingFunction):
                self.f.take()
            try:
                operator(*args, prep=prep, **kwargs)
                self.problem(f"mismatch ({slot}): the call did not raise PreparationMismatchError")
            except PreparationMismatchError:
                pass
            except Exception as error:  # noqa: BLE001
                self.problem(
                    f"mismatch ({slot}): raised {type(error).__name__} instead of PreparationMismatchError: {error}"
                )
            if isinstance(self.f, CountingFunction) and self.f.take():
                self.problem(f"mismatch ({slot}): f was evaluated before the mismatch was reported")

    def unprepared_stages(self, operator, value_and):
        op = self.op
        kwargs, y = self.y_kwargs()
        got, ok = self.attempt("unprepared", lambda: operator(*self.args(), **kwargs))
        self.count("unprepared")
        if ok:
            self.compare(
                "unprepared", op.plain_returns, got, expected=self.expected(op.plain_returns)
            )
            self.check_y("unprepared", y)
        label = f"unprepared {op.valued}"
        kwargs, y = self.y_kwargs()
        got, ok = self.attempt(label, lambda: value_and(*self.args(), **kwargs))
        self.count("unprepared_value_and")
        if ok:
            self.check_value_and(label, got, y)

    def check_value_and(self, label, got, y):
        self.compare_layout(label, got, self.op.valued_returns)
        if y is not None and isinstance(got, tuple) and got and got[0] is not y:
            self.problem(f"{label}: with y=, the value returned must be y itself")


def _describe_any(a):
    if isinstance(a, list):
        return f"list of length {len(a)}"
    if isinstance(a, dict):
        return f"dict with keys {sorted(a)}"
    if isinstance(a, tuple):
        return f"tuple of length {len(a)}"
    return describe(a)


def _same_objects(got, wanted):
    if isinstance(wanted, tuple):
        return (
            isinstance(got, tuple)
            and len(got) == len(wanted)
            and all(_same_objects(g, w) for g, w in zip(got, wanted))
        )
    return got is wanted


def _snapshot(s):
    def copy(a):
        if is_container(a):
            return tuple(to_numpy(leaf) for leaf in tree_leaves(a))
        return None if a is None else to_numpy(a)

    return {
        "x": copy(s.x),
        "tangents": copy(s.tangents),
        # a Cache is scratch space f writes into: only the other inputs must come back unchanged
        **{f"contexts[{i}]": copy(c.value) for i, c in enumerate(s.contexts) if c.kind != "Cache"},
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


def _device_name(a, family):
    """The device of ``a`` (of ``family``; its first leaf for a tree), as text."""
    return str(FAMILIES[family].device(tree_leaves(a)[0]))
