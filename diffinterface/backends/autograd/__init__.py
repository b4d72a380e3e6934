"""AutoAutograd: HIPS autograd on numpy arrays (reverse and forward mode).

    >>> import numpy as np, diffinterface as di
    >>> def f(x):
    ...     xp = di.array_namespace(x)          # autograd.numpy while autograd traces x
    ...     return xp.sum(xp.sin(x) * x ** 2)
    >>> di.gradient(f, di.AutoAutograd(), np.array([0.0, 1.0])).round(4)
    array([0.    , 2.2232])

autograd differentiates functions written with ``autograd.numpy``. Write ``f``
with ``xp = di.array_namespace(x)`` and the same source runs unchanged under
every backend: ``xp`` is ``autograd.numpy`` for autograd's boxed arrays (in
reverse and forward mode alike), ``numpy`` for plain arrays, ``jax.numpy``
under JAX and the array-API torch namespace under torch
(see ``examples/backend_agnostic.py``).

How each operator is computed, and how often it evaluates ``f`` (``m``
outputs, ``n`` inputs, ``k`` tangents; "prep": at preparation, "call": per
prepared call, equal to autograd's own recipe):

=================  ==========================================  ====  ======================
operator           autograd recipe                             prep  call
=================  ==========================================  ====  ======================
gradient           ``make_vjp``, one backward pass             0     1
jacobian           ``make_vjp`` once, one backward per row     0     1 (+ m backward)
derivative         scalar output: ``make_vjp``, one backward   0     1
                   pass; else ``make_jvp`` with tangent 1
pullback           ``make_vjp`` once, one backward per c       1     1 (+ k backward)
pushforward        ``make_jvp`` per tangent                    0     k
hvp                ``make_vjp`` of the gradient (make_hvp)     0     1 (+ k backward)
hessian            ``make_vjp`` of the gradient, n rows        0     1 (+ n backward)
second_derivative  ``make_jvp`` of ``make_jvp`` (forward²)     0     1
=================  ==========================================  ====  ======================

autograd's forward mode re-runs ``f`` for every tangent, so a Jacobian always
uses reverse mode (one recorded forward pass, its vjp reused for every row),
as ``autograd.jacobian`` does. autograd must run ``f`` to learn its output
shape. No prepared call spends an evaluation on it: the Jacobian reads it from
the forward pass it records anyway, and operators whose output is a scalar by
contract (gradient, hvp, hessian) check the value that pass computed. Only
pullback's preparation evaluates ``f`` once, so that the core can check the
cotangents' shape.

``x`` is a numpy array or Python float (results are numpy, in x's dtype), or
one of autograd's own boxes: a diffinterface call inside a function that
autograd differentiates returns boxes, so ``autograd.grad`` sees through it.

Results come back in x's dtype: some of autograd's own rules promote
float32 tangents to float64 (``log2``, ``max``, ``mean``), and each result
is cast back once, at the end (a real result of a complex x, or the
reverse, is left as it is).

Two-argument functions ``f(y, x)`` are not supported: autograd cannot
differentiate mutation (``check_inplace(AutoAutograd())`` is False). For the
same reason ``f`` cannot write into a ``di.Cache``: autograd records f on
immutable boxes, which no numpy buffer holds. Such an f raises
``di.UnsupportedError`` naming the Cache and the way around it (keep the
values in local variables, or use ``di.AutoTorch()`` or
``di.AutoFiniteDiff()``); the adapter declares ``writes_cache = False``.

An output of size 0 that does not depend on x (``np.zeros((2, 0))``) has an
empty derivative, not a graph break: there is no derivative to lose.
"""

from .adapter import AutogradAdapter

__all__ = ["AutogradAdapter"]
