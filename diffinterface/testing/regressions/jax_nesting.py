"""Regression probes: operators as building blocks inside ``jax.jit``, ``jax.vmap`` and ``jax.grad``.

A backend whose derivatives run in JAX (``capabilities.framework`` is "jax"
and it takes JAX arrays), or that computes on JAX's traced values in
``jax.numpy`` (``"jax"`` among its ``capabilities.traceable_families``: finite
differences), gives, on the traced x of these transforms, JAX's own answer for
every operator, ``has_aux=True`` included (the aux as computed, tracers and
all): to 1e-9 when exact, else within a finite difference's error (see
:func:`_tolerances`). A backend that evaluates f only (no framework of its own)
and the wrappers built from a probed backend (``SecondOrder`` with itself and
with ``AutoJAX()`` on either side, ``AutoSparse`` unprepared and prepared,
``AutoSelect`` unprepared and prepared) either give JAX's answer inside
``jax.jit`` or refuse with an error naming ``jax.jit`` and the way around,
never a raw JAX error. Native references: ``jax.grad``, ``jax.jacrev``,
``jax.hessian``, ``jax.jvp``, ``jax.vjp``.

    >>> [probe.name for probe in probes()]
    ['jax_transforms_operators', 'jax_transforms_has_aux', 'traced_x_answered_or_refused']
"""

from __future__ import annotations

import numpy as np

from ...core import get_adapter
from ...errors import PreparationMismatchError, UnsupportedError
from ...families import array_namespace
from ... import operators as ops
from ...selectors import AutoJAX
from ...wrappers import AutoSelect, AutoSparse, SecondOrder
from ..probes import BadInput
from ..tolerances import is_approximate

_RNG = np.random.default_rng(4747)
_BATCH = _RNG.normal(size=(3, 4))
_T = _RNG.normal(size=4)


def _jax(backend, evaluating_too=False):
    """jax, where the backend differentiates in JAX on JAX arrays (or, if ``evaluating_too``, only
    evaluates f); else None."""
    capabilities = get_adapter(backend).capabilities
    in_jax = (
        capabilities.framework == "jax" and "jax" in capabilities.families
    ) or "jax" in capabilities.traceable_families
    if not in_jax and not (evaluating_too and capabilities.framework is None):
        return None
    try:
        import jax
    except ImportError:
        return None
    return jax


#: float64's machine epsilon: the finite differences' steps are powers of it
_EPS = float(np.finfo(np.float64).eps)
#: A finite difference's error relative to the scale of the probe's values: a forward difference
#: (step h = sqrt(eps): truncation h |f2| / 2 plus rounding 2 eps |f| / h, f2 the second
#: derivative) and a nested central second difference (steps h = eps**(1/4): truncation
#: h**2 |f4| / 12 plus rounding 4 eps |f| / h**2) both err by about sqrt(eps) times the sizes of
#: f and its derivatives, here under 10**2; central differences and the complex step err less.
#: Derived from the steps, not from any backend's code.
_APPROXIMATE_RTOL = 1e2 * _EPS**0.5


def _tolerances(backend, expected):
    """``(rtol, atol)`` comparing ``backend``'s results with JAX's exact ``expected``: tight for an
    exact backend; for one whose adapter declares approximate results, a finite difference's error
    (:data:`_APPROXIMATE_RTOL`), absolute on the scale of ``expected``."""
    if not is_approximate(backend):
        return 1e-9, 1e-12
    scale = max(float(np.max(np.abs(np.asarray(expected)), initial=0.0)), 1.0)
    return _APPROXIMATE_RTOL, _APPROXIMATE_RTOL * scale


def _scalar(z):
    xp = array_namespace(z)
    return xp.sum(xp.sin(z) ** 2) * xp.sum(z * z)


def _vector(z):
    xp = array_namespace(z)
    return xp.sin(z) * xp.sum(z)


def _with_aux(z):
    return _scalar(z), {"norm": array_namespace(z).sum(z * z), "z": z}


def _batch(jax):
    with jax.enable_x64(True):
        return jax.numpy.asarray(_BATCH), jax.numpy.asarray(_T)


def _transforms(jax):
    """``(name, wrap)``: each outer transform as a function of one sample, run on the batch."""
    return (
        ("jax.jit", lambda g: lambda batch: jax.jit(g)(batch[0])),
        ("jax.vmap", lambda g: jax.vmap(g)),
        (
            "jax.grad",
            lambda g: jax.vmap(jax.grad(lambda z: jax.numpy.sum(jax.numpy.sin(g(z))))),
        ),
    )


