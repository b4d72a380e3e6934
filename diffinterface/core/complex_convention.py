"""Complex x: one convention on every backend, decided once at preparation.

A complex ``x`` (an array, or pytree leaves) is differentiated through its
*real view*: each complex leaf becomes a real array with a last axis of 2
(real and imaginary parts), ``f`` is wrapped to rebuild the complex leaves
from it (and to return a complex output as its real view too), and the
backend differentiates that real function, as it does any other. The
results are turned back into complex arrays of x's (or y's) dtype. So every
backend, a third party's included, follows one convention, the one of real
calculus on (Re, Im):

- ``gradient`` of a real f is ``∂f/∂Re(x) + i ∂f/∂Im(x)``: the gradient for
  the real inner product ``Re <a, b>``, so ``x - lr * g`` descends (torch's
  convention; JAX's and autograd's own results are its conjugate);
- ``pushforward(t)`` is ``d/dε f(x + ε t)`` (the complex derivative ``J t``
  for a holomorphic f); ``pullback(u)`` is its adjoint for ``Re <a, b>``
  (``Jᴴ u`` for a holomorphic f), so the gradient of ``Re <u, f(x)>`` is the
  pullback of ``u``; for a non-holomorphic f both are the real-linear maps;
- ``hvp(t)`` is ``d/dε gradient(x + ε t)``;
- ``derivative``, ``second_derivative`` and ``jacobian`` are the complex
  derivatives of a holomorphic f: taken along the real direction, which for a
  holomorphic f is every direction; a real-valued f of complex x (never
  holomorphic unless constant) is refused there, and ``hessian`` is refused
  (a complex matrix cannot hold the real-linear second derivative): use ``hvp``.

A backend that cannot do this declares it: ``Capabilities.complex_x_refusal`` (the
complex step of finite differences evaluates f at complex points itself).
Nothing here runs for a real x: :func:`has_complex_leaf` is asked once, at
preparation.

    >>> import numpy as np, diffinterface as di
    >>> loss = lambda z: (z.real ** 2 + 3 * z.imag ** 2).sum()
    >>> di.gradient(loss, di.AutoFiniteDiff(), np.array([1 + 1j])).round(6)
    array([2.+6.j])
"""

from __future__ import annotations

import numpy as np

from ..contexts import Constant
from ..errors import UnsupportedError, function_name
from ..families import (
    describe,
    dtype_name,
    family_of,
    from_numpy,
    has_complex_leaf,
    is_array,
    is_complex,
    shape_of,
)
from .problem import Problem, Spec
from .real_view import ComplexView
from .pytree import TreePlan, cached_function
from .tree_key import tree_key
from .transform import Built, Step

#: where the convention is explained, for the messages
PAGE = "see the 'Complex numbers' page of the docs (docs/complex.md)"
_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def _same(value):
    return value


def _each(convert):
    return lambda results: tuple(convert(r) for r in results)


def _check_seeds(seeds, like, like_name, name):
    """Raise unless ``seeds`` is a non-empty tuple of values of ``like``'s kind (shape and dtype, leaf by leaf)."""
    if not isinstance(seeds, tuple) or not seeds:
        raise TypeError(
            f"{name}: expected a non-empty tuple of arrays shaped like {like_name} (a batch; for one, "
            f"({name[:-1]},)); got {describe(seeds) if is_array(seeds) else type(seeds).__name__}"
        )
    advice = (
        "a complex x takes complex tangents of its dtype, a complex output complex cotangents, a real "
        f"one real cotangents. Convert it yourself: diffinterface does not change dtypes; {PAGE}"
    )
    for i, seed in enumerate(seeds):
        where = f"{name}[{i}]"
        if is_array(like):
            if (
                not is_array(seed)
                or shape_of(seed) != shape_of(like)
                or dtype_name(seed) != dtype_name(like)
            ):
                raise TypeError(
                    f"{where}: expected a {dtype_name(like)} array shaped like {like_name}, "
                    f"{shape_of(like)}; got {describe(seed)}: {advice}"
                )
            continue
        expected, given = tree_key(like), tree_key(seed)
        if given != expected:
            raise ValueError(
                f"{where}: expected a tree shaped like {like_name}; {expected.difference(given)}: {advice}"
            )


