"""Scenarios whose x or y is a pytree: dicts, nested tuples, namedtuples, mixed dtypes, an MLP's parameters.

Expected results are analytic and use the layout of ``jax.grad`` /
``jax.jacobian`` / ``jax.hessian`` (gradients shaped like x; a Jacobian of an
array output is a tree like x with leaves ``y.shape + leaf.shape``; a Jacobian
of a pytree output is a tree like y whose leaf ``[k]`` is the Jacobian of
``y[k]``; a Hessian is a tree like x of trees like x). Pytree outputs ``y``
(dicts, tuples) are covered for jacobian, pushforward and pullback, whose
cotangents are then trees like ``y``.

    >>> from diffinterface.testing import pytree_scenarios
    >>> sorted({s.operator for s in pytree_scenarios()})
    ['gradient', 'hessian', 'hvp', 'jacobian', 'pullback', 'pushforward']
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..families import array_namespace
from .scenarios import Scenario

#: a namedtuple node, as users write for (weights, bias) pairs
Layer = namedtuple("Layer", ["w", "b"])


def _x(shape, dtype, start=0.3):
    n = int(np.prod(shape))
    return (start + 0.2 * np.arange(n, dtype=np.float64)).reshape(shape).astype(dtype)


def _polynomial(a, b):
    """``sum(a**3) + sum(a) * sum(b**2)``: value, gradient (ga, gb), Hessian blocks."""
    xp = array_namespace(a, b)
    return xp.sum(a**3) + xp.sum(a) * xp.sum(b**2)


def _polynomial_derivatives(a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    value = np.sum(a64**3) + np.sum(a64) * np.sum(b64**2)
    ga = 3 * a64**2 + np.sum(b64**2)
    gb = 2 * b64 * np.sum(a64)
    haa = np.diag(6 * a64)
    hab = np.broadcast_to(2 * b64, (a.size, *b.shape)).copy()
    hba = np.moveaxis(hab, 0, -1)
    hbb = (2 * np.sum(a64) * np.eye(b.size)).reshape((*b.shape, *b.shape))
    return value, ga, gb, (haa, hab, hba, hbb)


def _dict_scenarios():
    a, b = _x((3,), "float64"), _x((2, 2), "float64", 0.1)
    x = {"a": a, "b": b}
    value, ga, gb, (haa, hab, hba, hbb) = _polynomial_derivatives(a, b)

    def f(t):
        return _polynomial(t["a"], t["b"])

    grad = {"a": ga, "b": gb}
    hess = {"a": {"a": haa, "b": hab}, "b": {"a": hba, "b": hbb}}
    t = {"a": np.array([1.0, -0.5, 0.25]), "b": np.array([[0.5, 0.0], [-1.0, 2.0]])}
    ht = {
        "a": haa @ t["a"] + hab.reshape(3, 4) @ t["b"].reshape(4),
        "b": (hba.reshape(4, 3) @ t["a"] + hbb.reshape(4, 4) @ t["b"].reshape(4)).reshape(2, 2),
    }
    return [
        Scenario(
            "gradient", f, x, value=np.float64(value), first=grad, name="gradient-dict-float64"
        ),
        Scenario(
            "hessian",
            f,
            x,
            value=np.float64(value),
            first=grad,
            second=hess,
            name="hessian-dict-float64",
        ),
        Scenario(
            "hvp",
            f,
            x,
            tangents=(t,),
            value=np.float64(value),
            first=grad,
            second=(ht,),
            name="hvp-dict-float64",
        ),
    ]


def _vector_output_scenarios():
    """``f({"a", "b"}) = a * sum(b)``: pullback, pushforward and the nested Jacobian."""
    a, b = _x((3,), "float64"), _x((2, 2), "float64", 0.1)
    x = {"a": a, "b": b}

    def f(t):
        xp = array_namespace(t["a"], t["b"])
        return t["a"] * xp.sum(t["b"])

    value = a * np.sum(b)
    jac = {"a": np.sum(b) * np.eye(3), "b": np.broadcast_to(a[:, None, None], (3, 2, 2)).copy()}
    c = np.array([1.0, -2.0, 0.5])
    pull = {"a": np.sum(b) * c, "b": np.full((2, 2), c @ a)}
    t = {"a": np.array([0.5, 1.0, -1.0]), "b": np.array([[1.0, 0.0], [0.0, -0.5]])}
    push = np.sum(b) * t["a"] + a * np.sum(t["b"])
    return [
        Scenario("jacobian", f, x, value=value, first=jac, name="jacobian-dict_to_vector-float64"),
        Scenario(
            "pullback",
            f,
            x,
            tangents=(c, -c),
            value=value,
            first=(pull, {k: -v for k, v in pull.items()}),
            name="pullback-dict_to_vector-batched-float64",
        ),
        Scenario(
            "pushforward",
            f,
            x,
            tangents=(t,),
            value=value,
            first=(push,),
            name="pushforward-dict_to_vector-float64",
        ),
    ]


def _nested_tuple_scenario():
    """``x = (a, (b, c))`` with a Python float leaf ``c``: ``f = sum(a**3) * c + sum(a) * sum(b**2)``."""
    a, b, c = _x((2,), "float64"), _x((3,), "float64", 0.5), 1.5

    def f(t):
        a, (b, c) = t
        xp = array_namespace(a, b)
        return xp.sum(a**3) * c + xp.sum(a) * xp.sum(b**2)

    value = np.sum(a**3) * c + np.sum(a) * np.sum(b**2)
    first = (3 * a**2 * c + np.sum(b**2), (2 * b * np.sum(a), np.array(np.sum(a**3))))
    return Scenario(
        "gradient",
        f,
        (a, (b, c)),
        value=np.float64(value),
        first=first,
        name="gradient-nested_tuple-float64",
    )


def _mixed_dtype_scenario():
    """A namedtuple ``Layer(w float32 (2, 2), b float64 (2,))``: each gradient keeps its leaf's dtype."""
    w, b = _x((2, 2), "float32"), _x((2,), "float64", 0.2)

    def f(layer):
        xp = array_namespace(layer.w, layer.b)
        return xp.sum(layer.w**2) * 0.5 + xp.sum(layer.b**3)

    value = 0.5 * np.sum(w.astype(np.float64) ** 2) + np.sum(b**3)
    first = Layer(w.copy(), 3 * b**2)
    return Scenario(
        "gradient",
        f,
        Layer(w, b),
        value=np.float64(value),
        first=first,
        name="gradient-namedtuple_mixed_dtypes-float32",
    )


