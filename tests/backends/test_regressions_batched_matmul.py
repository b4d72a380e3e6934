"""TensorFlow's oneDNN batched matmul defect: detected in traced graphs, routed around, never run.

Every test here traces graphs and reads them; none runs a faulty matmul (it can
abort the process). The conformance probe ``batched-matmul-batch-one`` runs the
fixed route on every backend.
"""

from __future__ import annotations

import pytest

import tensorflow as tf

from diffinterface.backends.tensorflow import onednn, recipes  # noqa: E402
from diffinterface.testing.regressions.batched_matmul import X, stacked_product  # noqa: E402


def _traced(core, *specs):
    return tf.function(core, autograph=False).get_concrete_function(*specs).graph


def _matmul_graph(left, right, dtype=tf.float32, **adjoints):
    return _traced(
        lambda a, b: tf.matmul(a, b, **adjoints),
        tf.TensorSpec(left, dtype),
        tf.TensorSpec(right, dtype),
    )


@pytest.mark.parametrize(
    ("left", "right", "dtype"),
    [
        ((16, 1, 4, 4), (4, 3), tf.float32),
        ((16, 1, 4, 4), (1, 4, 3), tf.float32),
        ((2, 1, 64, 64), (1, 1, 64, 64), tf.float32),
        ((16, 1, 4, 4), (4, 3), tf.bfloat16),
    ],
)
def test_the_faulty_shapes_are_recognized(left, right, dtype):
    assert len(onednn.faulty_operations(_matmul_graph(left, right, dtype))) == 1


@pytest.mark.parametrize(
    ("left", "right", "dtype"),
    [
        ((16, 1, 4, 4), (4, 3), tf.float64),  # Eigen, not oneDNN
        ((16, 2, 4, 4), (4, 3), tf.float32),  # second dimension not 1
        ((16, 1, 4, 4), (16, 1, 4, 3), tf.float32),  # right operand not broadcast
        ((16, 4, 4), (4, 3), tf.float32),  # rank 3
        ((1, 1, 4, 4), (16, 1, 4, 3), tf.float32),  # the left operand is the broadcast one
    ],
)
def test_the_right_shapes_are_left_alone(left, right, dtype):
    assert onednn.faulty_operations(_matmul_graph(left, right, dtype)) == []


def test_faulty_matmuls_are_found_inside_nested_functions():
    def looped(a, b):
        return tf.while_loop(
            lambda i, acc: i < 2,
            lambda i, acc: (i + 1, acc + tf.matmul(a, b)),
            (0, tf.zeros((16, 1, 4, 3))),
        )[1]

    graph = _traced(looped, tf.TensorSpec((16, 1, 4, 4)), tf.TensorSpec((4, 3)))
    assert len(onednn.faulty_operations(graph)) == 1


def _live(graph):
    """The faulty matmuls among the operations ``graph``'s outputs depend on (the unused route is pruned when
    the function runs), nested functions included."""
    live, pending = {}, [t.op for t in graph.outputs]
    while pending:
        operation = pending.pop()
        if operation.name not in live:
            live[operation.name] = operation
            pending.extend(t.op for t in operation.inputs)
            pending.extend(operation.control_inputs)
    return onednn.faulty_operations(graph, list(live.values()))


def _x_spec():
    return tf.TensorSpec(X.shape, tf.float32)


def test_native_jacobian_makes_the_faulty_matmul():
    """What the route avoids: TensorFlow's own tape.jacobian of the probe's function (traced, not run)."""

    def native(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = stacked_product(x)
        return tape.jacobian(y, x)

    assert _live(_traced(native, _x_spec()))


@pytest.mark.parametrize(
    "sweep",
    [
        "reverse_jacobian",
        "forward_jacobian",
        "pullbacks",
        "pushforwards",
        "hessian",
        "batched_pullbacks",
    ],
)
def test_sweeps_hold_no_faulty_matmul(sweep, monkeypatch):
    monkeypatch.setattr(
        onednn, "ONEDNN_ON", True
    )  # the graphs are read, never run: any machine checks them
    n, seeds = X.size, (tf.ones((1, 4, 4)), 2 * tf.ones((1, 4, 4)), 3 * tf.ones((1, 4, 4)))
    tangents = tuple(tf.one_hot(k, n, dtype=tf.float32)[None] for k in range(3))
    cores = {
        "reverse_jacobian": (recipes.reverse_jacobian(stacked_product, None), ()),
        "forward_jacobian": (
            recipes.forward_jacobian(stacked_product, X.shape, (1, 4, 4), None),
            (),
        ),
        "pullbacks": (recipes.pullbacks(stacked_product, 3, None), (seeds,)),
        "batched_pullbacks": (recipes.pullbacks(stacked_product, 3, None, parallel=2), (seeds,)),
        "pushforwards": (recipes.pushforwards(stacked_product, 3, None), (tangents,)),
        "hessian": (
            recipes.hessian(lambda x: tf.reduce_sum(tf.sin(stacked_product(x))), X.shape, None),
            (),
        ),
    }
    core, extra = cores[sweep]
    graph = _traced(
        lambda x, *rest: core(x, *rest),
        _x_spec(),
        *[tf.nest.map_structure(tf.TensorSpec.from_tensor, e) for e in extra],
    )
    assert _live(graph) == []


def test_a_faulty_matmul_of_f_itself_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(onednn, "ONEDNN_ON", True)

    def f(x):  # f's own matmul is the faulty shape: no route avoids it
        return tf.matmul(tf.reshape(tf.tile(x, (1, 16)), (8, 1, 4, 4)), tf.ones((4, 3)))

    core = recipes.forward_jacobian(
        f, (1, 8), (8, 1, 4, 3), None
    )  # f traced again inside the sweep
    with pytest.raises(onednn.FaultyBatchMatMulError, match="TF_ENABLE_ONEDNN_OPTS=0"):
        _traced(core, tf.TensorSpec((1, 8), tf.float32))


def test_a_roll_along_a_negative_axis_is_not_vectorized():
    """pfor adds 1 to a roll's axis: axis=-1 would roll the seeds (the rows came back permuted)."""
    from diffinterface.testing.regressions.rolled_axes import rolled

    def native(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = rolled(x)
        return tape.jacobian(y, x)

    spec = tf.TensorSpec((2, 3), tf.float64)
    # the native graph: a roll along -1 in the rows' loop (the gradient's), then pfor's roll along 0
    assert onednn.faulty_operations(
        _traced(native, spec), faulty=onednn.rolls_along_a_negative_axis
    )
    core = recipes.reverse_jacobian(rolled, None)
    graph = _traced(core, spec)
    loops = [op for op in graph.get_operations() if op.type in ("While", "StatelessWhile")]
    assert loops, "the sweep runs as a loop of single rows"
