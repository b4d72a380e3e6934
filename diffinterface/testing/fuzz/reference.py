"""The float64 reference a fuzz check compares with: raw JAX (``jax.jacfwd``, ``jax.hessian``) under x64.

The reference does not go through diffinterface: it calls JAX's own
transformations in a thread-local x64 scope (:func:`~diffinterface.families.jax.x64_call`),
so a defect of ``di.AutoJAX`` shows as a disagreement with it. The reference
is itself checked against float64 central finite differences of the program
run on numpy (:func:`reference_disagreement`), which keeps JAX honest too.

    >>> import numpy as np
    >>> from diffinterface.testing.fuzz.programs import Program, Step
    >>> ref = array_reference(Program((2,), (Step("xp.sin(x)"),)), np.array([0.0, 1.0]))
    >>> ref["jacobian"].round(3).tolist()
    [[1.0, 0.0], [0.0, 0.54]]
"""

from __future__ import annotations

import numpy as np

from ...families.jax import x64_call
from ..array_api_cases import reference_jacobian


def _jax():
    try:
        import jax
    except ImportError as error:  # pragma: no cover - jax is part of the test extra
        raise ImportError(
            "the fuzz suite's float64 reference needs JAX: pip install 'diffinterface[jax]'"
        ) from error
    return jax


def _wide(fn, *args):
    jax = _jax()

    def call():
        converted = [
            jax.tree_util.tree_map(
                lambda a: jax.numpy.asarray(np.asarray(a, dtype=np.float64)), arg
            )
            for arg in args
        ]
        return jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), fn(*converted))

    return x64_call(call, True)()


def _torch_reference(f, g, x):
    try:
        import torch
    except ImportError as error:  # pragma: no cover - torch is part of the test extra
        raise ImportError(
            "the fuzz suite's torch reference needs torch: pip install 'diffinterface[torch]'"
        ) from error
    from torch.func import jacrev

    x = torch.from_numpy(np.array(x, dtype=np.float64))

    def numpy(a):
        return np.array(a.detach().numpy(force=True), dtype=np.float64)

    result = {
        "value": numpy(f(x)),
        "jacobian": numpy(jacrev(f)(x)),
        "scalar": numpy(g(x)),
        "gradient": numpy(jacrev(g)(x)),
        "hessian": numpy(jacrev(jacrev(g))(x)),
    }
    if x.ndim == 0:
        result["second_derivative"] = numpy(jacrev(jacrev(f))(x))
    return result


def array_reference(program, x, framework="jax"):
    """``value``, ``jacobian`` of ``f``; ``scalar``, ``gradient``, ``hessian`` of ``g``; for 0-d x the
    ``second_derivative`` of ``f``: every reference of one program at ``x`` (float64 numpy).

    ``framework`` is ``"jax"`` (``jax.jacfwd``, ``jax.hessian`` under x64) or ``"torch"``
    (``torch.func.jacrev``, in float64: faster for long campaigns, for backends that are not torch's;
    a torch reference with a non-finite value is replaced by JAX's).
    """
    f, g = program.functions()
    x = np.asarray(x, dtype=np.float64)
    if framework == "torch":
        result = _torch_reference(f, g, x)
        if all(np.all(np.isfinite(value)) for value in result.values()):
            return result
        # torch.func's nested jacrev returns NaN second derivatives of det at a matrix with a
        # repeated eigenvalue (its backward goes through an SVD) where JAX's are finite: then JAX
        # decides
    jax = _jax()

    def everything(x):
        # one compiled function: far faster than JAX's op-by-op eager transformations
        result = {
            "value": f(x),
            "jacobian": jax.jacfwd(f)(x),
            "scalar": g(x),
            "gradient": jax.grad(g)(x),
            "hessian": jax.hessian(g)(x),
        }
        if x.ndim == 0:
            result["second_derivative"] = jax.jacfwd(jax.jacfwd(f))(x)
        return result

    return _wide(jax.jit(everything), x)


def tree_reference(f, tree):
    """``value`` and ``gradient`` (a tree like ``tree``) of a scalar tree function ``f``, with JAX in float64."""
    jax = _jax()
    return _wide(jax.jit(lambda t: {"value": f(t), "gradient": jax.grad(f)(t)}), tree)


def reference_disagreement(program, x, reference, framework="jax"):
    """A sentence when the reference Jacobian disagrees with float64 central finite differences, else None."""
    estimate = reference_jacobian(
        lambda a: np.asarray(program.evaluate(a)), np.asarray(x, dtype=np.float64)
    )
    expected = reference["jacobian"]
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    if estimate.shape != expected.shape or not np.allclose(
        estimate, expected, rtol=1e-5, atol=1e-6 * scale
    ):
        return f"the {framework} reference disagrees with float64 finite differences: got {expected!r}, expected {estimate!r}"
    return None
