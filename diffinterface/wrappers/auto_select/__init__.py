"""``AutoSelect``: a preparation that prepares several backends, keeps those that agree, and keeps the fastest.

- :mod:`.config`: the selector (frozen, validated, imports nothing);
- :mod:`.adapter`: its adapter, which prepares whole calls (``Capabilities.prepares_calls``);
- :mod:`.selection`: the candidates, their agreement and their interleaved timing;
- :mod:`.report`: :func:`explain` and :func:`selected_backend`, read from a preparation.

Only ``config.py`` and ``report.py`` (which import no framework) are imported with this
package, on the first access to ``di.AutoSelect``, ``di.explain`` or ``di.selected_backend``;
the adapter and the selection on the first use of an ``AutoSelect`` backend.

``AutoSelect`` is not among the kit's default test backends (``test_backends``): which candidate
wins depends on timings, and the suite's tests that count evaluations per call need one backend
per test id; ``tests/features/test_auto_select.py`` runs the kit's scenarios and bad inputs through it.
"""

from ...core import register_backend
from .config import AutoSelect
from .report import explain, selected_backend

register_backend(AutoSelect, "diffinterface.wrappers.auto_select.adapter:AutoSelectAdapter")

__all__ = ["AutoSelect", "explain", "selected_backend"]