def _compare(problems, jax, what, call, native, batch, backend):
    with jax.enable_x64(True):
        try:
            got = call(batch)
        except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
            problems.raised(what, error, "JAX's own answer")
            return
        expected = native(batch)
    for i, (g, e) in enumerate(zip(jax.tree.leaves(got), jax.tree.leaves(expected))):
        rtol, atol = _tolerances(backend, e)
        problems.check_result(f"{what} (leaf {i})", g, np.asarray(e), like=e, rtol=rtol, atol=atol)


def _prepared(backend, zero, f, **keywords):
    """``(jax, batch, tangent, gradient prepared at one sample)`` for a backend in JAX, else None."""
    jax = _jax(backend)
    if jax is None or zero:
        return None
    batch, t = _batch(jax)
    with jax.enable_x64(True):
        return jax, batch, t, ops.prepare_gradient(f, backend, batch[0], **keywords)


def _operators(backend, problems, zero):
    prepared = _prepared(backend, zero, _scalar)
    if prepared is None:
        return
    jax, batch, t, prep = prepared
    cases = {
        "gradient": (lambda z: ops.gradient(_scalar, backend, z), jax.grad(_scalar)),
        "gradient prepared at one sample": (
            lambda z: ops.gradient(_scalar, backend, z, prep=prep),
            jax.grad(_scalar),
        ),
        "value_and_gradient": (
            lambda z: ops.value_and_gradient(_scalar, backend, z)[1],
            jax.grad(_scalar),
        ),
        "jacobian": (lambda z: ops.jacobian(_vector, backend, z), jax.jacrev(_vector)),
        "pushforward": (
            lambda z: ops.pushforward(_vector, backend, z, (t,))[0],
            lambda z: jax.jvp(_vector, (z,), (t,))[1],
        ),
        "pullback": (
            lambda z: ops.pullback(_vector, backend, z, (t,))[0],
            lambda z: jax.vjp(_vector, z)[1](t)[0],
        ),
        "hvp": (
            lambda z: ops.hvp(_scalar, backend, z, (t,))[0],
            lambda z: jax.jvp(jax.grad(_scalar), (z,), (t,))[1],
        ),
        "hessian": (lambda z: ops.hessian(_scalar, backend, z), jax.hessian(_scalar)),
    }
    for name, wrap in _transforms(jax):
        for what, (call, native) in cases.items():
            _compare(
                problems, jax, f"{what} under {name}", wrap(call), wrap(native), batch, backend
            )


def _has_aux(backend, problems, zero):
    prepared = _prepared(backend, zero, _with_aux, has_aux=True)
    if prepared is None:
        return
    jax, batch, _, prep = prepared
    native = jax.grad(_with_aux, has_aux=True)
    calls = {
        "gradient with has_aux": lambda z: ops.gradient(_with_aux, backend, z, has_aux=True),
        "prepared gradient with has_aux": lambda z: ops.gradient(
            _with_aux, backend, z, prep=prep, has_aux=True
        ),
        "value_and_gradient with has_aux": lambda z: (lambda r: (r[1], r[0][1]))(
            ops.value_and_gradient(_with_aux, backend, z, has_aux=True)
        ),
    }
    for what, call in calls.items():
        jitted, mapped = (jax.jit(call), jax.jit(native)), (jax.vmap(call), jax.vmap(native))
        _compare(problems, jax, f"{what} under jax.jit", *jitted, batch[0], backend)
        _compare(problems, jax, f"{what} under jax.vmap", *mapped, batch, backend)
        # under jax.grad: the aux goes out as grad's own aux, a traced value
        outer, reference = (
            jax.grad(lambda z, c=c: (jax.numpy.sum(c(z)[0] ** 2), c(z)[1]), has_aux=True)
            for c in (call, native)
        )
        _compare(problems, jax, f"{what} under jax.grad", outer, reference, batch[0], backend)


def _answered_or_refused(problems, jax, what, call, native, x, backend):
    """``call(x)`` inside ``jax.jit``: JAX's answer, or an error naming jax.jit (not a raw one)."""
    with jax.enable_x64(True):
        got = problems.answer_or_named_refusal(
            what, lambda: jax.jit(call)(x), (TypeError, ValueError), ("jax.jit",), raw_from="jax"
        )
        if got is None:
            return
        expected = native(x)
    rtol, atol = _tolerances(backend, expected)
    problems.check_result(what, got, np.asarray(expected), like=expected, rtol=rtol, atol=atol)


