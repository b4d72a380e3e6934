"""Random pytree functions (mixed leaf kinds) and random sparse programs, and their checks on one backend.

A tree function ``g(p)`` is scalar: a random smooth function of each leaf,
summed, plus a product of two leaves' sums (so leaves are coupled); its
gradient, pullback and pushforward are checked leaf by leaf, each leaf's
result in that leaf's kind and dtype (a Python float's is float64). A sparse
program is a :class:`~.programs.Program` on a vector whose Jacobian has a
random banded or block pattern; ``di.AutoSparse(backend)``'s jacobian (of
``f``) and hessian (of ``g``) must equal the dense reference.

    >>> import numpy as np
    >>> print(tree_source({"a": np.ones(2), "b": (0.5, np.float32(1.0))}, ["xp.sin({a})", "{a} ** 2", "xp.cos({a})"]))
    def g(p):
        leaves = [p['a'], p['b'][0], p['b'][1]]
        xp = di.array_namespace(*leaves)
        return xp.sum(xp.sin(leaves[0])) + xp.sum(leaves[1] ** 2) + xp.sum(xp.cos(leaves[2])) + xp.sum(leaves[0]) * xp.sum(leaves[1])
"""

from __future__ import annotations

import numpy as np

import diffinterface as di

from ..families import is_container, to_numpy, tree_leaves, tree_map
from .checks import Checker, Outcome, applies, differenced_size
from .programs import Program, Step, point_source
from .reference import tree_reference


def _paths(tree, prefix="p"):
    if isinstance(tree, dict):
        return [path for k in sorted(tree) for path in _paths(tree[k], f"{prefix}[{k!r}]")]
    if isinstance(tree, (tuple, list)):
        return [path for i, v in enumerate(tree) for path in _paths(v, f"{prefix}[{i}]")]
    return [prefix]


def tree_source(tree, expressions):
    """The source of ``g(p)`` for a tree like ``tree``: ``expressions[i]`` (with ``{a}``) applied to leaf ``i``."""
    paths = _paths(tree)
    terms = [f"xp.sum({e.format(a=f'leaves[{i}]')})" for i, e in enumerate(expressions)]
    if len(paths) > 1:
        terms.append("xp.sum(leaves[0]) * xp.sum(leaves[1])")
    return "\n".join(
        [
            "def g(p):",
            f"    leaves = [{', '.join(paths)}]",
            "    xp = di.array_namespace(*leaves)",
            f"    return {' + '.join(terms)}",
        ]
    )


def _leaf_source(leaf):
    if isinstance(leaf, float):
        return repr(leaf)
    if isinstance(leaf, np.ndarray):
        return point_source(leaf)
    # str() of a NumPy scalar of its own dtype: the shortest text that rounds back to it
    return f"np.{np.asarray(leaf).dtype.name}({str(np.asarray(leaf)[()])})"


def _tree_value_source(tree):
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_tree_value_source(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, tuple):
        return "(" + "".join(f"{_tree_value_source(v)}, " for v in tree) + ")"
    if isinstance(tree, list):
        return "[" + ", ".join(_tree_value_source(v) for v in tree) + "]"
    return _leaf_source(tree)


