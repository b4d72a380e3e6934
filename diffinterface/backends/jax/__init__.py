"""AutoJAX: ``jax.jvp`` and ``jax.vjp``, every operator compiled with ``jax.jit`` at preparation (eager unprepared).

    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoJAX()
    >>> f = lambda x: (x ** 2).sum()
    >>> prep = di.prepare_gradient(f, backend, np.array([1.0, 2.0]))
    >>> di.gradient(f, backend, np.array([1.0, 2.0]), prep=prep)
    array([2., 4.])

Both primitives are native, and every operator is JAX's own recipe, jitted:

=================  ========================================  ==========================
operator           ``mode=None``                             ``mode=`` forward/reverse
=================  ========================================  ==========================
pushforward        ``jvp``; a batch is ``vmap(jvp)``          same
pullback           ``vjp``; a batch is ``vmap`` of its VJP    same
derivative         ``jvp`` with tangent 1                     reverse: ``grad`` (scalar
                                                              output) or ``jacrev``
gradient           ``grad`` / ``value_and_grad``              forward: ``jacfwd``
jacobian           ``jacfwd`` when ``x.size <= y.size``,      ``jacfwd`` / ``jacrev``
                   else ``jacrev``
hessian            ``jacfwd(grad)`` (``jax.hessian``)         forward: ``jacfwd(jacfwd)``,
                                                              reverse: ``jacrev(grad)``
hvp                ``jvp`` of ``grad``, ``vmap`` over the     forward: ``jvp`` of the
                   tangents                                   ``jacfwd`` gradient;
                                                              reverse: ``vjp`` of ``grad``
second_derivative  ``jacfwd(jvp)``                            reverse: ``jacrev(jacrev)``
=================  ========================================  ==========================

``value_and_*`` variants come from the same pass (``has_aux``): no second
evaluation. A batch of tangents is one compiled call for the whole batch.

Preparation learns the output's shape and dtype with ``jax.eval_shape`` (a
trace, no numeric work) and compiles each function for the given shapes
(``jit(...).lower(...).compile()``), so prepared calls neither trace nor
compile. ``Constant`` (and ``Cache``) values made of arrays and numbers are
traced arguments of the compiled function: a new value of the same shape and
dtype reuses the compiled code. Other context values (strings, callables...)
are static arguments: a new value recompiles. Each preparation traces and
compiles its own functions (a new preparation sees f's globals and
attributes as they are now). An unprepared call compiles nothing: it runs
eagerly, as ``jax.grad`` does, so it sees f as it is at that call and f may
branch on x's values there. ``AutoJAX(jit=False)`` prepares eagerly too: f is
evaluated on values at preparation and at every call, never traced without
values. A prepared (jit) f that branches on x's values (``if x[0] > 0``)
raises a TracedArrayError naming ``AutoJAX(jit=False)``.

Arrays: jax arrays in, jax arrays out on the same device, with no host round
trip; numpy arrays (and Python floats) in, numpy arrays out. The numpy results
are writable arrays the caller owns (one copy out of JAX's buffer, which
numpy would only view read-only), so they can be passed back as ``out=``.
float64 inputs are differentiated in float64 without touching JAX's global
configuration: the call runs under a thread-local ``jax.enable_x64`` switch,
restored afterwards (when x64 is already enabled globally at preparation, the
switch is skipped). float32 inputs run under the configuration as it is.

JAX arrays are immutable: two-argument functions ``f(y, x)`` are not supported
(``check_inplace`` is False), ``out=`` works only with numpy buffers, and an f
that writes what it computes from x into a ``di.Cache`` is refused with an
UnsupportedError naming the Cache (return the value from f instead).

Another framework's function called on x (``torch.sin(x)``) raises a
TracedArrayError naming ``di.array_namespace``, as numpy's functions do.

Cost of a prepared call over the native jitted recipe (``python -m benchmarks``, JAX rows):
with jax inputs the prepared function *is* the jitted function (no wrapper)
unless the x64 switch is needed; numpy inputs add one Python frame around the
conversion the native recipe also needs (a copy the caller owns), and batches of numpy tangents are
passed as flat arguments with one stacked result (numpy arrays nested in
tuples dispatch slower). The thread-local x64 switch (float64 while x64 is
off globally) adds a little to each call (figures in ``benchmarks/README.md``).
"""

from .adapter import JAXAdapter

__all__ = ["JAXAdapter"]
