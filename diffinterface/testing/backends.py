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

SECONDARY_BACKENDS = frozenset(
    test_id for entry in registrations() for i, test_id in enumerate(entry.test_backends) if i > 0
)
"""The ids of a registration's further configurations (modes, ``jit=False``, other step methods).

Each registration's first test id is its default configuration; the others
are secondary. The kit's quick matrix (``--di-matrix=quick``) runs every
operator on every configuration and the rest of the kit on the defaults only;
``--di-matrix=rest`` runs what the quick matrix leaves out.

Examples
--------
>>> from diffinterface.testing.backends import SECONDARY_BACKENDS
>>> "jax-forward" in SECONDARY_BACKENDS, "jax" in SECONDARY_BACKENDS
(True, False)
"""
