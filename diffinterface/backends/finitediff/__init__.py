"""AutoFiniteDiff: finite differences on numpy arrays (forward mode).

Methods and their cost for ``n`` inputs (evaluations of ``f`` per call):

==========  =========================  ===================================
method      gradient / jacobian        value_and_gradient / value_and_jacobian
==========  =========================  ===================================
forward     n + 1                      n + 1 (f(x) is reused)
central     2n                         2n + 1
complex     n (complex step)           n (the value is the real part)
adaptive    many (scipy.differentiate, error-controlled Richardson)
==========  =========================  ===================================

The step along a direction ``t`` is ``h = max(rel_step * max|x_i|, abs_step) / max|t_i|``
over the entries where ``t`` is non-zero, with ``rel_step`` defaulting to
``sqrt(eps)`` (forward), ``cbrt(eps)`` (central) or ``eps`` (complex) of x's
dtype, and ``abs_step`` to ``rel_step``. ``x`` is never modified: each
perturbation is made on a fresh copy. In a pytree x whose leaves have several
dtypes, each leaf's entries get the steps of its own dtype (exact once the
point is cast back to it), so a float32 leaf leaves the float64 ones their
float64 accuracy; a direction spanning leaves takes the largest step over its
support.

Derivatives, gradients and Jacobians step along each coordinate by
``h_i = max(rel_step * |x_i|, abs_step)``, taken at each call's ``x`` (a
preparation made at a large ``x`` and called at a small one differences it at
the small one's scale): one scalar step when every ``rel_step * |x_i|`` is
under ``abs_step``, else one per entry; each point is a fresh copy of ``x``
with one entry moved (no ``n x n`` array of moves is kept). At a
scalar ``x`` the step is a Python float, so ``f`` sees points of x's own kind
(a float stays a float); the derivative is still a 0-d array.

Second order (hessian, hvp, second_derivative) is native: nested central
differences with steps ``eps**(1/4)`` relative (about ``sqrt(eps)``, 1e-8 in
float64): a Hessian costs ``2n**2 + 1`` evaluations (its symmetry halves the
mixed differences), an hvp ``4n`` per tangent, a second derivative 3. With
``method="complex"``: central differences (step ``cbrt(eps)``) of the
complex-step gradient, about ``eps**(2/3)``: ``2n**2``, ``2n`` per tangent, 2.
The gradient or derivative of the ``value_*`` variants comes from the
first-order method, sharing f(x) with the second differences.

As the outer backend of ``SecondOrder`` over an inner whose adapter computes
gradients at a batch of points in one call (``prepare_batched_gradient``: JAX,
with ``vmap``), a pushforward of the inner gradient (hvp, hessian) evaluates
all its perturbed points, ``x +- h t`` for every tangent, in that one call:
the inner compiles the whole difference (steps, points, gradients, quotients)
as one function (``batched.py``).
"""

from .adapter import FiniteDiffAdapter

__all__ = ["FiniteDiffAdapter"]
