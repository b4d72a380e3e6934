"""Project-wide pytest configuration.

The conformance kit's plugin adds ``--di-backends=id,id`` (or ``DI_BACKENDS``)
and the ``di_backend`` / ``di_case`` fixtures; ``pytester`` lets
``tests/core/test_kit.py`` run the plugin in a separate pytest session.
"""

pytest_plugins = ["diffinterface.testing.pytest_plugin", "pytester"]
