"""Backends that need x's values, called where x has none: inside a framework's transforms.

Inside ``jax.jit`` (``vmap``, ``grad``), a ``torch.func`` transform or a
``tf.function``, x is a traced value: its family says so
(:meth:`~diffinterface.families.base.Family.has_values`). A backend whose
framework traces f works there; a backend that reads x's values to prepare
(a sparsity detection, a timed selection) or to compute (finite differences'
steps, taken on the host) declares why in ``Capabilities.needs_values``, with
the way around, and such a call is refused here, by name, before anything
reaches numpy.
"""

from __future__ import annotations

from ..families import traced_family


def require_values(x, adapter):
    """Raise a TypeError naming the transform and the way around when x (an array or a pytree) is a
    traced value and ``adapter`` or a backend it is made of needs x's values."""
    needs = [part for part in adapter.parts() if part.capabilities.needs_values is not None]
    if not needs:
        return
    family = traced_family(x)
    if family is None:
        return
    part = needs[0]
    what, way = part.capabilities.needs_values
    inside = f" (inside {family.traced_by})" if family.traced_by else ""
    who = _name(part) if part is adapter else f"{_name(adapter)} cannot run here: {_name(part)}"
    raise TypeError(
        f"x: {who} {what}, and x is a traced {family.name} value{inside}, which has none. {way}"
    )


def _name(adapter):
    return type(adapter.backend).__name__
