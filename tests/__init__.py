"""diffinterface's own tests, a package so that pytest imports them by their full names
(``tests.core.test_registry``) and they share helpers as ``tests.analytic``, ``tests.paths``."""
