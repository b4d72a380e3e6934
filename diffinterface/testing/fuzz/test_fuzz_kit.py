"""The fuzz suite shipped with the kit, for ``pytest --pyargs diffinterface.testing``: one test per backend.

With the plugin (``-p diffinterface.testing.pytest_plugin``) the backends come
from ``--di-backends=ID,ID``; without it, from ``$DI_BACKENDS`` (default:
every backend). ``$DI_FUZZ_EXAMPLES`` sets the programs per backend::

    DI_FUZZ_EXAMPLES=200 pytest --pyargs diffinterface.testing.fuzz -p diffinterface.testing.pytest_plugin --di-backends=mypkg.di:BACKEND
"""

import pytest

from diffinterface.testing.pytest_plugin import matrix_marks, selected_backends

# hypothesis is an optional test dependency: without it the kit's other tests still run
pytest.importorskip(
    "hypothesis", reason="the fuzz suite needs hypothesis: pip install 'diffinterface[test]'"
)

from diffinterface.testing.fuzz.campaign import assert_fuzz_passes  # noqa: E402


def pytest_generate_tests(metafunc):
    if "fuzz_backend" in metafunc.fixturenames:
        backends = selected_backends(metafunc.config)
        metafunc.parametrize(
            "fuzz_backend",
            [
                pytest.param(item, id=item[0], marks=matrix_marks(item[0]))
                for item in backends.items()
            ],
        )


def test_random_programs_agree_with_the_float64_reference(fuzz_backend):
    backend_id, backend = fuzz_backend
    print(assert_fuzz_passes({backend_id: backend}).summary())