def complex_x_refusal(adapter):
    """Why ``adapter`` (or a backend it is made of) cannot differentiate a complex x; None when it can."""
    return next(
        (
            part.capabilities.complex_x_refusal
            for part in adapter.parts()
            if part.capabilities.complex_x_refusal
        ),
        None,
    )


def _refuse(call, adapter):
    """Raise for what has no complex meaning here (checked before anything is evaluated)."""
    op, x = call.op, call.x
    refusal = complex_x_refusal(adapter)
    if refusal:
        raise UnsupportedError(
            f"x: {call.backend!r} does not differentiate a complex x "
            f"({describe(x) if is_array(x) else 'a pytree with complex leaves'}): "
            f"{refusal}; {PAGE}"
        )
    if call.y is not None:
        raise UnsupportedError(
            "y: a two-argument f(y, x) at a complex x is not supported; return the output "
            f"from a one-argument f(x) instead; {PAGE}"
        )
    if op.result_shape == "x+x":  # the Hessian
        raise UnsupportedError(
            "x: hessian at a complex x is refused: the second derivative of a real f of complex x is real-linear, "
            "not complex-linear, so no complex matrix x.shape + x.shape holds it. Use hvp (its product with a "
            "complex tangent t, d/dε gradient(x + ε t)), or a real x = (x.real, x.imag) rebuilt inside f for the "
            f"real Hessian of both parts; {PAGE}"
        )
    if op.scalar_x and not (is_array(x) and shape_of(x) == ()):
        raise ValueError(
            f"x: {op.name} expects a scalar x (shape ()); got "
            f"{describe(x) if is_array(x) else 'a pytree'}"
        )


def _holomorphic_only(op, yview, x):
    """Raise for a derivative that is a complex matrix (derivative, jacobian...) of an f it cannot describe."""
    if not yview.any:
        raise UnsupportedError(
            f"f: {op.name} at a complex x is the complex derivative of a holomorphic f, but f returns real "
            "values (a real-valued f of complex x is holomorphic only when constant). Use gradient (a real "
            f"scalar), pullback or pushforward, whose real-linear meaning holds for any f; {PAGE}"
        )
    if op.result_shape == "y+x" and yview.spec is not None:
        raise UnsupportedError(
            "f: jacobian at a complex x takes an array output (a pytree output is not supported there yet); use "
            f"pushforward or pullback, which take pytrees; {PAGE}"
        )


def complex_view(draft, setting):
    """The transform of a complex x: the call goes on over x's real view (or, for a scalar x, the real
    line through it); the wrap turns the results back into complex arrays."""
    call, adapter = draft.call, setting.adapter
    if not has_complex_leaf(call.x):
        return None
    _refuse(call, adapter)
    op, f, x = call.op, call.f, call.x
    xview = ComplexView(x)
    xplan = None if is_array(x) else TreePlan(x, complex_leaves=True)
    family = family_of(x) if xplan is None else xplan.family
    capabilities = adapter.capabilities
    if family not in capabilities.families and family not in capabilities.traceable_families:
        raise TypeError(
            f"x: {type(adapter.backend).__name__} differentiates {' or '.join(adapter.capabilities.all_families)} "
            f"arrays; got {describe(x) if xplan is None else f'a tree of {family} arrays'}"
        )
    if op.seeds == "tangents":
        _check_seeds(call.seeds, x, "x", "tangents")
    yview = yplan = spec = None
    if not op.scalar_y:  # what f returns decides what the results are: learned once, here
        y = f(x, *call.ctx)
        yview = ComplexView(y)
        spec = (
            Spec.of(y) if is_array(y) or not op.tree_output else None
        )  # refuses a tree where arrays are due
        if op.scalar_x or op.result_shape == "y+x":  # derivatives and the Jacobian
            _holomorphic_only(op, yview, x)
        if op.seeds == "cotangents":
            _check_seeds(call.seeds, y, "the output y = f(x)", "cotangents")
            yplan = None if is_array(y) else TreePlan(y, "y", complex_leaves=True)
    y_result = yview.complex_result if yview is not None and yview.any else _same
    if op.scalar_x:
        rewritten, first_argument = _along_real_line(call, f, x, yview)
        to_real_x = None
    else:
        rewritten = _real_view_call(call, f, x, xview, yview)
        to_real_x, first_argument = xview.real, None
    if op.result_shape == "y+x":
        derivative = _jacobian_result(yview, xview, spec.shape)
    else:
        derivative = y_result if op.result_shape == "y" else xview.complex_result
    many = _each(derivative)
    plain_result = many if op.seeds is not None else derivative
    kinds = {
        "value": y_result,
        "first": many if op.seeds is not None and op.order == 1 else derivative,
        "second": many if op.seeds is not None else derivative,
    }
    converts = tuple(kinds[kind] for kind in op.valued_returns)
    seed_real = (
        xview.real
        if op.seeds == "tangents"  # cotangents: each in its own family, as y's may differ
        else yview.real_inside
        if op.seeds == "cotangents" and yview.any
        else None
    )
    seeded = op.seeds is not None

    def wrap(built):
        methods = _fused_gradient(adapter, op, built, xview, x, f, rewritten.f)
        if None in methods:  # each method the adapter computes whole, the others composed
            composed = _methods(
                built.methods, to_real_x, first_argument, seed_real, seeded, plain_result, converts
            )
            methods = tuple(m or c for m, c in zip(methods, composed))
        return Built(built.problem, _ComplexImpl(built.impl), spec, methods, xplan, yplan)

    # f now reaches any aux capture through the view: the capture compares values, not objects
    return Step(draft._replace(call=rewritten, aux=None), wrap)


