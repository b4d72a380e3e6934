"""The kit's cases for auxiliary outputs (``has_aux=True``), one per backend and operator.

``f`` returns ``(y, aux)`` with an aux mixing arrays computed from x, a
string, an int, a float, None and a nested tuple. Each case checks, for its
backend and operator (the operators taking seeds with one seed and with
three: a batch takes other recipes, vectorized ones among them):

- the results equal the same backend's results without aux (unprepared,
  prepared, value-and forms), in JAX's layout (``op`` -> ``(result, aux)``,
  ``value_and_op`` -> ``((value, aux), result)``);
- aux is as computed at the call's x (not at a point a finite difference
  visits): its arrays hold the values at x, are arrays, record no gradient;
  its other leaves are the very objects f returned;
- a preparation made with ``has_aux=True`` and called without it (and the
  reverse) raises ``PreparationMismatchError`` naming ``has_aux``;
- f is evaluated (or traced) no more often than without aux: while
  preparing, and in every call, but once more where the call without aux
  computes f nowhere at x (central differences and the complex step evaluate
  it beside x only, the zero backends not at all): aux at x needs that one
  evaluation. A traced evaluation (JAX's tracers: no values to compare)
  counts as one at x, and so does a call of a compiled preparation
  (``traces_without_values`` on the adapter) that evaluates f no more: its
  compiled code computes f at x, so its aux comes from there. An adapter
  whose recipe for an operator cannot return aux from there declares it
  (``aux_evaluated_again``): its calls may evaluate f once more.

    >>> from diffinterface.testing.aux_scenarios import aux_cases
    >>> import diffinterface as di
    >>> [c.id for c in aux_cases({"fd": di.AutoFiniteDiff()})][:3]
    ['fd-has_aux-pushforward', 'fd-has_aux-pushforward-3seeds', 'fd-has_aux-pullback']
    >>> aux_cases({"fd": di.AutoFiniteDiff()})[4].check().status
    'passed'
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from ..errors import PreparationMismatchError
from ..families import array_namespace, as_numpy, is_array
from .cases import CaseResult
from .counting import CountingFunction

#: the non-array leaves of aux: the very objects must come back
_LABEL = "computed at x"
_COUNT = 7
_SCALE = 0.5
#: seeds of the second case of an operator taking seeds
BATCH_OF_SEEDS = 3


def _vector_f(x):
    xp = array_namespace(x)
    return xp.sin(x) * x


def _scalar_f(x):
    xp = array_namespace(x)
    return xp.sum(xp.sin(x) * x * x)


#: operator -> (f, x shape, seeds: None, "x" (tangents like x) or "y" (cotangents like f(x)))
_OPERATORS = {
    "pushforward": (_vector_f, (3,), "x"),
    "pullback": (_vector_f, (3,), "y"),
    "derivative": (_vector_f, (), None),
    "gradient": (_scalar_f, (3,), None),
    "jacobian": (_vector_f, (3,), None),
    "second_derivative": (_vector_f, (), None),
    "hvp": (_scalar_f, (3,), "x"),
    "hessian": (_scalar_f, (3,), None),
}


def _with_aux(f):
    def f_with_aux(x):
        xp = array_namespace(x)
        return f(x), {"label": _LABEL, "stats": (xp.sum(x * x), _COUNT, _SCALE, None), "double": 2 * x}

    return f_with_aux


class _CountingAtX(CountingFunction):
    """``f`` counted, noting whether an evaluation had x's values (unwrapped as the backend records them)."""

    def __init__(self, f, primal):
        super().__init__(f)
        self.primal, self.x, self.at_x, self.traced = primal, None, False, False

    def __call__(self, *args):
        if self.x is not None and not self.at_x:
            try:
                self.at_x = bool(np.array_equal(as_numpy(self.primal(args[0])), self.x))
            except Exception:  # noqa: BLE001 - a traced value: no values to compare
                self.traced = True
        return super().__call__(*args)

    def watch(self, x):
        self.x, self.at_x, self.traced = x, False, False


def _point(shape, shift=0.0):
    n = int(np.prod(shape))
    return (np.linspace(0.3, 1.2, n).reshape(shape) + shift) if shape else np.asarray(0.7 + shift)


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