def _mlp_scenario():
    """Squared error of a one-hidden-layer tanh MLP, as a function of its parameter dict."""
    rng = np.random.default_rng(12)
    inputs, targets = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    params = {
        "w1": 0.5 * rng.normal(size=(3, 4)),
        "b1": 0.1 * rng.normal(size=(4,)),
        "w2": 0.5 * rng.normal(size=(4, 2)),
        "b2": 0.1 * rng.normal(size=(2,)),
    }

    def f(p):
        xp = array_namespace(p["w1"])
        h = xp.tanh(xp.asarray(inputs) @ p["w1"] + p["b1"])
        r = h @ p["w2"] + p["b2"] - xp.asarray(targets)
        return xp.sum(r**2) * 0.5

    h = np.tanh(inputs @ params["w1"] + params["b1"])
    r = h @ params["w2"] + params["b2"] - targets
    dh = (r @ params["w2"].T) * (1 - h**2)
    first = {"w1": inputs.T @ dh, "b1": dh.sum(0), "w2": h.T @ r, "b2": r.sum(0)}
    return Scenario(
        "gradient",
        f,
        params,
        value=np.float64(0.5 * np.sum(r**2)),
        first=first,
        name="gradient-mlp_parameters-float64",
    )


def _dict_output_scenarios():
    """``f(x) = {"a": x**2, "b": sum(x**3)}`` of an array x: a y-tree for jacobian, pushforward, pullback."""
    x = _x((3,), "float64")

    def f(x):
        xp = array_namespace(x)
        return {"a": x**2, "b": xp.sum(x**3)}

    value = {"a": x**2, "b": np.float64(np.sum(x**3))}
    value = {"a": value["a"], "b": np.asarray(value["b"])}
    jac = {"a": np.diag(2 * x), "b": 3 * x**2}
    t1, t2 = np.array([1.0, -0.5, 0.25]), np.array([0.0, 2.0, -1.0])
    push = tuple({"a": 2 * x * t, "b": np.asarray(3 * x**2 @ t)} for t in (t1, t2))
    c = {"a": np.array([1.0, -2.0, 0.5]), "b": np.asarray(1.5)}
    pull = 2 * x * c["a"] + c["b"] * 3 * x**2
    return [
        Scenario("jacobian", f, x, value=value, first=jac, name="jacobian-vector_to_dict-float64"),
        Scenario(
            "pushforward",
            f,
            x,
            tangents=(t1, t2),
            value=value,
            first=push,
            name="pushforward-vector_to_dict-batched-float64",
        ),
        Scenario(
            "pullback",
            f,
            x,
            tangents=(c,),
            value=value,
            first=(pull,),
            name="pullback-vector_to_dict-float64",
        ),
    ]


