"""The kit's cases for auxiliary outputs (``has_aux=True``), one per backend and operator.

``f`` returns ``(y, aux)`` with an aux mixing arrays computed from x, a
string, an int, a float, None and a nested tuple. Each case checks, for its
backend and operator (the operators taking seeds with one seed and with
three: a batch takes other recipes, vectorized ones among them; x an array,
x a dict of two arrays (``-tree``: the core hands the adapter a flat copy of
x), or an output that is a dict (``-ytree``: the adapter differentiates a
flattened f)):

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
  (``capabilities.traces_without_values`` of the adapter) that evaluates f no more: its
  compiled code computes f at x, so its aux comes from there. An adapter
  whose recipe for an operator cannot return aux from there declares it
  (``capabilities.aux_evaluated_again``): its calls may evaluate f once more.

    >>> from diffinterface.testing.aux_scenarios import aux_cases
    >>> import diffinterface as di
    >>> [c.id for c in aux_cases({"fd": di.AutoFiniteDiff()}, operators=("pushforward",))]  # doctest: +NORMALIZE_WHITESPACE
    ['fd-has_aux-pushforward', 'fd-has_aux-pushforward-3seeds', 'fd-has_aux-pushforward-tree',
     'fd-has_aux-pushforward-tree-3seeds', 'fd-has_aux-pushforward-ytree', 'fd-has_aux-pushforward-ytree-3seeds']
    >>> aux_cases({"fd": di.AutoFiniteDiff()}, operators=("gradient",))[1].check().status
    'passed'
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from ..errors import PreparationMismatchError
from ..families import array_namespace, as_numpy, is_array
from .cases import ProbeCase
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


def _tree_vector_f(x):
    xp = array_namespace(x["a"])
    return xp.sin(x["a"]) * x["a"] * xp.sum(x["b"] * x["b"])


def _tree_scalar_f(x):
    xp = array_namespace(x["a"])
    return xp.sum(xp.sin(x["a"]) * x["a"] * x["a"]) + xp.sum(x["b"] * x["b"] * x["b"]) * xp.sum(
        x["a"]
    )


#: operator -> (f, seeds) at a dict x of two leaves (``_TREE_SHAPES``); operators of a scalar or
#: array x only (derivative, second derivative) have no tree case
_TREE_OPERATORS = {
    "pushforward": (_tree_vector_f, "x"),
    "pullback": (_tree_vector_f, "y"),
    "gradient": (_tree_scalar_f, None),
    "jacobian": (_tree_vector_f, None),
    "hvp": (_tree_scalar_f, "x"),
    "hessian": (_tree_scalar_f, None),
}
_TREE_SHAPES = {"a": (2,), "b": (3,)}


def _dict_output_f(x):
    xp = array_namespace(x)
    return {"sine": xp.sin(x) * x, "square": x * x}


#: operators whose output may be a pytree, with their seeds, for the cases of a dict output
#: (``-ytree``)
_TREE_OUTPUT_OPERATORS = {"pushforward": "x", "pullback": "y", "jacobian": None}


def _aux_arrays(x):
    """``(sum of the squares of x's leaves, twice x's first leaf)``: the arrays of aux, in x's family."""
    leaves = _leaves(x)
    xp = array_namespace(leaves[0])
    return sum(xp.sum(leaf * leaf) for leaf in leaves), 2 * leaves[0]


def _with_aux(f):
    def f_with_aux(x):
        squares, double = _aux_arrays(x)
        return f(x), {"label": _LABEL, "stats": (squares, _COUNT, _SCALE, None), "double": double}

    return f_with_aux


