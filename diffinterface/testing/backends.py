"""The backends this project tests, with readable ids, read from the backend registry.

``BACKENDS`` maps a test id to a selector (each registration's
``test_backends``); ``ZERO_BACKENDS`` the same for backends that return zeros
by design; ``OPT_IN_BACKENDS`` configurations run only when selected by id. Tests parametrize over them (select a subset with
``--di-backends=id,id`` or the ``DI_BACKENDS`` environment variable). A listed
backend whose framework fails to import is a test failure, never a skip. A
backend registered with ``di.register_backend(..., test_backends=...)`` before
this module is imported is listed too.
"""

from __future__ import annotations

from ..core import registrations

BACKENDS = {
    test_id: selector
    for entry in registrations()
    if not entry.returns_zeros
    for test_id, selector in entry.test_backends.items()
}
"""The tested backends that compute derivatives: a dict test id -> selector.

Read from the backend registry (each registration's ``test_backends``) when
this module is imported; the kit's pytest plugin parametrizes over it.

Examples
--------
>>> import diffinterface as di
>>> from diffinterface.testing import BACKENDS
>>> BACKENDS["finitediff-central"] == di.AutoFiniteDiff()
True
"""

OPT_IN_BACKENDS = {
    test_id: selector
    for entry in registrations()
    for test_id, selector in entry.opt_in_test_backends.items()
}
"""Tested backends run only when a selection names them (``--di-backends=<id>``): id -> selector.

Examples
--------
>>> from diffinterface.testing.backends import BACKENDS, OPT_IN_BACKENDS
>>> set(OPT_IN_BACKENDS).isdisjoint(BACKENDS)
True
"""

ZERO_BACKENDS = {
    test_id: selector
    for entry in registrations()
    if entry.returns_zeros
    for test_id, selector in entry.test_backends.items()
}
"""The tested backends that return zeros by design: a dict test id -> selector.

Their cases check families, shapes, dtypes and fallbacks, not values.

Examples
--------
>>> from diffinterface.testing import ZERO_BACKENDS
>>> sorted(ZERO_BACKENDS)
['zero-forward', 'zero-reverse']
"""
