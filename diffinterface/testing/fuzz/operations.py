"""The array-API operations random programs are built from, each a builder of one :class:`~.programs.Step`.

A builder ``build(pick, a, shape, earlier)`` writes one step on the value named
``a`` of shape ``shape`` (``earlier``: the ``(name, shape)`` of every value before
it, for binary operations), choosing its options with ``pick(options)``; it
returns ``(step, result_shape)``, or ``None`` where the operation does not apply
to that shape. ``OPERATIONS`` maps a family of operations (``"elementwise"``,
``"reduction"``, ``"indexing"``, ``"linalg"``...) to its builders.

    >>> from diffinterface.testing.fuzz.operations import OPERATIONS
    >>> step, shape = OPERATIONS["matmul"][0](lambda options: options[0], "x", (2, 3), [])
    >>> step.expression, shape
    ('x @ xp.matrix_transpose(x)', (2, 2))
"""

from __future__ import annotations

import numpy as np

from .programs import Step

#: smooth everywhere, bounded growth; ``log`` and ``sqrt`` see positive arguments only
SMOOTH_UNARY = (
    "xp.sin({a})",
    "xp.cos({a})",
    "xp.tanh({a})",
    "xp.atan({a})",
    "xp.exp(-({a} ** 2))",
    "xp.log(1 + {a} ** 2)",
    "xp.sqrt(1 + {a} ** 2)",
    "{a} ** 2",
    "xp.expm1(xp.tanh({a}))",
    "1 / (1 + {a} ** 2)",
    "xp.log1p(xp.exp(xp.tanh({a})))",
    "-{a}",
    "0.5 * {a} + 0.25",
    "xp.sinh(xp.tanh({a}))",
    "xp.square({a})",
    "xp.tanh({a}) ** 3",
    "xp.exp(xp.sin({a}))",
)
#: (expression, margin): the margin is the distance to the kink, in numpy
KINKED_UNARY = (
    ("xp.abs({a})", "np.min(np.abs({a}))"),
    ("xp.clip({a}, -0.5, 0.5)", "np.min(np.abs(np.abs({a}) - 0.5))"),
)
SMOOTH_BINARY = (
    "{a} + {b}",
    "{a} - {b}",
    "{a} * {b}",
    "{a} / (1 + {b} ** 2)",
    "xp.atan2({a}, 2 + {b} ** 2)",
    "xp.hypot({a}, 1 + {b} ** 2)",
)
KINKED_BINARY = (
    ("xp.maximum({a}, {b})", "np.min(np.abs({a} - {b}))"),
    ("xp.minimum({a}, {b})", "np.min(np.abs({a} - {b}))"),
    ("xp.where({a} > {b}, xp.sin({a}), {a} * {b})", "np.min(np.abs({a} - {b}))"),
)

#: functions that are not complex-analytic: a program calling one cannot use the complex step
NOT_HOLOMORPHIC = frozenset(
    (
        "abs",
        "clip",
        "maximum",
        "minimum",
        "where",
        "atan2",
        "hypot",
        "max",
        "min",
        "var",
        "std",
        "sort",
        "vecdot",
        "linalg.vector_norm",
        "linalg.cholesky",
        "linalg.eigvalsh",
        "linalg.matrix_norm",
        "linalg.slogdet",
    )
)


def _axes(shape):
    return list(range(len(shape))) + [-1]


def _normal(axis, ndim):
    return axis % ndim


def _reduced(shape, axis, keepdims):
    if axis is None:
        return tuple(1 for _ in shape) if keepdims else ()
    axis = _normal(axis, len(shape))
    return (
        tuple(1 if i == axis else n for i, n in enumerate(shape))
        if keepdims
        else shape[:axis] + shape[axis + 1 :]
    )


def unary(pick, a, shape, earlier):
    if pick((True, False, False, False)):
        expression, margin = pick(KINKED_UNARY)
        return Step(expression.format(a=a), margin.format(a=a)), shape
    return Step(pick(SMOOTH_UNARY).format(a=a)), shape


def binary(pick, a, shape, earlier):
    partners = [(name, s) for name, s in earlier if _broadcasts(shape, s)]
    if not partners:
        return None
    b, other = pick(partners)
    result = tuple(np.broadcast_shapes(shape, other))
    if pick((True, False, False)):
        expression, margin = pick(KINKED_BINARY)
        return Step(expression.format(a=a, b=b), margin.format(a=a, b=b)), result
    return Step(pick(SMOOTH_BINARY).format(a=a, b=b)), result


def _broadcasts(one, other):
    try:
        np.broadcast_shapes(one, other)
    except ValueError:
        return False
    return True


def reduction(pick, a, shape, earlier):
    if not shape:
        return None
    name = pick(("sum", "mean", "prod", "max", "min", "var", "std", "linalg.vector_norm"))
    axis = pick([None] + _axes(shape))
    keepdims = pick((False, True))
    options = ("" if axis is None else f", axis={axis}") + (", keepdims=True" if keepdims else "")
    if name == "var" and pick((False, True)):
        options += ", correction=1"
    along = "" if axis is None else f", axis={axis}"
    margin = None
    if name in ("max", "min"):
        margin = f"gap({a}, {axis})"
    elif name == "std":  # a square root of the variance: a kink where it is zero
        margin = f"np.min(np.std({a}{along}))"
    elif name == "linalg.vector_norm":
        margin = f"np.min(np.sqrt(np.sum({a} ** 2{along})))"
    return Step(f"xp.{name}({a}{options})", margin), _reduced(shape, axis, keepdims)