class _CountingAtX(CountingFunction):
    """``f`` counted, noting whether an evaluation had x's values (unwrapped as the backend records them)."""

    def __init__(self, f, primal):
        super().__init__(f)
        self.primal, self.x, self.at_x, self.traced = primal, None, False, False

    def __call__(self, *args):
        if self.x is not None and not self.at_x:
            try:
                given, wanted = _leaves(args[0]), _leaves(self.x)
                self.at_x = len(given) == len(wanted) and all(
                    np.array_equal(as_numpy(self.primal(g)), w) for g, w in zip(given, wanted)
                )
            except Exception:  # noqa: BLE001 - a traced value: no values to compare
                self.traced = True
        return super().__call__(*args)

    def watch(self, x):
        self.x, self.at_x, self.traced = x, False, False


def _point(shape, shift=0.0):
    if isinstance(shape, dict):
        return {
            key: _point(leaf_shape, shift + 0.1 * i)
            for i, (key, leaf_shape) in enumerate(shape.items())
        }
    n = int(np.prod(shape))
    return (np.linspace(0.3, 1.2, n).reshape(shape) + shift) if shape else np.asarray(0.7 + shift)


def _tangent(shape, k):
    if isinstance(shape, dict):
        return {
            key: _tangent(leaf_shape, k + i) for i, (key, leaf_shape) in enumerate(shape.items())
        }
    return np.linspace(-1.0, 1.0 + k, int(np.prod(shape)) or 1).reshape(shape)


def _filled_like(tree, value):
    if isinstance(tree, dict):
        return {key: _filled_like(leaf, value) for key, leaf in tree.items()}
    return np.full_like(np.asarray(tree), value)


def _leaves(tree):
    """The leaves of nested tuples, lists and dicts (dicts in key order, as every pytree library)."""
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
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
        if (
            aux["label"] is not _LABEL
            or len(others) != 3
            or any(got is not wanted for got, wanted in zip(others, (_COUNT, _SCALE, None)))
        ):
            self.found.append(
                f"{what}: aux's string, int, float and None are not the objects f returned: {aux!r}"
            )
        squares, double = _aux_arrays(x)
        for name, leaf, wanted in (
            ("stats[0]", aux["stats"][0], squares),
            ("double", aux["double"], double),
        ):
            if not is_array(leaf):
                self.found.append(f"{what}: aux[{name}] is {type(leaf).__name__}, not an array")
            elif getattr(leaf, "requires_grad", False):
                self.found.append(f"{what}: aux[{name}] still records gradients")
            elif not np.allclose(as_numpy(leaf), wanted, rtol=1e-12, atol=1e-12):
                self.found.append(
                    f"{what}: aux[{name}] = {as_numpy(leaf)!r}, not its value at x, {wanted!r}"
                )

    def mismatch(self, what, call):
        try:
            call()
        except PreparationMismatchError as error:
            if not re.search("has_aux", str(error)):
                self.found.append(
                    f"{what}: PreparationMismatchError without naming has_aux: {error}"
                )
        except Exception as error:  # noqa: BLE001 - reported
            self.found.append(
                f"{what}: expected PreparationMismatchError naming has_aux; got {type(error).__name__}: {error}"
            )
        else:
            self.found.append(f"{what}: no error")


