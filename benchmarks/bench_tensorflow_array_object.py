"""What the array API's array object on TensorFlow tensors costs: diffinterface's calls and the user's eager code.

    python -m benchmarks.bench_tensorflow_array_object [--rounds N]

``diffinterface/backends/tensorflow/array_object.py`` puts ``x.T``, ``x.mT``,
``@`` with 1-d operands... on TensorFlow's tensor classes once, answering the
array API's way in a thread that holds them. Two costs follow, each measured
as the ratio of medians of two states called in alternation in one process
(the order swapped every round):

- *a prepared gradient* (``sum(x**2)``, n = 10, float64 tf.Tensor x), traced
  (``AutoTensorFlow()``) and eager (``jit=False``): the holding (a
  thread-local count around each call of f) against the same call with
  the holding made a no-op. A traced prepared call runs the traced graph and
  holds nothing: its ratio is the measurement's noise;
- *eager TensorFlow code outside diffinterface* (a 4 x 4 ``@``, an index, and
  both among a sum, a transpose and ``.shape``): the classes with the array
  object in place against TensorFlow's own classes (the attributes set back as
  they were).

Each ratio is the median over rounds of the two states' ratio in that round.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from .timing import sample


def _user_code(tf):
    """Eager TensorFlow code of a user: the operators the array object wraps (``@``, indexing) alone
    and among others."""
    a = tf.constant(np.linspace(-1.0, 1.0, 16).reshape(4, 4))
    b = tf.constant(np.eye(4))

    def mixed():
        c = a @ b
        return tf.reduce_sum(c[0] * tf.transpose(c)[1]) + c.shape[0]

    return {"a @ b (4 x 4)": lambda: a @ b, "a[0]": lambda: a[0], "@, [], sum, transpose": mixed}


def _class_states(tf, array_object):
    """``(own, installed)``: setters of TensorFlow's tensor classes' dicts before and after the install."""
    from tensorflow.python.framework.weak_tensor import WeakTensor

    classes = (tf.Tensor, tf.Variable, WeakTensor)
    before = {cls: dict(cls.__dict__) for cls in classes}
    with array_object.held():
        pass
    changed = {
        cls: {
            name: (before[cls].get(name), value)
            for name, value in cls.__dict__.items()
            if before[cls].get(name) is not value
        }
        for cls in classes
    }

    def setter(which):
        def put():
            for cls, names in changed.items():
                for name, pair in names.items():
                    if pair[which] is None:
                        if name in cls.__dict__:
                            delattr(cls, name)
                    else:
                        setattr(cls, name, pair[which])

        return put

    return setter(0), setter(1)


def _ratio(call, states, rounds, loops):
    """The median over rounds of (seconds per call in state 1) / (in state 0), and both medians (us)."""
    times = ([], [])
    for r in range(rounds):
        for which in (0, 1) if r % 2 == 0 else (1, 0):
            states[which]()
            times[which].append(sample(call, loops))
    ratios = [other / own for own, other in zip(*times)]
    medians = [statistics.median(t) * 1e6 for t in times]
    return statistics.median(ratios), *medians


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--loops", type=int, default=200)
    args = parser.parse_args()

    import tensorflow as tf

    import diffinterface as di
    from diffinterface.backends.tensorflow import array_object

    def f(x):
        xp = di.array_namespace(x)
        return xp.sum(x**2)

    # TensorFlow's own classes, read before anything puts the array object in place
    own, installed = _class_states(tf, array_object)
    x = tf.constant(np.linspace(-1.0, 1.0, 10))
    hold, release = array_object.hold, array_object.release

    def holding(on):
        def put():
            array_object.hold, array_object.release = (
                (hold, release) if on else (lambda: 0, lambda depth: None)
            )

        return put

    def hold_and_release():
        release(hold())

    per_pair = statistics.median(sample(hold_and_release, 100_000) for _ in range(5))
    print(f"hold() and release() around one call of f: {per_pair * 1e9:.0f} ns")
    print("| what | without (us) | with (us) | ratio with / without |")
    print("|---|---|---|---|")
    for name, backend in (
        ("prepared gradient, traced", di.AutoTensorFlow()),
        ("prepared gradient, eager (jit=False)", di.AutoTensorFlow(jit=False)),
    ):
        prep = di.prepare_gradient(f, backend, x)

        def call(backend=backend, prep=prep):
            return di.gradient(f, backend, x, prep=prep)

        ratio, without, with_ = _ratio(
            call, (holding(False), holding(True)), args.rounds, args.loops
        )
        print(f"| {name} | {without:.1f} | {with_:.1f} | {ratio:.3f} |")
    holding(True)()
    for name, call in _user_code(tf).items():
        ratio, without, with_ = _ratio(call, (own, installed), args.rounds, args.loops)
        print(f"| eager TensorFlow code, {name} | {without:.1f} | {with_:.1f} | {ratio:.3f} |")
    installed()


if __name__ == "__main__":
    main()
