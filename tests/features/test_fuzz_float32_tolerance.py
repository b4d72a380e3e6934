"""The fuzz checker's float32 tolerance applies to every array family (TensorFlow's dtypes print otherwise).

The campaign's finding on ``tensorflow-forward`` (a Hessian through two
cumulative products, a matmul and tanh, off by 1.6e-4 relative on its small
entries) was float32 rounding that JAX shows too (1e-4), checked with the
kit's single-function tolerance because a TensorFlow dtype prints as
``<dtype: 'float32'>``, a name no tolerance table knew.
"""

from __future__ import annotations

import numpy as np

import diffinterface as di
from diffinterface.testing.fuzz.checks import Checker, Outcome

import tensorflow as tf

#: the campaign's program and point (seed 7071, on d252ce9)
X = np.asarray([[-0.37, -0.91, -0.89], [0.87, -0.5, 0.53]], dtype=np.float32)


def f(x):
    xp = di.array_namespace(x)
    v1 = xp.cumulative_prod(xp.tanh(x) + 1.5, axis=-1)
    v2 = v1 @ xp.matrix_transpose(v1)
    v3 = 0.5 * v2 + 0.25
    return xp.cumulative_prod(xp.tanh(v3) + 1.5, axis=0)


def g(x):
    xp = di.array_namespace(x)
    return xp.sum(xp.sin(f(x)))


def _checker(outcome):
    x = tf.constant(X)
    return Checker(
        "tensorflow-forward",
        di.AutoTensorFlow(mode="forward"),
        "tensorflow",
        x,
        "g",
        False,
        outcome,
    ), x


def test_a_tensorflow_float32_x_is_checked_as_float32():
    checker, _ = _checker(Outcome())
    assert checker.dtype == "float32"
    assert checker.precision == "float32"


def test_the_campaigns_float32_hessian_is_within_the_chain_tolerance_and_a_wrong_one_is_not():
    reference = np.asarray(di.hessian(g, di.AutoAutograd(), X.astype(np.float64)))
    outcome = Outcome()
    checker, x = _checker(outcome)
    got = di.hessian(g, checker.backend, x)
    checker.compare("hessian", got, reference)
    assert outcome.findings == []
    wrong = got.numpy().copy()
    wrong[0, 0, 0, 0] *= 1.01  # a wrong rule is off by far more than float32 rounding
    checker.compare("hessian", tf.constant(wrong), reference)
    assert len(outcome.findings) == 1