def check_tree(tree, expressions, backend_id, backend, rng, zero=False):
    """``gradient``, ``pullback`` and ``pushforward`` of a random scalar tree function at ``tree`` on ``backend``."""
    function = tree_source(tree, expressions)
    source = "\n".join(
        [
            "import numpy as np",
            "import diffinterface as di",
            "",
            function,
            "",
            f"p = {_tree_value_source(tree)}",
        ]
    )
    names = {"np": np, "di": di}
    exec(compile(function, "<fuzz tree program>", "exec"), names)  # noqa: S102 - our own generated source
    g = names["g"]
    reference = tree_reference(g, tree_map(lambda leaf: np.asarray(leaf, dtype=np.float64), tree))
    gradient = tree_leaves(reference["gradient"])
    outcome = Outcome()
    given = tree_leaves(tree)
    # f couples leaves 0 and 1 (a product of their sums): each is computed at the lower precision of
    # the two
    coupled = _lowest(given[:2])
    checkers = [
        Checker(
            backend_id, backend, "numpy", leaf, source, zero, outcome, coupled if i < 2 else None
        )
        for i, leaf in enumerate(given)
    ]
    for checker in checkers:
        checker.differenced = differenced_size(reference)
    first = checkers[0]

    def compare_leaves(operator, got, expected):
        if not _same_structure(got, tree):
            first.finding(operator, f"expected a result with p's structure; got {got!r}")
            return
        for checker, leaf, want in zip(checkers, tree_leaves(got), expected):
            checker.compare(operator, leaf, want)

    got = first.call("gradient", lambda: di.value_and_gradient(g, backend, tree))
    if got is not None:
        compare_leaves("gradient", got[1], gradient)
    # a Python float where y is float64; y's own dtype otherwise (diffinterface does not lower a
    # float's precision)
    value = np.asarray(g(tree))
    cotangent = float(rng.uniform(0.5, 1.5))
    if value.dtype != np.float64:
        cotangent = np.asarray(cotangent, dtype=value.dtype)
    got = first.call("pullback", lambda: di.pullback(g, backend, tree, (cotangent,)))
    if got is not None:
        compare_leaves("pullback", got[0], [cotangent * np.asarray(want) for want in gradient])
    tangent = tree_map(lambda leaf: _like(leaf, rng), tree)
    got = first.call("pushforward", lambda: di.pushforward(g, backend, tree, (tangent,)))
    if got is not None:
        expected = sum(
            float(np.sum(np.asarray(want) * to_numpy(t)))
            for want, t in zip(gradient, tree_leaves(tangent))
        )
        # shaped like y, in y's dtype: the promotion of the leaves' dtypes that g itself computes
        checker = Checker(
            backend_id, backend, "numpy", value, source, zero, outcome, _lowest(given)
        )
        checker.differenced = differenced_size(reference)
        checker.compare("pushforward", got[0], np.float64(expected), order=1)
    return outcome


def _lowest(leaves):
    return "float32" if any(np.asarray(leaf).dtype == np.float32 for leaf in leaves) else "float64"


def _like(leaf, rng):
    """A random tangent leaf of ``leaf``'s kind and dtype."""
    value = rng.uniform(-1.0, 1.0, np.shape(leaf)).round(2)
    if isinstance(leaf, float):
        return float(value)
    if isinstance(leaf, np.ndarray):
        return np.asarray(value, dtype=leaf.dtype)
    return type(leaf)(value)


def _same_structure(got, tree):
    if isinstance(tree, dict):
        return (
            isinstance(got, dict)
            and sorted(got) == sorted(tree)
            and all(_same_structure(got[k], tree[k]) for k in tree)
        )
    if isinstance(tree, (tuple, list)):
        return (
            isinstance(got, type(tree))
            and len(got) == len(tree)
            and all(_same_structure(a, b) for a, b in zip(got, tree))
        )
    return not is_container(got)


def sparse_program(n, pattern, width, expressions):
    """A program on ``(n,)`` whose Jacobian is ``"banded"`` (``width`` diagonals above the main one) or
    ``"block"`` diagonal (blocks of ``width``): its terms apply ``expressions`` (with ``{a}``)."""
    steps = [Step(expressions[0].format(a="x"))]
    if pattern == "banded":
        for k in range(1, width + 1):
            shifted = f"{expressions[k % len(expressions)].format(a=f'x[{k}:]')} * x[:-{k}]"
            steps.append(Step(f"v{len(steps)} + xp.concat([{shifted}, xp.zeros_like(x[:{k}])])"))
    else:
        blocks = f"xp.reshape(x, ({n // width}, {width}))"
        steps.append(
            Step(
                f"xp.reshape({expressions[-1].format(a=blocks)} * xp.sum({blocks} ** 2, axis=1, "
                f"keepdims=True), (-1,))"
            )
        )
        steps.append(Step("v1 + v2"))
    return Program((n,), tuple(steps))


def check_sparse(program, point, backend_id, backend, reference, zero=False):
    """``AutoSparse(backend)``'s jacobian of ``f`` and hessian of ``g`` against the dense reference."""
    from ..sparse import to_dense_numpy

    f, g = program.functions()
    outcome = Outcome()
    if not applies(backend, program.source()):
        return outcome
    checker = Checker(
        backend_id + " (AutoSparse)",
        di.AutoSparse(backend),
        "numpy",
        point,
        program.source(point),
        zero,
        outcome,
    )
    checker.differenced = differenced_size(reference)
    n = point.size
    for operator, function, expected in (
        ("jacobian", f, reference["jacobian"].reshape(-1, n)),
        ("hessian", g, reference["hessian"].reshape(n, n)),
    ):
        got = checker.call(
            operator, lambda: getattr(di, operator)(function, checker.backend, point)
        )
        if got is not None:
            checker.compare(operator, to_dense_numpy(got), expected)
    return outcome
