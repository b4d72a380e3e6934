"""Every array-API function of the kit's sweep, differentiated on every backend, agrees with finite differences.

Each function is written once with ``xp = di.array_namespace(x)``; ``di.jacobian``
on each backend of ``diffinterface.testing.BACKENDS`` must match a float64
central finite-difference Jacobian. A framework that cannot do something the
array API allows (torch's negative-step slices) must say so, naming the way
around it.
"""

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.array_api_cases import ARRAY_API_CASES, applies, check_array_api_case
from diffinterface.testing.backends import BACKENDS

CELLS = [
    pytest.param(backend, case, id=f"{backend_id}-{case_id}")
    for backend_id, backend in BACKENDS.items()
    for case_id, case in ARRAY_API_CASES.items()
    if applies(backend, case)
]


@pytest.mark.parametrize(("backend", "case"), CELLS)
def test_array_api_function_differentiates_like_finite_differences(backend, case):
    x_before = case.x.copy()
    check_array_api_case(backend, case)
    np.testing.assert_array_equal(case.x, x_before)


def test_the_sweep_covers_the_standard():
    assert len(ARRAY_API_CASES) >= 70
    # every case applies to every exact backend; only the complex step needs holomorphic functions
    assert all(applies(di.AutoJAX(), case) for case in ARRAY_API_CASES.values())


def test_a_declared_limit_is_the_only_refusal():
    # negative-step slicing: torch refuses with the way around it, the other frameworks differentiate it
    case = ARRAY_API_CASES["indexing-negative-step"]
    with pytest.raises(ValueError, match=r"does not support slicing with a negative step.*xp\.flip"):
        di.jacobian(case.f, di.AutoTorch(), case.x)
    x = case.x  # y_i = x[n-1-i] x_i
    expected = np.diag(x[::-1]) + np.fliplr(np.diag(x))
    for backend in (di.AutoAutograd(), di.AutoJAX()):
        np.testing.assert_allclose(di.jacobian(case.f, backend, x), expected, rtol=1e-12)