class _Check:
    """What one case found, as sentences (``found``)."""

    def __init__(self, found):
        self.found = found

    def same(self, what, got, wanted, rtol=1e-12):
        got_leaves, wanted_leaves = _leaves(got), _leaves(wanted)
        if len(got_leaves) != len(wanted_leaves):
            self.found.append(f"{what}: {len(got_leaves)} arrays, expected {len(wanted_leaves)}")
            return
        for g, w in zip(got_leaves, wanted_leaves):
            if not np.allclose(as_numpy(g), as_numpy(w), rtol=rtol, atol=rtol):
                self.found.append(f"{what}: {as_numpy(g)!r}, expected {as_numpy(w)!r}")
                return

    def aux(self, what, aux, x):
        if not isinstance(aux, dict) or set(aux) != {"label", "stats", "double"}:
            self.found.append(f"{what}: aux {aux!r} is not the dict f returned")
            return
        others = aux["stats"][1:]
        if aux["label"] is not _LABEL or len(others) != 3 or any(
                got is not wanted for got, wanted in zip(others, (_COUNT, _SCALE, None))):
            self.found.append(f"{what}: aux's string, int, float and None are not the objects f returned: {aux!r}")
        for name, leaf, wanted in (("stats[0]", aux["stats"][0], np.sum(x * x)), ("double", aux["double"], 2 * x)):
            if not is_array(leaf):
                self.found.append(f"{what}: aux[{name}] is {type(leaf).__name__}, not an array")
            elif getattr(leaf, "requires_grad", False):
                self.found.append(f"{what}: aux[{name}] still records gradients")
            elif not np.allclose(as_numpy(leaf), wanted, rtol=1e-12, atol=1e-12):
                self.found.append(f"{what}: aux[{name}] = {as_numpy(leaf)!r}, not its value at x, {wanted!r}")

    def mismatch(self, what, call):
        try:
            call()
        except PreparationMismatchError as error:
            if not re.search("has_aux", str(error)):
                self.found.append(f"{what}: PreparationMismatchError without naming has_aux: {error}")
        except Exception as error:  # noqa: BLE001 - reported
            self.found.append(f"{what}: expected PreparationMismatchError naming has_aux; got {type(error).__name__}: {error}")
        else:
            self.found.append(f"{what}: no error")


@dataclasses.dataclass
class ProbeCase:
    """One backend and one operator under a probe (``kind``); ``_run(found)`` notes what it finds as sentences."""

    backend_id: str
    backend: object
    operator: str
    kind = "probe"

    @property
    def id(self):
        return f"{self.backend_id}-{self.kind}-{self.operator}"

    def run(self) -> CaseResult:
        found: list = []
        try:
            self._run(found)
        except Exception as error:  # noqa: BLE001 - reported; a backend that fails to import included, never a skip
            found.append(f"raised {type(error).__name__}: {error}")
        status = "failed" if found else "passed"
        return CaseResult(self.backend_id, f"{self.kind}-{self.operator}", self.operator, "numpy", status, found)

    def check(self):
        """The :class:`CaseResult`; AssertionError listing what was found when the case failed."""
        result = self.run()
        if result.status == "failed":
            raise AssertionError(result.message())
        return result

    def _run(self, found):
        raise NotImplementedError


