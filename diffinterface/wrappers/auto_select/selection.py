"""Selecting among candidates: prepare each, run each once, keep those that agree, time them, keep the fastest.

:func:`select` returns the chosen candidate's own preparation, re-addressed to
the ``AutoSelect`` selector (its methods, plans and checks are the
candidate's, so a prepared call costs what that backend's costs), whose
``impl`` carries the :class:`Selection` that :mod:`.report` reads.
"""

from __future__ import annotations

import gc
import time

import numpy as np

from ...core import prepare, registrations
from ...core.call import explained
from ...core.transform import Built
from ...errors import DifferentiationError
from ...families import as_numpy, is_array, sparse_family
from .table import short_name, table

#: the most interleaved rounds of timed calls, however much of the budget is left
MAX_ROUNDS = 25
#: a timed sample repeats a fast call until it lasts about this long (seconds), against the clock's
#: resolution
SAMPLE_SECONDS = 2e-4
#: default agreement tolerance by the results' precision
RTOL_FLOAT64, RTOL_LOWER = 1e-5, 1e-2


def default_candidates(own_type):
    """Every registered backend whose selector takes no arguments, in forward and reverse mode where it has one.

    Zero backends (``returns_zeros``) and ``own_type`` (AutoSelect) are left
    out; so are wrappers, whose selectors need the backends they wrap. Whether
    each is installed is the caller's question.
    """
    found = []
    for entry in registrations():
        if entry.returns_zeros or entry.selector is own_type:
            continue
        try:
            plain = entry.selector()
        except Exception:  # noqa: BLE001 - a selector that needs arguments (a wrapper) is no default candidate
            continue
        try:  # a selector with a mode: both modes are candidates
            found.extend(entry.selector(mode=mode) for mode in ("forward", "reverse"))
        except Exception:  # noqa: BLE001 - no mode to choose
            found.append(plain)
    return tuple(found)


class Row:
    """One candidate in a :class:`Selection`: its backend, what became of it, its times."""

    __slots__ = ("backend", "status", "reason", "times", "result")

    def __init__(self, backend):
        self.backend = backend
        #: "chosen", "agreed", "disagreed", "raised" or "not installed"
        self.status = "raised"
        self.reason = ""
        self.times: list = []
        self.result = None

    @property
    def median(self):
        """Median seconds per call over the timed rounds (None when it was not timed)."""
        return float(np.median(self.times)) if self.times else None


class Selection:
    """What :func:`select` decided: one :class:`Row` per candidate, the tolerance used, and the choice.

    ``str(selection)`` is the table :func:`~diffinterface.explain` shows.
    """

    def __init__(self, operator, rows, rtol, rounds, chosen):
        self.operator, self.rows, self.rtol, self.rounds, self.chosen = (
            operator,
            tuple(rows),
            rtol,
            rounds,
            chosen,
        )

    def __repr__(self):
        return f"<AutoSelect selection of {self.operator}: {short_name(self.chosen)}>"

    def __str__(self):
        return table(self)


class SelectedImpl:
    """The chosen candidate's ``impl``, with the :class:`Selection` that chose it (every attribute is the impl's)."""

    def __init__(self, impl, selection):
        self.chosen_impl, self.selection = impl, selection

    def __getattr__(self, name):
        return getattr(self.chosen_impl, name)

    def __repr__(self):
        return f"SelectedImpl({self.chosen_impl!r})"


def _reason(error):
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"


def _explained(error, call, backend):
    """``error``, raised by a candidate's first call, as a call of ``backend`` alone raises it (a
    backend that runs f only when called, such as autograd, meets f's mistakes there)."""
    better = explained(error, call, backend)
    if better is None:
        return error
    better.__cause__ = error
    return better


def _leaves(result):
    """The arrays of a result (an array, a tuple, a pytree; sparse matrices made dense)."""
    try:
        import optree

        leaves = optree.tree_leaves(result, none_is_leaf=False)
    except ImportError:  # pragma: no cover - optree comes with the pytree extra
        leaves = list(result) if isinstance(result, tuple) else [result]
    arrays = []
    for leaf in leaves:
        if not is_array(leaf) and sparse_family(leaf) is not None:
            dense = (
                getattr(leaf, "toarray", None) or getattr(leaf, "todense", None) or leaf.to_dense
            )
            leaf = dense()
        if is_array(leaf):
            arrays.append(leaf)
    return arrays


def _vector(leaves):
    """The numbers of ``leaves`` as one float64 vector (a complex leaf's real and imaginary parts, both)."""
    numbers = [as_numpy(leaf) for leaf in leaves]
    parts = [
        np.asarray(
            np.stack((a.real, a.imag)) if np.iscomplexobj(a) else a, dtype=np.float64
        ).ravel()
        for a in numbers
    ]
    return np.concatenate(parts) if parts else np.zeros(0)


def _precision_rtol(leaves):
    """The default tolerance for these results' precision: float64 results are held to more digits."""
    return (
        RTOL_FLOAT64
        if all("64" in str(getattr(leaf, "dtype", "float64")) for leaf in leaves)
        else RTOL_LOWER
    )


def _same_error(error, first):
    return type(error) is type(first) and str(error) == str(first)


def _raise_alike(first, selection):
    """Raise an error of ``first``'s type (every candidate raised that type): its message, then the table."""
    try:
        error = type(first)(
            f"{first}\n(every candidate of AutoSelect raised {type(first).__name__})\n{selection}"
        )
    except Exception:  # noqa: BLE001 - an exception type built otherwise: the caller raises its own
        return
    raise error from first


