"""AutoMLX: ``mx.jvp`` and ``mx.vjp``, every operator compiled with ``mx.compile`` at preparation.

    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoMLX()
    >>> f = lambda x: di.array_namespace(x).sum(x ** 2)
    >>> prep = di.prepare_gradient(f, backend, np.array([1.0, 2.0]))
    >>> di.gradient(f, backend, np.array([1.0, 2.0]), prep=prep)
    array([2., 4.])

Every operator is MLX's own recipe (``recipes.py``):

=================  ===============================================  ==========================
operator           ``mode=None``                                    ``mode=`` forward/reverse
=================  ===============================================  ==========================
pushforward        ``mx.jvp``; a batch is ``mx.vmap`` of it         same
pullback           ``mx.vjp``; a batch is ``mx.vmap`` of it         same
derivative         ``mx.jvp`` with tangent 1                        reverse: rows by ``mx.vjp``
gradient           ``mx.value_and_grad``                            forward: ``mx.vmap(mx.jvp)``
                                                                    over x's basis
jacobian           ``mx.vmap(mx.jvp)`` over x's basis when          forward / reverse
                   ``x.size <= y.size``, else ``mx.vmap(mx.vjp)``
hvp                reverse over reverse: ``mx.vjp(mx.grad(f))``     same
                   (MLX has more reverse rules than forward ones),
                   ``mx.vmap`` over the tangents
hessian            the same over x's basis                          same
second_derivative  ``mx.jvp`` of ``mx.jvp``                         same
=================  ===============================================  ==========================

``value_and_*`` variants come from the same compiled function. With
``compile=True`` (the default) each prepared operator is ``mx.compile``'d and
traced at preparation; MLX is lazy, so the output's shape and dtype, and the
trace, cost no numeric work. f must then not read x's values (``.item()``,
numpy, a Python branch on a value): MLX refuses, and the error names
``AutoMLX(compile=False)``, under which MLX's transforms run op by op (there
a value read by ``.item()`` is a constant to MLX, whose derivative through
it is lost: write such an f without it). A sweep over more seeds than
``batch_size`` (or than fit ``memory_budget``) runs batch after batch.

Arrays: ``mx.array`` in, ``mx.array`` out; numpy arrays (and Python floats)
in, numpy arrays out. float64 stays float64 and float32 stays float32; MLX
computes float64 on its CPU device only, so where the default device is
Apple's GPU a float64 call runs on the CPU stream. Write f with
``xp = di.array_namespace(x)`` (:mod:`diffinterface.families.mlx_namespace`)
or with ``mlx.core`` itself. MLX arrays are immutable to diffinterface:
two-argument functions ``f(y, x)`` and writing into a ``di.Cache`` are not
supported; ``out=`` takes numpy buffers.
"""

from ...selectors import AutoMLX

__all__ = ["AutoMLX", "MLXAdapter"]


def __getattr__(name):
    # the adapter imports MLX: only when it is asked for (`import diffinterface` imports no framework)
    if name == "MLXAdapter":
        from .adapter import MLXAdapter

        return MLXAdapter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
