"""An implicit function differentiated by a backend that does not trace (finite differences): its rules still.

A backend without a framework (``AutoFiniteDiff``) would evaluate ``f`` at
perturbed points, one solver call each, and difference the solutions. When
the ``f`` of the call *is* an :class:`~diffinterface.wrappers.implicit.ImplicitFunction`,
its derivative is its rules' whatever the outer backend, so the call is
prepared by ``AutoAutograd``, whose tracing of numpy arrays reaches those
rules through autograd's bridge with no arithmetic of its own: one solver
call per point, the implicit function theorem's exact derivative. An ``f``
that merely calls one is evaluated as that backend always does, and so is
one at a pytree x: the transform comes last, after the pytree transforms
have replaced ``f`` by a function of the flat x.
This module registers the transform (``core/prepare.py``'s
``register_transform``) when ``wrappers/implicit/`` is imported.
"""

from __future__ import annotations

from ...core import check_available, get_adapter
from ...core.build import build
from ...core.prepare import register_transform
from ...core.transform import Step
from ...selectors import AutoAutograd


def untraced_outer(draft, setting):
    """The transform: the call prepared by AutoAutograd where it is installed (else left as it is)."""
    backend = AutoAutograd()
    if not check_available(backend):
        return None
    draft = draft._replace(call=draft.call._replace(backend=backend))
    return Step(draft, built=build(draft, setting._replace(adapter=get_adapter(backend))))


def register(implicit_class):
    """Register the transform for calls whose ``f`` is an instance of ``implicit_class``."""

    def applies(call, adapter):
        return adapter.capabilities.framework is None and isinstance(call.f, implicit_class)

    return register_transform(untraced_outer, applies)