@dataclasses.dataclass
class AuxCase(ProbeCase):
    """One backend and one operator with ``has_aux=True`` (and ``n_seeds`` seeds where it takes seeds);
    ``check()`` raises on failure."""

    n_seeds: int = 1
    kind = "has_aux"

    @property
    def id(self):
        return super().id + (f"-{self.n_seeds}seeds" if self.n_seeds != 1 else "")

    def _run(self, found):
        self._check(_Check(found))

    def _check(self, check):
        import diffinterface as di

        f, shape, seeds_like = _OPERATORS[self.operator]
        name, backend = self.operator, self.backend
        plain_op, prepare = getattr(di, name), getattr(di, "prepare_" + name)
        valued_op = getattr(di, di.core.OPERATORS[name].valued)
        n_values = di.core.OPERATORS[name].n_values
        x, x2 = _point(shape), _point(shape, 0.25)
        seeds = () if seeds_like is None else tuple(
            (np.linspace(-1.0, 1.0 + k, int(np.prod(shape)) or 1).reshape(shape) if seeds_like == "x"
             else np.full_like(np.asarray(f(x)), 1.0 + k)) for k in range(self.n_seeds))
        seeded = (seeds,) if seeds else ()
        adapter = di.core.get_adapter(backend)
        primal = di.core.aux.primal_of(adapter)
        #: a compiled preparation's call evaluating f nowhere computes f at x in its compiled code
        compiled_aux = getattr(adapter, "traces_without_values", False)
        declared = di.core.OPERATORS[name].listed_in(adapter.aux_evaluated_again)
        f_aux = _with_aux(f)

        def costs(function, has_aux):
            """Evaluations of (preparation, plain call, value-and call, unprepared plain, unprepared value-and),
            and whether each call evaluated f at x's values. Each unprepared call gets a new function object:
            JAX reuses a trace of the same function, which would hide evaluations from the count."""
            g = prepared_g = _CountingAtX(function, primal)
            prep = prepare(g, backend, x, *seeded, has_aux=has_aux)
            counts, at_x, outcomes = [g.take()], [True], []
            for at, prepared in ((x2, prep), (x, None)):
                for op in (plain_op, valued_op):
                    if prepared is None:
                        g = _CountingAtX(function, primal)
                    g.watch(at)
                    outcomes.append(op(g, backend, at, *seeded, prep=prepared, has_aux=has_aux))
                    counts.append(g.take())
                    compiled_at_x = prepared is not None and counts[-1] == 0 and compiled_aux
                    at_x.append(g.at_x or g.traced or compiled_at_x)
            return (prep, prepared_g), counts, at_x, outcomes

        (plain_prep, g), without, at_x, (plain2, valued2, plain1, valued1) = costs(f, False)
        (prep, g_aux), with_aux, _, (aux_plain2, aux_valued2, aux_plain1, aux_valued1) = costs(f_aux, True)
        for what, got, wanted, at in (("prepared", aux_plain2, plain2, x2), ("unprepared", aux_plain1, plain1, x)):
            if not (isinstance(got, tuple) and len(got) == 2):
                check.found.append(f"{what} {name}: expected (result, aux); got {type(got).__name__}")
                continue
            check.same(f"{what} {name}'s result", got[0], wanted)
            check.aux(f"{what} {name}'s aux", got[1], at)
        for what, got, wanted, at in (("prepared", aux_valued2, valued2, x2), ("unprepared", aux_valued1, valued1, x)):
            if n_values:
                (value, aux), rest = got[0], got[1:]
                check.same(f"{what} value form's value", value, wanted[0])
                check.same(f"{what} value form's derivatives", rest, wanted[1:])
            else:
                derivatives, aux = got
                check.same(f"{what} value form's results", derivatives, wanted)
            check.aux(f"{what} value form's aux", aux, at)
        labels = ("preparation", "prepared call", "prepared value-and call", "unprepared call",
                  "unprepared value-and call")
        for i, label in enumerate(labels):
            allowed = without[i] + (0 if at_x[i] and not (i and declared) else 1)
            if with_aux[i] > allowed:
                check.found.append(f"{label} with has_aux evaluated f {with_aux[i]} times; {allowed} allowed "
                                   f"(without aux: {without[i]}, {'' if at_x[i] else 'not '}at x)")
        check.mismatch("a has_aux=True preparation called without has_aux",
                       lambda: plain_op(g_aux, backend, x, *seeded, prep=prep))
        check.mismatch("a preparation without has_aux called with has_aux=True",
                       lambda: plain_op(g, backend, x, *seeded, prep=plain_prep, has_aux=True))


def aux_cases(backends, operators=None):
    """An :class:`AuxCase` per backend (a selector or a dict id -> selector) and operator, and one more with
    :data:`BATCH_OF_SEEDS` seeds per operator taking seeds."""
    if not isinstance(backends, dict):
        backends = {type(backends).__name__: backends}
    names = [op for op in _OPERATORS if operators is None or op in operators]
    return [AuxCase(k, b, op, n) for k, b in backends.items() for op in names
            for n in ((1,) if _OPERATORS[op][2] is None else (1, BATCH_OF_SEEDS))]
