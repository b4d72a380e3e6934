"""AutoTensorFlow: the array API's array object on tensors inside f, and TensorFlow's own tensors everywhere else.

Inside f (every TensorFlow mode, traced and eager) tensors answer ``x.T``,
``x.mT``, ``x.size``, ``+x``, ``x << k``, ``x.__array_namespace__()`` and
``x.to_device(d)`` as the standard says (the kit's ``array_object_syntax``
probes check ``.T``, ``.mT`` and ``@`` on every backend). Outside
diffinterface's calls (the user's eager code, f called by the user under a
``tf.GradientTape``, another thread while one differentiates) a tensor is
TensorFlow's own: same attributes, same errors.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

import diffinterface as di
from diffinterface.families import tensorflow_namespace

import tensorflow as tf

from tests.paths import ROOT

BACKENDS = [
    di.AutoTensorFlow(),
    di.AutoTensorFlow(mode="forward"),
    di.AutoTensorFlow(mode="reverse"),
    di.AutoTensorFlow(jit=False),
]
IDS = ["default", "forward", "reverse", "eager"]
X = np.array([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]])


def _uses_every_added_attribute(x):
    xp = x.__array_namespace__()
    assert xp is tensorflow_namespace
    three = xp.asarray(3) << 1 >> 1  # an int tensor: 3
    moved = x.to_device(x.device)
    # every entry times size * 3 = 18, through +, T, mT
    return xp.sum(+moved.T.mT * x.size * xp.astype(three, x.dtype))


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_the_array_objects_attributes_and_operators_inside_f(backend):
    gradient = di.gradient(
        _uses_every_added_attribute,
        backend,
        X,
        prep=di.prepare_gradient(_uses_every_added_attribute, backend, X),
    )
    np.testing.assert_allclose(gradient, np.full(X.shape, 18.0))


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_a_matrix_transpose_of_a_vector_is_refused_naming_x_mt(backend):
    with pytest.raises(ValueError, match=r"x\.mT.*at least 2"):
        di.gradient(lambda x: tensorflow_namespace.sum(x.mT), backend, X[0])


def _item_assigned(x):
    x[0] = 1.0
    return x


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
@pytest.mark.parametrize(
    ("f", "around"),
    [
        (lambda x: tensorflow_namespace.sum(x[[0, 1]]), r"x\[i, j\].*xp\.take"),
        (_item_assigned, r"immutable.*xp\.where"),
    ],
    ids=["list_index", "item_assignment"],
)
def test_what_tensorflow_cannot_do_is_refused_naming_the_way_around(backend, f, around):
    x = X.copy()
    with pytest.raises(ValueError, match=around):
        di.jacobian(f, backend, x)


def _tensorflows_own(x):
    """What TensorFlow answers for each added syntax on ``x`` (an eager tensor, a variable, a graph tensor)."""
    answers = {}
    for name in ("T", "mT", "size", "__array_namespace__", "to_device"):
        answers[name] = hasattr(x, name)
    for what, call in (
        ("+x", lambda: +x),
        ("x << 1", lambda: x << 1),
        ("x >> 1", lambda: x >> 1),
        ("1 << x", lambda: 1 << x),
        ("numpy << x", lambda: np.array([1]) << x),
        ("vector @ x", lambda: tf.ones(3, x.dtype) @ x),
        ("x @ vector", lambda: x @ tf.ones(2, x.dtype)),
        ("x[[0, 1]]", lambda: x[[0, 1]]),  # TensorFlow's x[0, 1]
    ):
        try:
            call()
            answers[what] = "answered"
        except (TypeError, ValueError, tf.errors.InvalidArgumentError) as error:
            answers[what] = type(error).__name__
    return answers


def _answers_outside():
    x = tf.constant(X.T)
    graph = {}

    @tf.function(autograph=False)
    def traced(x):
        graph.update(_tensorflows_own(x))
        return x

    traced(x)
    return {
        "eager": _tensorflows_own(x),
        "variable": _tensorflows_own(tf.Variable(x)),
        "graph": graph,
    }


def test_outside_diffinterface_tensors_are_tensorflows_own():
    # the syntax is put in place by the first call of diffinterface in this process: compare what
    # TensorFlow answers before (in a fresh process) and after, in this one
    code = (
        "from tests.backends.test_tensorflow_array_object import _answers_outside; "
        "print(repr(_answers_outside()))"
    )
    before = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()
    di.gradient(_uses_every_added_attribute, di.AutoTensorFlow(), X)
    after = _answers_outside()
    assert repr(after) == before.splitlines()[-1]
    assert not any(after["eager"][name] for name in ("T", "mT", "size", "__array_namespace__"))
    assert after["eager"]["+x"] == "TypeError"
    with pytest.raises(AttributeError, match="numpy-related methods"):
        tf.constant(X).T  # TensorFlow's own message, pointing at its numpy behaviour
    assert not hasattr(tf.Variable(X), "ndim")


def test_f_called_by_the_user_under_a_tape_sees_tensorflows_own_tensors():
    def f(x):
        return tf.reduce_sum(x.T @ x)

    backend = di.AutoTensorFlow()
    np.testing.assert_allclose(di.gradient(f, backend, X), 2 * X @ np.ones((3, 3)))
    x = tf.constant(X)
    with tf.GradientTape() as tape, pytest.raises(AttributeError, match="'T'"):
        tape.watch(x)
        f(x)


def test_another_thread_sees_tensorflows_own_tensors_while_one_differentiates():
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def waits_inside(x):
        inside.set()
        done.wait(timeout=60)
        return tf.reduce_sum(x.T)

    worker = threading.Thread(
        target=lambda: di.gradient(waits_inside, di.AutoTensorFlow(jit=False), X)
    )
    worker.start()
    try:
        assert inside.wait(timeout=60)
        x = tf.constant(X)
        seen["T"] = hasattr(x, "T")
        try:
            tf.ones(2, x.dtype) @ x
            seen["@"] = "answered"
        except tf.errors.InvalidArgumentError:
            seen["@"] = "refused"
    finally:
        done.set()
        worker.join(timeout=60)
    assert seen == {"T": False, "@": "refused"}
