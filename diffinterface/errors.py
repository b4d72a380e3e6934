"""Exceptions raised by diffinterface."""


class PreparationMismatchError(ValueError):
    """A prepared call's arguments differ from those the preparation was made for."""


class MissingBackendError(ImportError):
    """The framework behind a backend selector is not installed."""


class UnsupportedError(NotImplementedError):
    """A backend cannot do what was asked (for instance mutating functions)."""