def _traced_x(backend, problems, zero):
    jax = _jax(backend, evaluating_too=True)
    if jax is None or zero:
        return
    batch, t = _batch(jax)
    x = batch[0]
    # a backend that selects among others (prepares_calls) is not a candidate of its own kind
    selects = get_adapter(backend).capabilities.prepares_calls
    sparse, select = AutoSparse(backend), backend if selects else AutoSelect([backend])
    with jax.enable_x64(True):
        try:  # prepared at a concrete JAX x, where the backend takes one
            sparse_prep = ops.prepare_jacobian(_vector, sparse, x)
            select_prep = ops.prepare_gradient(_scalar, select, x)
        except TypeError:
            sparse_prep = select_prep = None
    dense = lambda m: m.todense() if hasattr(m, "todense") else m  # noqa: E731
    cases = {
        "gradient": (lambda z: ops.gradient(_scalar, backend, z), jax.grad(_scalar)),
        "SecondOrder(backend, backend) hessian": (
            lambda z: ops.hessian(_scalar, SecondOrder(backend, backend), z),
            jax.hessian(_scalar),
        ),
        "SecondOrder(backend, AutoJAX()) hessian": (
            lambda z: ops.hessian(_scalar, SecondOrder(backend, AutoJAX()), z),
            jax.hessian(_scalar),
        ),
        "SecondOrder(backend, AutoJAX()) hvp": (
            lambda z: ops.hvp(_scalar, SecondOrder(backend, AutoJAX()), z, (t,))[0],
            lambda z: jax.jvp(jax.grad(_scalar), (z,), (t,))[1],
        ),
        "SecondOrder(AutoJAX(), backend) hessian": (
            lambda z: ops.hessian(_scalar, SecondOrder(AutoJAX(), backend), z),
            jax.hessian(_scalar),
        ),
        "unprepared AutoSparse(backend) jacobian": (
            lambda z: dense(ops.jacobian(_vector, sparse, z)),
            jax.jacrev(_vector),
        ),
        "prepared AutoSparse(backend) jacobian": (
            lambda z: dense(ops.jacobian(_vector, sparse, z, prep=sparse_prep)),
            jax.jacrev(_vector),
        ),
        "unprepared AutoSelect([backend]) gradient": (
            lambda z: ops.gradient(_scalar, select, z),
            jax.grad(_scalar),
        ),
        "prepared AutoSelect([backend]) gradient": (
            lambda z: ops.gradient(_scalar, select, z, prep=select_prep),
            jax.grad(_scalar),
        ),
    }
    # a complex step evaluates the inner's gradient at complex points, which JAX's does not take
    complex_step = get_adapter(backend).capabilities.complex_step
    for what, (call, native) in cases.items():
        if sparse_prep is None and what.startswith("prepared"):
            continue
        if complex_step and what.startswith("SecondOrder(backend, AutoJAX())"):
            with jax.enable_x64(True):
                problems.expect_error(
                    f"{what} inside jax.jit", lambda: jax.jit(call)(x), UnsupportedError, "complex"
                )
            continue
        _answered_or_refused(problems, jax, f"{what} inside jax.jit", call, native, x, backend)
    # a preparation made at a numpy x does not fit the traced x of the transform: the error says so
    numpy_x = np.asarray(x)
    numpy_prep = ops.prepare_gradient(_scalar, backend, numpy_x)
    with jax.enable_x64(True):
        problems.expect_error(
            "a gradient prepared at a numpy x, called inside jax.jit",
            lambda: jax.jit(lambda z: ops.gradient(_scalar, backend, z, prep=numpy_prep))(numpy_x),
            PreparationMismatchError,
            r"traced jax value \(inside jax\.jit",
        )


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return [
        BadInput(
            "jax_transforms_operators",
            "every operator under jax.jit, jax.vmap and jax.grad: JAX's own answer",
            _operators,
        ),
        BadInput(
            "jax_transforms_has_aux",
            "has_aux=True under jax.jit, jax.vmap and jax.grad: JAX's own gradient and aux",
            _has_aux,
        ),
        BadInput(
            "traced_x_answered_or_refused",
            "a backend and its wrappers inside jax.jit: JAX's answer or an error naming jax.jit",
            _traced_x,
        ),
    ]
