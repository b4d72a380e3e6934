"""Project-wide pytest configuration: the conformance kit's plugin (``--di-backends=id,id``)."""

pytest_plugins = ["diffinterface.testing.pytest_plugin"]
