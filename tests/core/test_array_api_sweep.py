"""Every array-API function of the kit's sweep, differentiated on every backend, agrees with finite differences.

Each function is written once with ``xp = di.array_namespace(x)``; ``di.jacobian``,
``di.pushforward`` and ``di.pullback`` on each backend of
``diffinterface.testing.BACKENDS`` must match a float64 central
finite-difference Jacobian, at the shapes the sweep uses (0-d, size 1, 1-d,
2-d, 3-d). A framework that cannot do something the
array API allows (torch's negative-step slices) must say so, naming the way
around it.
"""

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.array_api_cases import (
    ARRAY_API_CASES,
    SHAPES,
    applies,
    check_array_api_case,
    check_array_api_modes,
)
from diffinterface.testing.backends import BACKENDS
from diffinterface.testing.pytest_plugin import matrix_marks

# the quick matrix sweeps each backend's default configuration; the others run in --di-matrix=rest
CELLS = [
    pytest.param(
        backend,
        case,
        id=f"{backend_id}-{case_id}",
        marks=matrix_marks(backend_id, "array_api_sweep"),
    )
    for backend_id, backend in BACKENDS.items()
    for case_id, case in ARRAY_API_CASES.items()
    if applies(backend, case)
]


# The cases at other shapes (ids with "@") run through pushforward and pullback only: a Jacobian is
# those same rules again, batched, and each of them costs JAX a compilation per backend.
JACOBIAN_CELLS = [cell for cell in CELLS if "@" not in cell.id]


@pytest.mark.parametrize(("backend", "case"), JACOBIAN_CELLS)
def test_array_api_function_differentiates_like_finite_differences(backend, case):
    x_before = case.x.copy()
    check_array_api_case(backend, case)
    np.testing.assert_array_equal(case.x, x_before)


@pytest.mark.parametrize(("backend", "case"), CELLS)
def test_array_api_function_pushes_forward_and_pulls_back_like_finite_differences(backend, case):
    x_before = case.x.copy()
    check_array_api_modes(backend, case)
    np.testing.assert_array_equal(case.x, x_before)


def test_the_sweep_covers_the_standard():
    assert len(ARRAY_API_CASES) >= 70
    # every shape, 0-d and size 1 included, and stacks of matrices
    shapes = {case.x.shape for case in ARRAY_API_CASES.values()}
    assert set(SHAPES.values()) <= shapes and any(len(s) == 3 for s in shapes)
    # every case applies to every exact backend; only the complex step needs holomorphic functions
    assert all(applies(di.AutoJAX(), case) for case in ARRAY_API_CASES.values())


def test_a_declared_limit_is_the_only_refusal():
    # negative-step slicing: torch refuses with the way around it, the other frameworks differentiate it
    case = ARRAY_API_CASES["indexing-negative-step"]
    with pytest.raises(
        ValueError, match=r"does not support slicing with a negative step.*xp\.flip"
    ):
        di.jacobian(case.f, di.AutoTorch(), case.x)
    x = case.x  # y_i = x[n-1-i] x_i
    expected = np.diag(x[::-1]) + np.fliplr(np.diag(x))
    for backend in (di.AutoAutograd(), di.AutoJAX()):
        np.testing.assert_allclose(di.jacobian(case.f, backend, x), expected, rtol=1e-12)


ARRAY_API_NAMES = (
    "abs acos acosh add asin asinh atan atan2 atanh ceil clip conj copysign cos cosh divide exp expm1 floor "
    "floor_divide hypot imag log log1p log2 log10 logaddexp maximum minimum multiply negative positive pow real "
    "remainder round sign sin sinh square sqrt subtract tan tanh trunc cumulative_sum cumulative_prod max mean min "
    "prod std sum var matmul matrix_transpose tensordot vecdot broadcast_arrays broadcast_to concat expand_dims flip "
    "moveaxis permute_dims repeat reshape roll squeeze stack tile unstack where sort take take_along_axis diff "
    "astype asarray zeros_like ones_like full_like tril triu meshgrid"
).split()
LINALG_NAMES = (
    "cholesky cross det diagonal eigh eigvalsh inv matmul matrix_norm matrix_power matrix_transpose "
    "outer pinv slogdet solve svd svdvals tensordot trace vecdot vector_norm"
).split()


def test_every_autograd_namespace_function_has_a_derivative_rule():
    # A traced autograd primitive without a VJP would fail (or give zeros) only when differentiated.
    from autograd.core import VJPNode, primitive_vjps
    from autograd.tracer import notrace_primitives

    from diffinterface.families import autograd_namespace as xp

    def lacks_rule(function):
        return (
            getattr(function, "_is_autograd_primitive", False)
            and function not in primitive_vjps
            and function not in notrace_primitives[VJPNode]
        )

    missing = [n for n in ARRAY_API_NAMES if lacks_rule(getattr(xp, n))]
    missing += ["linalg." + n for n in LINALG_NAMES if lacks_rule(getattr(xp.linalg, n))]
    assert missing == []


def test_autograd_refuses_what_it_cannot_differentiate_by_name():
    def f(x):
        return di.array_namespace(x).unique_values(x)

    with pytest.raises(NotImplementedError, match="unique_values: autograd has no derivative"):
        di.jacobian(f, di.AutoAutograd(), np.array([1.0, 2.0]))


@pytest.mark.parametrize("scalars", [(1j,), (True,), (2,), (2.5,), (1j, 3.0, False)], ids=repr)
def test_python_numbers_alone_give_numpy(scalars):
    assert di.array_namespace(*scalars) is np


@pytest.mark.parametrize(
    "backend", [di.AutoJAX(), di.AutoTorch(), di.AutoAutograd()], ids=["jax", "torch", "autograd"]
)
def test_python_numbers_never_decide_the_namespace_next_to_an_array(backend):
    seen = []

    def f(x):
        seen.append(di.array_namespace(1j, x, 2.0, True))
        return x * 2.0

    di.jacobian(f, backend, np.ones(2))
    assert seen[-1] is not np and seen[-1] is di.array_namespace(*_traced_like(backend))


def _traced_like(backend):
    seen = []
    di.jacobian(lambda x: seen.append(x) or x * 1.0, backend, np.ones(2))
    return seen[-1:]


def test_numpy_scalars_are_numpy():
    assert di.array_namespace(np.complex128(1), 1j) is np
