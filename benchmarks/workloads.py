"""The benchmarked functions, written once against the array API.

Every function takes ``x`` in any array family and gets its namespace from
``di.array_namespace(x)``, so JAX, torch, autograd and numpy (finite
differences) run the same source, natively and through the interface.

Workloads (``benchmarks/README.md`` links each to the public thread it comes from):

- ``chain-loop`` / ``chain-vec``: the energy of a chain of particles with
  nearest- and next-nearest-neighbour pair potentials, ``F``, written as a
  scalar Python loop and vectorized (gradient);
- ``matrices-of-scalar``: ``sum(A.T @ (B * 1.5))`` with 3x3 matrices built
  from a scalar (derivative, in forward and in reverse mode);
- ``square``: ``x**2`` elementwise (jacobian);
- ``nested``: an outer function ``2 * g(xs)`` whose inner ``g`` is called
  through its own prepared gradient (see ``nested.py``);
- ``sumsq``: ``sum(x**2)`` at n = 10, the overhead floor (gradient);
- ``rosenbrock``: the Rosenbrock function (hessian).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import diffinterface as di


def phi1(r, xp):
    return r**2 + r**4 + xp.exp(-r)


def phi2(r):
    return -0.1 * r**3


def chain_energy_loop(x):
    """The chain energy ``F``: one scalar operation at a time (a tape records every one)."""
    xp = di.array_namespace(x)
    f = phi1(x[1] - x[0], xp)
    for i in range(2, x.shape[0]):
        f = f + phi1(x[i] - x[i - 1], xp) + phi2(x[i] - x[i - 2])
    return f


def chain_energy_vec(x):
    """The chain energy ``F`` vectorized: the same sum with slices."""
    xp = di.array_namespace(x)
    return phi1(x[1] - x[0], xp) + xp.sum(phi1(x[2:] - x[1:-1], xp) + phi2(x[2:] - x[:-2]))


def matrices_of_scalar(x):
    """``sum(A.T @ (B * 1.5))`` with A, B 3x3 matrices built from the scalar ``x``."""
    xp = di.array_namespace(x)
    a = xp.reshape(xp.stack([x + k for k in range(1, 10)]), (3, 3))
    b = xp.reshape(xp.stack([x - k for k in range(1, 10)]), (3, 3))
    return xp.sum(a.T @ (b * 1.5))


def square(x):
    """``x**2`` elementwise; its jacobian is diagonal."""
    return x**2


def sum_of_squares(x):
    """``sum(x**2)``: the nested workload's inner ``g``, and the overhead floor at n = 10."""
    xp = di.array_namespace(x)
    return xp.sum(x**2)


def twice_sum_of_squares(x):
    """The nested workload's outer function ``2 * g(xs)`` calling ``g`` directly (the native reference)."""
    return 2.0 * sum_of_squares(x)


def rosenbrock(x):
    xp = di.array_namespace(x)
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


#: Python-level calls of every :class:`Counted` function so far (read as a difference).
EVALUATIONS = [0]


def counted(function):
    """``function`` counting its Python-level calls in ``EVALUATIONS``.

    A plain function (not a callable object), so every framework treats it as
    it treats the user's own ``f``. A jitted call counts 0: it runs compiled code.
    """

    def f(x):
        EVALUATIONS[0] += 1
        return function(x)

    f.__name__ = f.__qualname__ = function.__name__
    return f


@dataclass(frozen=True)
class Workload:
    """One benchmarked function and operator.

    ``sizes`` (full mode) and ``quick_sizes`` are the lengths of ``x``
    (``()`` for a scalar ``x``); ``impractical`` maps a framework to the
    largest size worth running there and why (larger sizes are listed as not
    applicable); ``not_applicable`` maps a framework to the reason it is left out.
    """

    name: str
    operator: str
    function: object
    sizes: tuple
    quick_sizes: tuple
    description: str
    impractical: dict = field(default_factory=dict)
    not_applicable: dict = field(default_factory=dict)
    modes: tuple = (None,)

    def skip_reason(self, framework, size):
        if framework in self.not_applicable:
            return self.not_applicable[framework]
        limit = self.impractical.get(framework)
        if limit is not None and size is not None and size > limit[0]:
            return limit[1]
        return None


_LOOP_TRACE = (
    "jax.jit unrolls the loop into 3N traced operations: compiling takes 17 s at N = 100 and "
    "78 s at N = 1e3 (and the interface compiles again)"
)
_LOOP_TAPE = (
    "each x[i] on the tape costs O(N) in the backward pass (a zero-filled N-vector), so a call is "
    "O(N^2): 0.4 s (torch) and 1 s (autograd) at N = 1e3, about 100x that at N = 1e4"
)
_FD_ALL = "finite differences evaluate f 2N times; with the scalar loop that is minutes per call"

WORKLOADS = (
    Workload(
        "sumsq",
        "gradient",
        sum_of_squares,
        (10,),
        (10,),
        "grad of sum(x**2) at n = 10: the overhead floor",
    ),
    Workload(
        "chain-loop",
        "gradient",
        chain_energy_loop,
        (1000, 10000, 40000),
        (100,),
        "chain energy F, scalar Python loop",
        impractical={
            "jax": (0, _LOOP_TRACE),
            "torch": (1000, _LOOP_TAPE),
            "autograd": (1000, _LOOP_TAPE),
        },
        not_applicable={"finitediff": _FD_ALL},
    ),
    Workload(
        "chain-vec",
        "gradient",
        chain_energy_vec,
        (1000, 10000, 40000),
        (1000, 10000),
        "chain energy F, vectorized",
        impractical={
            "finitediff": (
                1000,
                "finite differences evaluate f 2N times (seconds per call at N >= 1e4)",
            )
        },
    ),
    Workload(
        "matrices-of-scalar",
        "derivative",
        matrices_of_scalar,
        (None,),
        (None,),
        "scalar x -> sum(A.T @ (B * 1.5)), A and B 3x3 built from x",
        modes=("forward", "reverse"),
    ),
    Workload(
        "square",
        "jacobian",
        square,
        (100, 1000),
        (100,),
        "jacobian of x**2",
    ),
    Workload(
        "nested",
        "gradient",
        twice_sum_of_squares,
        (3, 1000),
        (3,),
        "outer 2*g(xs), inner g through its own prepared gradient",
        not_applicable={
            "finitediff": "finite differences have no custom-derivative mechanism to nest a prepared gradient in"
        },
    ),
    Workload(
        "rosenbrock",
        "hessian",
        rosenbrock,
        (10, 100),
        (10,),
        "hessian of the Rosenbrock function",
        impractical={"finitediff": (10, "4 n^2 evaluations per call (0.5 s at n = 100)")},
    ),
)


def numpy_input(workload, size, dtype="float64"):
    """The deterministic numpy input of a workload at ``size`` (a float for a scalar ``x``)."""
    if size is None:
        return 1.0 if dtype == "float64" else np.asarray(1.0, dtype=dtype)
    return np.random.default_rng(0).uniform(0.1, 1.0, size).astype(dtype)


def to_family(x, framework):
    """``x`` as the framework's native array, of x's dtype (so the interface converts nothing)."""
    if framework == "jax":
        import jax.numpy as jnp

        return jnp.asarray(x, dtype=np.asarray(x).dtype)
    if framework == "torch":
        import torch

        return torch.tensor(np.asarray(x))
    return x
