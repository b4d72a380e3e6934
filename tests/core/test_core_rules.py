"""The core consumes every operator through its row and the rules its module registers."""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import OPERATORS, RULES


@pytest.mark.parametrize("name", list(OPERATORS))
def test_every_operator_registers_its_rules(name):
    op, rules = OPERATORS[name], RULES[name]
    assert callable(rules.fallback) and callable(rules.empty)
    assert (rules.flat_x is None) == op.scalar_x  # a scalar x is never a pytree
    assert (rules.flat_y is not None) == op.tree_output
    assert op.fallback_mode in ("forward", "reverse", "smaller side")


def test_a_preparation_cannot_be_changed():
    prep = di.prepare_gradient(lambda x: (x**2).sum(), di.AutoFiniteDiff(), np.ones(2))
    with pytest.raises(AttributeError, match="a Preparation cannot be changed"):
        prep.strict = False


def test_the_signature_check_serves_arrays_seeds_contexts_and_trees_alike():
    backend = di.AutoFiniteDiff()

    def f(x, c):
        return c * x**2

    x, t = np.ones(3), (np.ones(3),)
    prep = di.prepare_pushforward(f, backend, x, t, di.Constant(2.0))
    (result,) = di.pushforward(f, backend, 2 * x, t, di.Constant(3.0), prep=prep)
    np.testing.assert_allclose(result, 12 * x, rtol=1e-6)
    with pytest.raises(di.PreparationMismatchError, match=r"tangents: MISMATCH"):
        di.pushforward(f, backend, x, (np.ones(4),), di.Constant(2.0), prep=prep)
    with pytest.raises(di.PreparationMismatchError, match=r"contexts: MISMATCH"):
        di.pushforward(f, backend, x, t, di.Constant(np.ones(2)), prep=prep)
    tree = {"a": np.ones(2), "b": 1.0}
    g = lambda tree: (tree["a"] ** 2).sum() * tree["b"]  # noqa: E731
    prep = di.prepare_gradient(g, backend, tree)
    assert di.gradient(g, backend, {"a": np.full(2, 2.0), "b": 1.0}, prep=prep)[
        "a"
    ] == pytest.approx([4.0, 4.0])
    with pytest.raises(di.PreparationMismatchError, match=r"x: MISMATCH, leaf \['a'\]"):
        di.gradient(g, backend, {"a": np.ones(3), "b": 1.0}, prep=prep)


def _solve(x):
    xp = di.array_namespace(x)
    return xp.linalg.solve(2.0 * xp.eye(x.shape[0], dtype=x.dtype), x)


def test_tracer_detector_names_the_operation_asdex_cannot_handle():
    import asdex  # noqa: F401 - a missing framework fails

    backend = di.AutoSparse(di.AutoFiniteDiff(), sparsity_detector=di.TracerSparsityDetector())
    with pytest.raises(
        di.UnsupportedError,
        match=r"(?s)asdex.*cannot handle one of its operations.*f itself is fine",
    ) as info:
        di.jacobian(_solve, backend, np.linspace(0.1, 1.0, 4))
    assert "di.array_namespace" not in str(
        info.value
    )  # f already uses it: that advice would mislead
    assert "DenseSparsityDetector" in str(info.value)


def test_tracer_detector_tells_a_numpy_f_to_use_the_namespace():
    import asdex  # noqa: F401 - a missing framework fails

    backend = di.AutoSparse(di.AutoFiniteDiff(), sparsity_detector=di.TracerSparsityDetector())
    with pytest.raises(
        di.UnsupportedError, match=r"(?s)JAX, which could not trace it.*di.array_namespace"
    ):
        di.jacobian(lambda x: np.sin(x), backend, np.linspace(0.1, 1.0, 4))