@dataclasses.dataclass
class AuxCase(ProbeCase):
    """One backend and one operator with ``has_aux=True`` (and ``n_seeds`` seeds where it takes seeds);
    ``check()`` raises on failure."""

    n_seeds: int = 1
    #: x a dict of two arrays (``_TREE_SHAPES``) instead of an array
    tree: bool = False
    #: f's output a dict of two arrays
    output_tree: bool = False
    kind = "has_aux"

    @property
    def id(self):
        return (
            super().id
            + ("-tree" if self.tree else "")
            + ("-ytree" if self.output_tree else "")
            + (f"-{self.n_seeds}seeds" if self.n_seeds != 1 else "")
        )

    def _run(self, found):
        self._check(_Check(found))

    def _check(self, check):
        import diffinterface as di

        if self.tree:
            (f, seeds_like), shape = _TREE_OPERATORS[self.operator], _TREE_SHAPES
        elif self.output_tree:
            f, shape, seeds_like = _dict_output_f, (3,), _TREE_OUTPUT_OPERATORS[self.operator]
        else:
            f, shape, seeds_like = _OPERATORS[self.operator]
        name, backend = self.operator, self.backend
        plain_op, prepare = getattr(di, name), getattr(di, "prepare_" + name)
        valued_op = getattr(di, di.core.OPERATORS[name].valued)
        n_values = di.core.OPERATORS[name].n_values
        x, x2 = _point(shape), _point(shape, 0.25)
        seeds = (
            ()
            if seeds_like is None
            else tuple(
                (_tangent(shape, k) if seeds_like == "x" else _filled_like(f(x), 1.0 + k))
                for k in range(self.n_seeds)
            )
        )
        seeded = (seeds,) if seeds else ()
        adapter = di.core.get_adapter(backend)
        primal = di.core.aux.primal_of(adapter)
        #: a compiled preparation's call evaluating f nowhere computes f at x in its compiled code
        compiled_aux = adapter.capabilities.traces_without_values
        declared = di.core.OPERATORS[name].listed_in(adapter.capabilities.aux_evaluated_again)
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
        (prep, g_aux), with_aux, _, (aux_plain2, aux_valued2, aux_plain1, aux_valued1) = costs(
            f_aux, True
        )
        for what, got, wanted, at in (
            ("prepared", aux_plain2, plain2, x2),
            ("unprepared", aux_plain1, plain1, x),
        ):
            if not (isinstance(got, tuple) and len(got) == 2):
                check.found.append(
                    f"{what} {name}: expected (result, aux); got {type(got).__name__}"
                )
                continue
            check.same(f"{what} {name}'s result", got[0], wanted)
            check.aux(f"{what} {name}'s aux", got[1], at)
        for what, got, wanted, at in (
            ("prepared", aux_valued2, valued2, x2),
            ("unprepared", aux_valued1, valued1, x),
        ):
            if n_values:
                (value, aux), rest = got[0], got[1:]
                check.same(f"{what} value form's value", value, wanted[0])
                check.same(f"{what} value form's derivatives", rest, wanted[1:])
            else:
                derivatives, aux = got
                check.same(f"{what} value form's results", derivatives, wanted)
            check.aux(f"{what} value form's aux", aux, at)
        labels = (
            "preparation",
            "prepared call",
            "prepared value-and call",
            "unprepared call",
            "unprepared value-and call",
        )
        for i, label in enumerate(labels):
            allowed = without[i] + (0 if at_x[i] and not (i and declared) else 1)
            if with_aux[i] > allowed:
                check.found.append(
                    f"{label} with has_aux evaluated f {with_aux[i]} times; {allowed} allowed "
                    f"(without aux: {without[i]}, {'' if at_x[i] else 'not '}at x)"
                )
        check.mismatch(
            "a has_aux=True preparation called without has_aux",
            lambda: plain_op(g_aux, backend, x, *seeded, prep=prep),
        )
        check.mismatch(
            "a preparation without has_aux called with has_aux=True",
            lambda: plain_op(g, backend, x, *seeded, prep=plain_prep, has_aux=True),
        )


def aux_cases(backends, operators=None):
    """An :class:`AuxCase` per backend (a selector or a dict id -> selector) and operator, one more with
    :data:`BATCH_OF_SEEDS` seeds per operator taking seeds, and the same at a dict x (``-tree``) and with a
    dict output (``-ytree``) for the operators that take them."""
    if not isinstance(backends, dict):
        backends = {type(backends).__name__: backends}
    cases = []
    for k, b in backends.items():
        for op, (_f, _shape, seeds_like) in _OPERATORS.items():
            if operators is not None and op not in operators:
                continue
            batches = (1,) if seeds_like is None else (1, BATCH_OF_SEEDS)
            cases += [AuxCase(k, b, op, n) for n in batches]
            if op in _TREE_OPERATORS:
                cases += [AuxCase(k, b, op, n, tree=True) for n in batches]
            if op in _TREE_OUTPUT_OPERATORS:
                cases += [AuxCase(k, b, op, n, output_tree=True) for n in batches]
    return cases
