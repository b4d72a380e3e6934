"""What JAX refuses while it traces f, made clear: a ``di.Cache`` that f writes x's values into, a
branch on x's values under ``jax.jit``, a number taken out of x's graph; and the eager evaluation that
lets a DifferentiateWith inside f learn its output before f is traced again."""

from __future__ import annotations

import contextlib
import re

import jax
import jax.numpy as jnp

from ...contexts import Cache
from ...families.jax import JaxFamily
from ...errors import TracedArrayError, UnsupportedError, traced_array
from .bridge_points import ValuesNeededError
from .calls import _traceable as traceable

#: jax.errors raised when f converts the tracer it is differentiated at
TRACED_ARRAY_ERRORS = JaxFamily.traced_value_errors
#: another framework's function refusing a JAX array or tracer names its type (torch.sin(x): "must
#: be Tensor, not jaxlib._jax.ArrayImpl"; torch.as_tensor(x): "LinearizeTracer has no attribute
#: __dlpack_device__")
JAX_ARRAY_NAMED = re.compile(r"\bjaxlib\b|\bjax\.Array\b|\b\w*Tracer\b")


#: JAX names the tracer a concrete value was asked of: a floating one is a number taken out of x's
#: graph
FLOAT_TRACER = re.compile(r"traced array with shape (float|complex|bfloat)")


def not_an_array(out):
    raise TypeError(
        f"f: expected f to return an array or a number; it returned {type(out).__name__}"
    )


def refusal(problem, backend, error, compiling):
    """The clearer error for ``error``, raised by f while JAX traced it, or None.

    A Cache that f writes x's values into: JAX cannot (its arrays are
    immutable, and what f computes from x is a tracer, not numbers). A branch
    on x's values (``if x[0] > 0``) while ``compiling``: jit traces without values.
    """
    caches = [i for i, c in enumerate(problem.contexts) if isinstance(c, Cache)]
    if caches and (
        isinstance(error, jax.errors.TracerArrayConversionError)
        or isinstance(error, TypeError)
        and "immutable" in str(error)
    ):
        return UnsupportedError(
            f"contexts[{caches[0]}]: f raised {type(error).__name__} while {backend!r} differentiated it with a "
            f"di.Cache: JAX cannot write into a buffer (its arrays are immutable, and what f computes from x is "
            "traced, not numbers). Return the value from f instead, pass what f only reads as di.Constant, or "
            f"use a backend that writes into buffers (di.check_inplace(backend) is True). ({error})"
        )
    if compiling and isinstance(error, jax.errors.TracerBoolConversionError):
        message = str(traced_array(problem.f, backend, "JAX tracer", error))
        return TracedArrayError(
            f"{message} Where f branches on x's values (if x[0] > 0: ...), jax.jit cannot compile it: use "
            "AutoJAX(jit=False), which differentiates eagerly as jax.grad does, or write the branch with "
            "xp.where or jax.lax.cond"
        )
    return None


def check_no_value_taken_out(problem, backend, static, ctx):
    """Raise where f turns a traced value of x into a Python number (``.item()``, ``float(x[0])``).

    Eager JAX differentiates through the rest of f and silently drops what
    such a number depended on; an abstract pass (no compilation) finds it.
    A branch, an index or a size taken from values (integer ones) is allowed
    eagerly: those are left to the eager evaluation, as are f's own errors.
    """
    try:
        jax.jit(problem.f, static_argnums=static).eval_shape(problem.x, *ctx)
    except (jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError):
        return
    except jax.errors.ConcretizationTypeError as error:
        if FLOAT_TRACER.search(
            str(error)
        ):  # an integer one is a size or an index: eager JAX has its value
            raise traced_array(problem.f, backend, "JAX tracer", error) from error
    except Exception:  # noqa: BLE001 - the eager evaluation that follows raises f's own errors
        return


@contextlib.contextmanager
def traced(problem, backend, compiling=True):
    """Tracing ``problem.f``: the errors :func:`refusal` makes clearer are raised clearer."""
    try:
        yield
    except Exception as error:
        better = refusal(problem, backend, error, compiling)
        if better is None:
            raise
        raise better from error


def traced_at_values(problem, trace):
    """``trace()``; where a DifferentiateWith inside f met its input under jit first and cannot learn its
    output without values, f is evaluated once eagerly at the prepared x (each bridge then prepares at the
    input it really gets, never at an invented point), and traced again."""
    try:
        return trace()
    except ValuesNeededError:
        # x and the traced contexts as JAX arrays: each bridge meets the signature the trace gives
        # it
        ctx = (jax.tree_util.tree_map(jnp.asarray, v) if traceable(v) else v for v in problem.ctx)
        problem.f(jax.tree_util.tree_map(jnp.asarray, problem.x), *ctx)
        return trace()


def cache_checked(fn, problem, backend):
    """The eager ``fn``, whose errors from writing into a Cache are raised clearer (only with a Cache)."""
    if not any(isinstance(c, Cache) for c in problem.contexts):
        return fn

    def call(*args):
        with traced(problem, backend, compiling=False):
            return fn(*args)

    return call