def _tuple_output_scenarios():
    """``f({"a", "b"}) = (a * sum(b), sum(a**2))``: a tuple y of a dict x, the Jacobian a tuple of dicts."""
    a, b = _x((3,), "float64"), _x((2, 2), "float64", 0.1)
    x = {"a": a, "b": b}

    def f(t):
        xp = array_namespace(t["a"], t["b"])
        return (t["a"] * xp.sum(t["b"]), xp.sum(t["a"] ** 2))

    value = (a * np.sum(b), np.asarray(np.sum(a**2)))
    jac = (
        {"a": np.sum(b) * np.eye(3), "b": np.broadcast_to(a[:, None, None], (3, 2, 2)).copy()},
        {"a": 2 * a, "b": np.zeros((2, 2))},
    )
    c = (np.array([1.0, -2.0, 0.5]), np.asarray(0.5))
    pull = {"a": np.sum(b) * c[0] + 2 * c[1] * a, "b": np.full((2, 2), c[0] @ a)}
    return [
        Scenario("jacobian", f, x, value=value, first=jac, name="jacobian-dict_to_tuple-float64"),
        Scenario(
            "pullback",
            f,
            x,
            tangents=(c,),
            value=value,
            first=(pull,),
            name="pullback-dict_to_tuple-float64",
        ),
    ]


def _mixed_dtype_output_scenario():
    """``f({"w" float32, "b" float64}) = {"w": 3 w, "b": b**2}``: each output leaf keeps its dtype."""
    w, b = _x((2,), "float32"), _x((2,), "float64", 0.2)
    x = {"w": w, "b": b}

    def f(t):
        return {"w": 3 * t["w"], "b": t["b"] ** 2}

    t = {"w": np.array([1.0, -1.0], dtype=np.float32), "b": np.array([0.5, 2.0])}
    value = {"w": 3 * w, "b": b**2}
    push = {"w": (3 * t["w"]).astype(np.float32), "b": 2 * b * t["b"]}
    return Scenario(
        "pushforward",
        f,
        x,
        tangents=(t,),
        value=value,
        first=(push,),
        name="pushforward-mixed_dtype_dict_to_dict-float32",
    )


def pytree_scenarios(operators=None):
    """Scenarios with a pytree x for gradient, pullback, pushforward, jacobian, hvp and hessian.

    Parameters
    ----------
    operators : str or sequence of str, optional
        Keep only the pytree scenarios of these operators (default: all of them); a name with no
        pytree scenario selects none.

    Returns
    -------
    list of Scenario
        Scenarios whose x or output is a dict, a tuple or a nested container.

    Examples
    --------
    >>> from diffinterface.testing import pytree_scenarios
    >>> [s.name for s in pytree_scenarios("pushforward")]  # doctest: +NORMALIZE_WHITESPACE
    ['pushforward-dict_to_vector-float64', 'pushforward-vector_to_dict-batched-float64',
     'pushforward-mixed_dtype_dict_to_dict-float32']
    """
    scenarios = [
        *_dict_scenarios(),
        *_vector_output_scenarios(),
        _nested_tuple_scenario(),
        _mixed_dtype_scenario(),
        _mlp_scenario(),
        *_dict_output_scenarios(),
        *_tuple_output_scenarios(),
        _mixed_dtype_output_scenario(),
    ]
    if operators is None:
        return scenarios
    if isinstance(operators, str):
        operators = (operators,)
    return [s for s in scenarios if s.operator in operators]
