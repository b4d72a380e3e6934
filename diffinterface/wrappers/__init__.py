"""Backends made of backends: ``DifferentiateWith`` (``differentiate_with/``)."""

from .differentiate_with import DifferentiateWith

__all__ = ["DifferentiateWith"]
