"""TensorFlow's own recipes, as functions of tensors: ``core(x, [seeds,] *ctx) -> tensors``.

Each is what a TensorFlow user writes inside one ``tf.function``:
``tf.GradientTape`` for reverse mode (``tape.jacobian``, vectorized with
``pfor``, for Jacobians and batches of cotangents), ``tf.autodiff.ForwardAccumulator``
for forward mode (``tf.vectorized_map`` over a batch of tangents, so f is
traced once whatever the batch), and forward-over-reverse (an accumulator
around a tape) for Hessians and Hessian-vector products. ``f`` returns a
tensor (see ``boundary.Boundary.bound``); ``broken`` makes the
GraphBreakError raised where f's output does not depend on x (None: such an
output is a true zero). ``vmap`` maps a function over a batch of seeds:
``tf.vectorized_map`` in traced functions, :func:`.boundary.eager_map` for eager ones.

Every vectorized sweep (``pfor``) goes through :func:`.onednn.vectorized`,
which runs it as a loop of single seeds where vectorizing would make a
batched matmul that TensorFlow's oneDNN kernel computes wrongly; the tapes
that sweep are persistent so that the loop can differentiate them again.
"""

from __future__ import annotations

import tensorflow as tf

from .batching import batched_map, vectorized_map
from .boundary import ForwardThroughBridgeError, connected, forward_mode
from .onednn import vectorized


def _zeros(shape, dtype):
    return tf.zeros(shape, dtype=dtype)


def _whole_jacobian(tape, y, x):
    """``tape.jacobian(y, x)`` (a persistent ``tape``): vectorized, or a loop of rows (see :mod:`.onednn`)."""
    return vectorized(
        lambda: tape.jacobian(y, x), lambda: tape.jacobian(y, x, experimental_use_pfor=False)
    )


def _reverse(f, x, ctx, persistent=False):
    """``(tape, y)``: f recorded at x."""
    with tf.GradientTape(persistent=persistent) as tape:
        tape.watch(x)
        y = f(x, *ctx)
    return tape, y


def _pullback_rows(tape, y, x, cotangents, parallel, broken):
    """The pullbacks of ``cotangents`` (stacked along a first axis), ``parallel`` per vectorized pass, on a
    persistent ``tape``. Not ``tape.jacobian(parallel_iterations=)``: its batches run in a while loop whose
    body gathers y's rows anew, off the tape (its rows came back None); the cotangents enter as output
    gradients instead, which need nothing new recorded."""

    def pullback(u):
        return connected(tape.gradient(y, x, output_gradients=u), x, broken)

    return batched_map(parallel)(pullback, cotangents)


def _jacobian(tape, y, x, parallel, broken):
    """``tape.jacobian(y, x)``, all rows at once (``parallel`` None) or ``parallel`` rows per vectorized pass
    (on a tape made persistent for it, see :func:`_pullback_rows`)."""
    if parallel is None:
        return _whole_jacobian(tape, y, x)
    m = y.shape.num_elements()
    basis = tf.reshape(tf.eye(m, dtype=y.dtype), (m, *y.shape))
    return tf.reshape(_pullback_rows(tape, y, x, basis, parallel, broken), (*y.shape, *x.shape))


def _jvp(f, x, t, ctx, broken):
    with forward_mode(), tf.autodiff.ForwardAccumulator(x, t) as acc:
        y = f(x, *ctx)
    return y, connected(acc.jvp(y), y, broken)


def _seeds(seeds, like):
    """The seeds (a tuple of arrays) stacked along a first axis, in ``like``'s dtype."""
    return tf.stack([tf.cast(s, like.dtype) for s in seeds])


def or_reverse(forward, reverse):
    """``forward``, or ``reverse`` where f holds a DifferentiateWith that refuses forward mode (decided while
    tracing, at preparation for a traced function)."""

    def core(*args):
        try:
            return forward(*args)
        except ForwardThroughBridgeError:
            return reverse(*args)

    return core


def _jvps_by_reverse_jacobian(f, x, seeds, ctx, broken, parallel=None):
    """``(y, [J t for t in seeds])`` from the reverse Jacobian (one pullback per output), for f whose custom
    gradients forward mode cannot see; the pullbacks are not differentiated again, so a bridged first
    derivative (SecondOrder) needs no third derivatives."""
    tape, y = _reverse(f, x, ctx, persistent=True)
    jacobian = _jacobian(tape, y, x, parallel, broken)
    if jacobian is None:  # y does not depend on x
        return y, [connected(None, tf.zeros_like(y), broken) for _ in seeds]
    return y, [tf.tensordot(jacobian, tf.cast(t, x.dtype), axes=len(x.shape)) for t in seeds]


