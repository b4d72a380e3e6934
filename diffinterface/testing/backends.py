"""The backends this project tests, with readable ids, read from the backend registry.

``BACKENDS`` maps a test id to a selector (each registration's
``test_backends``); ``ZERO_BACKENDS`` the same for backends that return zeros
by design. Tests parametrize over them (select a subset with
``--di-backends=id,id`` or the ``DI_BACKENDS`` environment variable). A listed
backend whose framework fails to import is a test failure, never a skip. A
backend registered with ``di.register_backend(..., test_backends=...)`` before
this module is imported is listed too.
"""

from __future__ import annotations

from ..core import registrations

BACKENDS = {
    test_id: selector
    for entry in registrations() if not entry.returns_zeros
    for test_id, selector in entry.test_backends.items()
}

#: Backends that return zeros: they check shapes and fallbacks, not values.
ZERO_BACKENDS = {
    test_id: selector
    for entry in registrations() if entry.returns_zeros
    for test_id, selector in entry.test_backends.items()
}
