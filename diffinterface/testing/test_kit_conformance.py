"""Conformance tests shipped with the kit, for ``pytest --pyargs diffinterface.testing``.

With the plugin (``-p diffinterface.testing.pytest_plugin``) the backends come
from ``--di-backends=ID,ID``; without it, from the ``DI_BACKENDS`` environment
variable (default: every backend in ``BACKENDS`` and ``ZERO_BACKENDS``)::

    pytest --pyargs diffinterface.testing -p diffinterface.testing.pytest_plugin --di-backends=finitediff,mypkg.di:BACKEND
    DI_BACKENDS=finitediff pytest --pyargs diffinterface.testing
"""

from diffinterface.testing import pytest_plugin as _plugin

_PLUGIN_NAME = "diffinterface.testing.pytest_plugin"


def pytest_generate_tests(metafunc):
    # When the plugin is loaded it parametrizes the fixtures itself.
    if not metafunc.config.pluginmanager.has_plugin(_PLUGIN_NAME):
        _plugin.pytest_generate_tests(metafunc)


def test_first_order(di_case):
    di_case.check()


def test_second_order(di_second_order_case):
    di_second_order_case.check()


def test_empty_arrays(di_edge_case):
    di_edge_case.check()


def test_bad_inputs(di_bad_input_case):
    di_bad_input_case.check()


def test_batch_sizes(di_batch_case):
    di_batch_case.check()


def test_workers(di_worker_case):
    di_worker_case.check()


def test_auxiliary_outputs(di_aux_case):
    di_aux_case.check()


def test_same_point_preparations(di_same_point_case):
    di_same_point_case.check()


def test_complex_numbers(di_complex_case):
    di_complex_case.check()