def _real_view_call(call, f, x, xview, yview):
    """``call`` over x's real view: f rebuilds the complex leaves, returns a complex output's real view."""
    op = call.op
    rebuild = xview.complex_inside
    to_real_y = yview.real_inside if yview is not None and yview.any else None

    def build():
        if to_real_y is not None:

            def f_real(xr, *ctx):
                return to_real_y(f(rebuild(xr), *ctx))

        else:

            def f_real(xr, *ctx):
                y = f(rebuild(xr), *ctx)
                if op.scalar_y:
                    require_real_loss(op.name, y)
                return y

        return _named_like(f_real, f)

    # one function per f and views, so that the backends' own caches (JAX's compiled functions)
    # serve it again
    f_real = cached_function(
        (f, "complex-view", xview.key, None if yview is None else yview.key, op.name), build
    )
    seeds = call.seeds
    if op.seeds == "tangents":
        seeds = tuple(xview.real(t) for t in seeds)
    elif op.seeds == "cotangents" and to_real_y is not None:
        seeds = tuple(yview.real_inside(c) for c in seeds)
    return call._replace(f=f_real, x=xview.real(x), seeds=seeds)


def _along_real_line(call, f, x, yview):
    """(call, s0): derivative and second derivative at a complex scalar x as those of s -> f(x + s) at s = 0.

    x itself goes to the real problem as a context, so one preparation serves every x.
    """
    to_real_y = yview.real_inside

    def build():
        def f_line(s, xc, *ctx):
            return to_real_y(f(xc + s, *ctx))

        return _named_like(f_line, f)

    f_line = cached_function((f, "complex-line", yview.key, call.op.name), build)
    s0 = from_numpy(np.zeros((), _REAL_OF[dtype_name(x)]), family_of(x), x)
    line = call._replace(f=f_line, x=s0, contexts=(Constant(x), *call.contexts))
    return line, s0


def require_real_loss(operator, y):
    """Raise a TypeError naming ``operator`` when f's output ``y`` at a complex x is complex: its
    derivatives at a complex x (``∂f/∂Re + i ∂f/∂Im``) are those of a real-valued f."""
    if is_complex(y):
        raise TypeError(
            f"f: {operator} needs a real-valued f; at a complex x it returned {describe(y)}. Return a "
            f"real loss (xp.real(...), xp.abs(...) ** 2), or use pullback for a complex output; {PAGE}"
        )


def _named_like(wrapper, f):
    """``wrapper`` named as ``f``, so that messages about an error inside f name the user's function."""
    wrapper.__name__ = getattr(f, "__name__", "f")
    wrapper.__qualname__ = function_name(f)
    return wrapper


