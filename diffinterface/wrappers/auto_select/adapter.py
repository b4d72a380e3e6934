"""The adapter of ``AutoSelect``: it prepares whole calls (``prepares_calls``), through its candidates.

Its facts (array families, in-place support, the parts whose frameworks may
run ``f``) are the union of its installed candidates' (read when asked), so that the checks
made before preparing and the explanations of errors raised by ``f`` see
every backend it may choose.

    >>> import diffinterface as di
    >>> from diffinterface.core import get_adapter
    >>> adapter = get_adapter(di.AutoSelect([di.AutoFiniteDiff(), di.AutoTorch(mode="reverse")]))
    >>> adapter.capabilities.families, adapter.capabilities.inplace
    (('numpy', 'torch'), True)
"""

from __future__ import annotations

from ...core import Adapter, Capabilities, check_available, get_adapter
from ...errors import UnsupportedError
from .config import AutoSelect
from .selection import default_candidates, select


#: what AutoSelect declares itself (the rest is its candidates', see
#: ``AutoSelectAdapter.capabilities``)
CAPABILITIES = Capabilities(
    mode="both",
    prepares_calls=True,
    needs_values=(
        "runs and times its candidates on x at preparation",
        "Prepare outside the transform, at a concrete x of the same shape and dtype (prep = "
        "di.prepare_gradient(f, di.AutoSelect(), x0)), and pass prep= inside it",
    ),
)


class AutoSelectAdapter(Adapter):
    """Prepares a call by each candidate and keeps the fastest that agrees (:func:`.selection.select`).

    Inside another backend (``SecondOrder(outer, AutoSelect(...))``, ``AutoSparse(AutoSelect(...))``),
    which hands it problems rather than calls, each operator is the first candidate's that prepares
    it, in the order listed: nothing is compared or timed there. For a timed choice among wrapped
    configurations, list them as candidates: ``AutoSelect([AutoSparse(AutoJAX()), ...])``.
    """

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
    def capabilities(self):
        """Its own facts, with the array families, in-place support and Cache writes of its installed
        candidates (any of which it may choose), read when asked."""
        candidates = [adapter.capabilities for adapter in self._adapters()]
        return CAPABILITIES.replace(
            families=tuple(dict.fromkeys(f for c in candidates for f in c.families)),
            inplace=any(c.inplace for c in candidates),
            writes_cache=any(c.writes_cache for c in candidates),
            approximate=any(c.approximate for c in candidates),
            float64_accuracy=next(
                (c.float64_accuracy for c in candidates if c.float64_accuracy), None
            ),
        )

    def parts(self):
        return (self, *(part for adapter in self._adapters() for part in adapter.parts()))

    def prepare_call(self, call, strict, one_off):
        return select(self.backend, self.candidates(), call, strict, one_off)

    def prepare(self, operator, problem):
        """``operator`` of the first candidate that prepares it, in the order listed (inside a
        wrapper: nothing is timed)."""
        errors = []
        for candidate, installed in self.candidates():
            adapter = get_adapter(candidate) if installed else None
            if adapter is None or problem.family not in adapter.capabilities.families:
                continue
            try:
                return problem.replace(adapter=adapter).impl(operator)
            except Exception as error:  # noqa: BLE001 - the next candidate may prepare it
                errors.append(error)
        if errors:
            raise errors[0]
        raise UnsupportedError(
            f"backend: no candidate of {self.backend!r} takes {problem.family} arrays"
        )