def pushforwards(f, k, broken, vmap=vectorized_map, parallel=None):
    """``core(x, tangents) -> (y, jvps)``: one accumulator, vectorized over a batch (tuples of tangents and jvps;
    one tangent and one jvp themselves, not in tuples)."""
    if k == 1:  # the one tangent itself, not a tuple: tf.function matches a tensor argument fastest

        def core(x, seed, *ctx):
            return _jvp(f, x, tf.cast(seed, x.dtype), ctx, broken)

        def reverse(x, seed, *ctx):
            y, (product,) = _jvps_by_reverse_jacobian(f, x, (seed,), ctx, broken)
            return y, product

        return or_reverse(core, reverse)

    def core(x, seeds, *ctx):
        # f does not depend on the tangent: pfor computes it once, and broadcasts it
        ys, ds = vmap(lambda t: _jvp(f, x, t, ctx, broken), _seeds(seeds, x))
        return ys[0], tuple(tf.unstack(ds))

    def reverse_batch(x, seeds, *ctx):
        y, products = _jvps_by_reverse_jacobian(f, x, seeds, ctx, broken, parallel)
        return y, tuple(products)

    return or_reverse(core, reverse_batch)


def pullbacks(f, k, broken, parallel=None):
    """``core(x, cotangents) -> (y, vjps)``: one tape; a batch is ``tape.jacobian`` of the seeded sums."""
    if k == 1:

        def core(x, seed, *ctx):
            tape, y = _reverse(f, x, ctx)
            return y, connected(
                tape.gradient(y, x, output_gradients=tf.cast(seed, y.dtype)), x, broken
            )

        return core

    def core(x, seeds, *ctx):
        if parallel is not None:
            tape, y = _reverse(f, x, ctx, persistent=True)
            return y, tuple(
                tf.unstack(_pullback_rows(tape, y, x, _seeds(seeds, y), parallel, broken))
            )
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = f(x, *ctx)
            seeded = tf.linalg.matvec(tf.reshape(_seeds(seeds, y), (k, -1)), tf.reshape(y, (-1,)))
        rows = _whole_jacobian(tape, seeded, x)
        return y, tuple(tf.unstack(connected(rows, _zeros((k, *x.shape), x.dtype), broken)))

    return core


def gradient(f, broken):
    def core(x, *ctx):
        tape, y = _reverse(f, x, ctx)
        return y, connected(tape.gradient(y, x), x, broken)

    return core


def tree_gradient(f, unflatten, broken):
    """``core(leaves, *ctx) -> (y, gradients)`` at a pytree x passed as its list of leaves (tensors or
    ``tf.Variable`` objects, each in its own dtype): one tape watching every leaf, as a Keras training step
    does. A leaf f does not use gets zeros, as its part of a flat x would; a y that uses none is ``broken``."""

    def core(leaves, *ctx):
        # f sees tensors, as it would see slices of a flat x: a variable read once per place (inside
        # the graph when traced), so that one variable at two places gets a partial derivative at each
        leaves = [tf.convert_to_tensor(leaf) for leaf in leaves]
        with tf.GradientTape() as tape:
            tape.watch(leaves)
            y = f(unflatten(leaves), *ctx)
        grads = tape.gradient(y, leaves)
        if all(g is None for g in grads):
            return y, [connected(None, leaf, broken) for leaf in leaves]
        return y, [connected(g, leaf, None) for g, leaf in zip(grads, leaves)]

    return core


def reverse_jacobian(f, broken, parallel=None):
    """``core(x) -> (y, J)`` with J of shape ``y.shape + x.shape`` (``tape.jacobian``; a scalar x: the derivative)."""

    def core(x, *ctx):
        tape, y = _reverse(f, x, ctx, persistent=True)
        return y, connected(
            _jacobian(tape, y, x, parallel, broken), _zeros((*y.shape, *x.shape), x.dtype), broken
        )

    return core


def forward_jacobian(f, x_shape, y_shape, broken, vmap=vectorized_map):
    """``core(x) -> (y, J)``: one vectorized accumulator over x's basis, J of shape ``y.shape + x.shape``."""
    n = 1
    for d in x_shape:
        n *= d
    m = 1
    for d in y_shape:
        m *= d

    def core(x, *ctx):
        basis = tf.reshape(tf.eye(n, dtype=x.dtype), (n, *x_shape))
        if n == 1:
            y, column = _jvp(f, x, basis[0], ctx, broken)
            columns = column[None]
        else:
            ys, columns = vmap(lambda t: _jvp(f, x, t, ctx, broken), basis)
            y = ys[0]
        return y, tf.reshape(tf.transpose(tf.reshape(columns, (n, m))), (*y_shape, *x_shape))

    return core