def _parts(op, valued, has_aux, result):
    """A method's ``result`` as its parts (the value, the first derivative, the second, aux), each
    compared on its own scale: a large f(x) must not hide a wrong derivative."""
    if has_aux:  # ((value, aux), *rest) for value-and methods, else (result, aux)
        if valued and op.n_values:
            (value, aux), *rest = result
            return [value, aux, *rest]
        result, aux = result
        return [*_parts(op, valued, False, result), aux]
    return list(result) if valued else [result]


def _close(a, b, rtol):
    if a.shape != b.shape:
        return False
    if not a.size:
        return True
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    return bool(float(np.max(np.abs(a - b))) <= rtol * scale)  # NaN anywhere: False


def _all_close(parts, others, rtol):
    return len(parts) == len(others) and all(_close(a, b, rtol) for a, b in zip(parts, others))


def _agreeing(rows, rtol, parts):
    """The rows agreeing with a strict majority of ``rows`` within ``rtol``, part by part (the largest
    group that agrees); ``parts(result)`` splits a result (:func:`_parts`)."""
    vectors = [[_vector(_leaves(part)) for part in parts(row.result)] for row in rows]
    groups = [
        [j for j, other in enumerate(vectors) if _all_close(vector, other, rtol)]
        for vector in vectors
    ]
    largest = max(groups, key=len)
    if 2 * len(largest) <= len(rows):
        return None
    return [rows[j] for j in largest]


def _time_interleaved(runs, arguments, budget):
    """Time ``runs`` (row -> method) in turns, each round in another order, until ``budget`` seconds or MAX_ROUNDS."""
    rows = list(runs)
    repeats = dict.fromkeys(rows, 1)
    perf_counter = time.perf_counter
    deadline = perf_counter() + budget
    collecting = gc.isenabled()
    gc.disable()  # a collection would land on whichever candidate happens to run then
    try:
        rounds = 0
        while True:
            turn = rounds % len(rows)
            for row in rows[turn:] + rows[:turn]:
                run, n = runs[row], repeats[row]
                start = perf_counter()
                for _ in range(n):
                    run(*arguments)
                elapsed = (perf_counter() - start) / n
                row.times.append(elapsed)
                if rounds == 0:
                    repeats[row] = max(1, min(1000, int(SAMPLE_SECONDS / max(elapsed, 1e-9))))
            rounds += 1
            if rounds >= MAX_ROUNDS or perf_counter() >= deadline:
                return rounds
    finally:
        if collecting:
            gc.enable()


def select(selector, candidates, call, strict, one_off):
    """The :class:`~diffinterface.core.transform.Built` preparation of ``call`` by the fastest agreeing
    candidate, for ``selector`` (its implementation's ``selection`` holds the table).

    ``candidates`` are ``(backend, available)`` pairs. Raises
    :class:`~diffinterface.DifferentiationError`, with the table, when no
    candidate prepares or no majority agrees.
    """
    rows, runs, preps, errors = [], {}, {}, []
    valued = 1 if call.y is not None else call.valued
    arguments = call.arguments
    for backend, available in candidates:
        row = Row(backend)
        rows.append(row)
        if not available:
            row.status, row.reason = (
                "not installed",
                "its framework does not import (di.check_available is False)",
            )
            continue
        try:
            # learning a pytree output now spares the prepared calls a later re-preparation
            prep = prepare(
                call._replace(backend=backend), strict, learn_output=True, one_off=one_off
            )
        except Exception as error:  # noqa: BLE001 - a candidate that cannot prepare is dropped, its reason kept
            row.reason = "preparation raised " + _reason(error)
            errors.append(error)
            continue
        run = prep.plan.methods[valued]
        try:
            row.result = run(*arguments)
        except Exception as error:  # noqa: BLE001 - nor one whose first call raises
            error = _explained(error, call, backend)
            row.reason = "its first call raised " + _reason(error)
            errors.append(error)
            continue
        row.status = "agreed"
        runs[row], preps[row] = run, prep
    prepared = [row for row in rows if row in runs]
    rtol = (
        selector.rtol
        if selector.rtol is not None
        else _precision_rtol(_leaves(prepared[0].result))
        if prepared
        else None
    )
    op, has_aux = call.op, call.has_aux
    agreeing = (
        _agreeing(prepared, rtol, lambda result: _parts(op, valued, has_aux, result))
        if prepared
        else None
    )
    if not prepared and errors and all(_same_error(e, errors[0]) for e in errors):
        raise errors[0]  # a bad argument, whichever backend: the error every candidate gave
    if agreeing is None:
        for row in prepared:
            row.status, row.reason = "disagreed", "no majority of the candidates agrees"
        selection = Selection(call.op.name, rows, rtol, 0, None)
        if not prepared and errors and all(type(e) is type(errors[0]) for e in errors):
            _raise_alike(errors[0], selection)
        what = (
            "no candidate prepared"
            if not prepared
            else "the candidates disagree and no majority agrees"
        )
        raise DifferentiationError(
            f"backend: AutoSelect could not choose for {call.op.name}: {what}.\n{selection}\n"
            "Pass candidates=[...] that can differentiate f, or a larger rtol"
        )
    for row in prepared:
        row.result = None  # results are not kept alive by the preparation
        if row not in agreeing:
            row.status, row.reason = "disagreed", f"differs from the majority beyond rtol={rtol:g}"
            del runs[row]
    # an unprepared call selects at every call: one timed round, not the budget each time
    rounds = _time_interleaved(runs, arguments, 0.0 if one_off else selector.time_budget)
    best = min(runs, key=lambda row: row.median)
    best.status = "chosen"
    selection = Selection(call.op.name, rows, rtol, rounds, best.backend)
    chosen = preps[best].plan
    return Built(
        None,
        SelectedImpl(chosen.impl, selection),
        chosen.spec,
        chosen.methods,
        chosen.tree,
        chosen.ytree,
    )
