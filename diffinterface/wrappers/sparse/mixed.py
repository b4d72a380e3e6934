"""The adapter of ``MixedMode(forward_backend, reverse_backend)``: two dense adapters side by side.

``AutoSparse`` asks it for a bicoloring and runs pushforwards through
``forward`` (its delegate) and pullbacks through ``reverse``; every operator
asked of it directly is the forward backend's.
"""

from __future__ import annotations

from ...core import get_adapter
from ..delegating import DelegatingAdapter


class MixedModeAdapter(DelegatingAdapter):
    """Pushforwards from ``forward_backend`` (the delegate), pullbacks from ``reverse_backend``."""

    def __init__(self, backend):
        super().__init__(backend, get_adapter(backend.forward_backend))
        self.reverse = get_adapter(backend.reverse_backend)
        forward, reverse = self.delegate.capabilities, self.reverse.capabilities
        self.capabilities = self.capabilities.replace(
            mode="both",
            framework=forward.framework,
            families=tuple(family for family in forward.families if family in reverse.families),
            approximate=forward.approximate or reverse.approximate,
            float64_accuracy=forward.float64_accuracy or reverse.float64_accuracy,
        )
