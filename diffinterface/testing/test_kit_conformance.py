"""Conformance tests shipped with the kit, for ``pytest --pyargs diffinterface.testing``.

With the plugin (``-p diffinterface.testing.pytest_plugin``) the backends come
from ``--di-backends=ID,ID``; without it, from the ``DI_BACKENDS`` environment
variable (default: every backend in ``BACKENDS`` and ``ZERO_BACKENDS``)::

    pytest --pyargs diffinterface.testing -p diffinterface.testing.pytest_plugin --di-backends=finitediff,mypkg.di:BACKEND
    DI_BACKENDS=finitediff pytest --pyargs diffinterface.testing

One test per group of the plugin's ``GROUPS`` (first and second order, pytree x,
empty arrays, bad inputs, batch sizes, workers, auxiliary outputs, same-point
preparations, complex numbers), made from that one list as this project's
``tests/core/test_conformance.py`` is.
"""

from diffinterface.testing import pytest_plugin as _plugin

_PLUGIN_NAME = "diffinterface.testing.pytest_plugin"


def pytest_generate_tests(metafunc):
    # When the plugin is loaded it parametrizes the fixtures itself.
    if not metafunc.config.pluginmanager.has_plugin(_PLUGIN_NAME):
        _plugin.pytest_generate_tests(metafunc)


globals().update(_plugin.conformance_tests(__name__))