def cumulative(pick, a, shape, earlier):
    if not shape:
        return None
    axis = pick(_axes(shape))
    if pick((True, False)):
        return Step(f"xp.cumulative_sum({a}, axis={axis})"), shape
    return Step(f"xp.cumulative_prod(xp.tanh({a}) + 1.5, axis={axis})"), shape


def indexing(pick, a, shape, earlier):
    if not shape:
        return None
    choices = [
        (f"{a}[0]", shape[1:]),
        (f"{a}[-1]", shape[1:]),
        (f"{a}[..., ::2]", shape[:-1] + ((shape[-1] + 1) // 2,)),
    ]
    if shape[0] >= 2:
        choices.append((f"{a}[1:]", (shape[0] - 1,) + shape[1:]))
    if len(shape) >= 2:
        choices.append((f"{a}[:, 0]", shape[:1] + shape[2:]))
    axis = pick(_axes(shape))
    choices.append((f"xp.flip({a}, axis={axis})", shape))
    choices.append((f"xp.roll({a}, 1, axis={axis})", shape))
    index = [0, shape[_normal(axis, len(shape))] - 1, 0]
    size = list(shape)
    size[_normal(axis, len(shape))] = 3
    choices.append((f"xp.take({a}, xp.asarray({index}), axis={axis})", tuple(size)))
    expression, result = pick(choices)
    return Step(expression), tuple(result)


def reshaping(pick, a, shape, earlier):
    choices = []
    if len(shape) != 1:
        choices.append((f"xp.reshape({a}, (-1,))", (int(np.prod(shape)),)))
    if len(shape) >= 2:
        choices.append((f"xp.matrix_transpose({a})", shape[:-2] + (shape[-1], shape[-2])))
        order = tuple(reversed(range(len(shape))))
        choices.append((f"xp.permute_dims({a}, {order})", tuple(shape[i] for i in order)))
    if len(shape) <= 2:
        choices.append((f"xp.expand_dims({a}, axis=0)", (1,) + shape))
        choices.append((f"xp.broadcast_to({a}, {(2,) + shape})", (2,) + shape))
    ones = [i for i, n in enumerate(shape) if n == 1]
    if ones:
        choices.append(
            (f"xp.squeeze({a}, axis={ones[0]})", shape[: ones[0]] + shape[ones[0] + 1 :])
        )
    expression, result = pick(choices)
    return Step(expression), result


def joining(pick, a, shape, earlier):
    partners = [name for name, s in earlier if s == shape] or [f"xp.sin({a})"]
    b = pick(partners)
    if shape and pick((True, False)):
        axis = pick(_axes(shape))
        result = list(shape)
        result[_normal(axis, len(shape))] *= 2
        return Step(f"xp.concat([{a}, {b}], axis={axis})"), tuple(result)
    if len(shape) > 2:
        return None
    axis = pick(list(range(len(shape) + 1)))
    return Step(f"xp.stack([{a}, {b}], axis={axis})"), shape[:axis] + (2,) + shape[axis:]


def matmul(pick, a, shape, earlier):
    if len(shape) >= 2:
        if pick((True, False)):
            return Step(f"{a} @ xp.matrix_transpose({a})"), shape[:-1] + (shape[-2],)
        return Step(f"xp.matmul(xp.matrix_transpose({a}), xp.sin({a}))"), shape[:-2] + (
            shape[-1],
            shape[-1],
        )
    if len(shape) == 1:
        return Step(f"xp.vecdot({a}, xp.cos({a}))"), ()
    return None


def sort(pick, a, shape, earlier):
    if not shape:
        return None
    # no descending=True: numpy's own sort, the namespace of numpy arrays, does not take it
    axis = pick(_axes(shape))
    return Step(f"xp.sort({a}, axis={axis})", f"gap({a}, {axis})"), shape


def linalg(pick, a, shape, earlier):
    """Functions of ``M = a @ a.T + 2 I`` (symmetric positive definite: every function is smooth there)."""
    if len(shape) < 2:
        return None
    n = shape[-2]
    m = f"({a} @ xp.matrix_transpose({a}) + 2 * xp.eye({n}, dtype={a}.dtype))"
    batch = shape[:-2]
    choices = [
        (f"xp.linalg.det({m})", batch, None),
        (f"xp.linalg.inv({m})", batch + (n, n), None),
        (f"xp.linalg.cholesky({m})", batch + (n, n), None),
        (f"xp.linalg.slogdet({m})[1]", batch, None),
        (f"xp.linalg.solve({m}, {a})", shape, None),
        (
            f"xp.linalg.eigvalsh({m})",
            batch + (n,),
            f"gap(np.linalg.eigvalsh({a} @ np.swapaxes({a}, -1, -2)), -1)",
        ),
        (f"xp.linalg.matrix_norm({a})", batch, f"np.min(np.linalg.norm({a}, axis=(-2, -1)))"),
    ]
    expression, result, margin = pick(choices)
    return Step(expression, margin), result


#: family of operations -> its builders
OPERATIONS = {
    "elementwise": (unary, binary),
    "reduction": (reduction,),
    "cumulative": (cumulative,),
    "indexing": (indexing,),
    "reshaping": (reshaping,),
    "joining": (joining,),
    "matmul": (matmul,),
    "sort": (sort,),
    "linalg": (linalg,),
}