def _jacobian_result(yview, xview, y_shape):
    """The complex Jacobian from the real view's: its columns along the real parts of x.

    The real view's is ``y.shape + (2,) + leaf.shape + (2,)`` for a complex leaf of x (an
    array x, or each leaf of a pytree's, as ``jax.jacobian`` lays them out), without the last
    ``(2,)`` for a real leaf; the result's leaf is ``y.shape + leaf.shape``, complex.
    """
    head = (slice(None),) * len(y_shape)
    # (real part of y, imaginary part of y) indexes, for a real leaf of x and a complex one
    indexes = {
        False: (head + (0,), head + (1,)),
        True: (head + (0, Ellipsis, 0), head + (1, Ellipsis, 0)),
    }

    def columns(jacobian, complex_leaf):
        re, im = indexes[complex_leaf]
        return yview.complex_array(jacobian[re], jacobian[im])

    if xview.spec is None:
        return lambda jacobian: columns(jacobian, True)
    return lambda jacobian: xview.spec.unflatten(
        [columns(leaf, m) for leaf, m in zip(xview._flatten(jacobian)[0], xview.mask)]
    )


def _methods(inner, to_real_x, first_argument, seed_real, seeded, plain_result, converts):
    """The (plain, valued) methods at a complex x over the ``inner`` ones (of the real view, or of the real line)."""
    inner_plain, inner_valued = inner

    def valued_result(result):
        return tuple(convert(r) for convert, r in zip(converts, result))

    if first_argument is not None:  # the real line: x goes as the first context
        s0 = first_argument
        return (
            (lambda x, *ctx: plain_result(inner_plain(s0, x, *ctx))),
            (lambda x, *ctx: valued_result(inner_valued(s0, x, *ctx))),
        )
    if not seeded:
        return (
            (lambda x, *ctx: plain_result(inner_plain(to_real_x(x), *ctx))),
            (lambda x, *ctx: valued_result(inner_valued(to_real_x(x), *ctx))),
        )
    if seed_real is None:
        return (
            (lambda x, seeds, *ctx: plain_result(inner_plain(to_real_x(x), seeds, *ctx))),
            (lambda x, seeds, *ctx: valued_result(inner_valued(to_real_x(x), seeds, *ctx))),
        )

    def real_seeds(seeds):
        return tuple(seed_real(s) for s in seeds)

    return (
        (lambda x, seeds, *ctx: plain_result(inner_plain(to_real_x(x), real_seeds(seeds), *ctx))),
        (lambda x, seeds, *ctx: valued_result(inner_valued(to_real_x(x), real_seeds(seeds), *ctx))),
    )


def _fused_gradient(adapter, op, built, xview, x, f, f_real):
    """The (plain, valued) methods of a gradient computed whole by the adapter, each None where the
    adapter does not or the method is not its own (a transform between, a dtype or a 0-d result,
    wrapped it: its work stays outside): the gradient prepared at the complex array x itself
    (:meth:`~diffinterface.core.adapter.Adapter.prepare_complex_gradient`) where the adapter does and
    its preparation differentiated ``f_real``, the real view's f, as it is, or compiled with x's real
    view and the complex gradient inside (:meth:`~diffinterface.core.adapter.Adapter.fused_method`),
    one call each instead of three."""
    if (
        op.seeds is not None
        or op.scalar_x
        or op.result_shape != "x"
        or op.valued_returns != ("value", "first")
    ):
        return (None, None)
    names, impl, real = op.methods, built.impl, built.problem
    own = tuple(m is getattr(impl, name, None) for m, name in zip(built.methods, names))
    at_x = None
    # f_real prepared as it is, for a call to come (an unprepared call goes on through the real view)
    if any(own) and is_array(x) and getattr(real, "f", None) is f_real and not real.one_off:
        problem = Problem(
            adapter, f, x, (), real.contexts, None, strict=real.strict, spec=real.spec
        )
        at_x = adapter.prepare_complex_gradient(impl, problem)
    gradient = xview.complex_inside

    def both(result):
        return result[0], gradient(result[1])

    def fused(name, is_own, after):
        if not is_own:
            return None
        if at_x is not None:
            return getattr(at_x, name)
        return adapter.fused_method(impl, name, xview.real_inside, after, x)

    return tuple(
        fused(name, is_own, after) for name, is_own, after in zip(names, own, (gradient, both))
    )


class _ComplexImpl:
    """The real view's implementation as the complex plan's."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __repr__(self):
        return f"complex view of {self.inner!r}"