def derivative_forward(f, broken):
    def core(x, *ctx):
        return _jvp(f, x, tf.ones_like(x), ctx, broken)

    return core


def _gradient_and_product(f, x, t, ctx, broken):
    """``(y, gradient, H t)``: forward-over-reverse, an accumulator around a tape."""
    with forward_mode(), tf.autodiff.ForwardAccumulator(x, t) as acc:
        tape, y = _reverse(f, x, ctx)
        g = connected(tape.gradient(y, x), x, broken)
    # a gradient that does not depend on x (f linear in x) has a true zero Hessian
    return y, g, connected(acc.jvp(g), g, None)


def _reverse_over_reverse(f, x, seeds, ctx, broken):
    """``(y, gradient, [H t for t in seeds])``: a persistent tape around a tape, for f whose custom gradients
    TensorFlow's forward mode cannot see (a DifferentiateWith inside); one product per seed."""
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        tape, y = _reverse(f, x, ctx)
        g = connected(tape.gradient(y, x), x, broken)
    return (
        y,
        g,
        [
            connected(outer.gradient(g, x, output_gradients=tf.cast(t, x.dtype)), g, None)
            for t in seeds
        ],
    )


def hvps(f, k, broken, vmap=vectorized_map, stacked=False):
    """``core(x, tangents) -> (y, gradient, hvps)``: a tuple of hvps, or with ``stacked`` one stacked tensor."""
    if k == 1 and not stacked:

        def core(x, seed, *ctx):
            return _gradient_and_product(f, x, tf.cast(seed, x.dtype), ctx, broken)

        def reverse(x, seed, *ctx):
            y, g, (product,) = _reverse_over_reverse(f, x, (seed,), ctx, broken)
            return y, g, product

        return or_reverse(core, reverse)

    def core(x, seeds, *ctx):
        seeds = seeds if stacked else _seeds(seeds, x)
        ys, gs, hvs = vmap(lambda t: _gradient_and_product(f, x, t, ctx, broken), seeds)
        return ys[0], gs[0], hvs if stacked else tuple(tf.unstack(hvs))

    def reverse_batch(x, seeds, *ctx):
        y, g, products = _reverse_over_reverse(
            f, x, tf.unstack(seeds) if stacked else seeds, ctx, broken
        )
        return y, g, tf.stack(products) if stacked else tuple(products)

    return or_reverse(core, reverse_batch)


def hessian(f, x_shape, broken, vmap=vectorized_map):
    """``core(x) -> (y, gradient, H)``: forward-over-reverse over x's basis, H of shape ``x.shape + x.shape``."""
    n = 1
    for d in x_shape:
        n *= d
    hvp_batch = hvps(f, n, broken, vmap, stacked=True)

    def core(x, *ctx):
        basis = tf.reshape(tf.eye(n, dtype=x.dtype), (n, *x_shape))
        y, g, rows = hvp_batch(x, basis, *ctx)
        return y, g, tf.reshape(rows, (*x_shape, *x_shape))

    return core


def _outputs(y):
    """The entries of ``y``, one tensor each (taken while the tape that differentiates them records)."""
    return tf.unstack(tf.reshape(y, (-1,)))


def _per_output(tape, outputs, like, x, broken):
    """dy/dx at a scalar x shaped like ``like`` (y), one gradient per entry of y: unlike the vectorized
    ``tape.jacobian``, a tape around it differentiates it again."""
    return tf.reshape(
        tf.stack([connected(tape.gradient(out, x), x, broken) for out in outputs]), tf.shape(like)
    )


def derivative_by_outputs(f, x, ctx, broken):
    """``(y, dy/dx)`` at a scalar x by reverse mode (see :func:`_per_output`)."""
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x, *ctx)
        outputs = _outputs(y)
    return y, _per_output(tape, outputs, y, x, broken)


def second_derivative(f, broken):
    """``core(x) -> (y, d, d2)`` at a scalar x: two nested accumulators (forward over forward); two nested tapes
    where f holds a DifferentiateWith, whose custom gradients forward mode cannot see."""

    def core(x, *ctx):
        one = tf.ones_like(x)
        with tf.autodiff.ForwardAccumulator(x, one) as outer:
            y, d = _jvp(f, x, one, ctx, broken)
        return y, d, connected(outer.jvp(d), d, None)

    def reverse(x, *ctx):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(x)
            y, d = derivative_by_outputs(f, x, ctx, broken)
            firsts = _outputs(d)
        return y, d, _per_output(outer, firsts, d, x, None)

    return or_reverse(core, reverse)
