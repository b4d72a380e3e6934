"""The hand-over: a backend that prepares whole calls through other backends (AutoSelect).

Such an adapter says so (``prepares_calls``) and returns, from
``prepare_call(call, strict, one_off)``, the :class:`~diffinterface.core.transform.Built`
preparation of the call by the backend it chose, which went through the
whole pipeline as that backend's own preparation. Every transform listed
before this one (aux outputs) still wraps it.
"""

from __future__ import annotations

from .transform import Step


def hand_over(draft, setting):
    """The transform that hands ``draft``'s call over to an adapter preparing whole calls."""
    adapter = setting.adapter
    if not adapter.capabilities.prepares_calls:
        return None
    return Step(draft, built=adapter.prepare_call(draft.call, setting.strict, setting.one_off))
