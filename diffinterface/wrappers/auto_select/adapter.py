"""The adapter of ``AutoSelect``: it prepares whole calls (``prepares_calls``), through its candidates.

Its facts (array families, in-place support, the parts whose frameworks may
run ``f``) are the union of its installed candidates' (read when asked), so that the checks
made before preparing and the explanations of errors raised by ``f`` see
every backend it may choose.

    >>> import diffinterface as di
    >>> from diffinterface.core import get_adapter
    >>> adapter = get_adapter(di.AutoSelect([di.AutoFiniteDiff(), di.AutoTorch(mode="reverse")]))
    >>> adapter.families, adapter.inplace
    (('numpy', 'torch'), True)
"""

from __future__ import annotations

from ...core import OPERATORS, Adapter, check_available, get_adapter
from ...errors import UnsupportedError
from .config import AutoSelect
from .selection import default_candidates, select


class AutoSelectAdapter(Adapter):
    """Prepares a call by each candidate and keeps the fastest that agrees (:func:`.selection.select`)."""

    prepares_calls = True
    mode = "both"

    def candidates(self):
        """``(candidate, installed)`` pairs; the default ones are read from the registry each time, so that
        a backend registered after this adapter was built joins them."""
        listed = self.backend.candidates
        if listed is None:
            listed = default_candidates(AutoSelect)
        return tuple((candidate, check_available(candidate)) for candidate in listed)

    def _adapters(self):
        return [get_adapter(candidate) for candidate, installed in self.candidates() if installed]

    @property
    def families(self):
        return tuple(dict.fromkeys(family for adapter in self._adapters() for family in adapter.families))

    @property
    def inplace(self):
        return any(adapter.inplace for adapter in self._adapters())

    @property
    def writes_cache(self):
        return all(adapter.writes_cache for adapter in self._adapters())

    def parts(self):
        return (self, *(part for adapter in self._adapters() for part in adapter.parts()))

    def prepare_call(self, call, strict, one_off):
        return select(self.backend, self.candidates(), call, strict, one_off)


def _not_inside_wrappers(name):
    def prepare(self, problem):
        raise UnsupportedError(
            f"backend: AutoSelect prepares whole calls and cannot be wrapped (it was asked for {name} inside "
            "another backend, such as SecondOrder or AutoSparse); put the wrappers among its candidates instead: "
            "AutoSelect([SecondOrder(...), AutoSparse(...), ...])"
        )

    return prepare


for _name in OPERATORS:
    setattr(AutoSelectAdapter, "prepare_" + _name, _not_inside_wrappers(_name))
del _name
