"""Regression probes: see :mod:`diffinterface.testing.regressions`."""

from __future__ import annotations


def probes():
    """This module's probes (:class:`~diffinterface.testing.BadInput`)."""
    return []
