"""The property-based fuzz suite of the kit: random one-source programs on every backend, against float64.

Hypothesis (an optional test dependency: ``pip install 'diffinterface[test]'``)
draws random programs built from the array-API operations of
``xp = di.array_namespace(x)`` (elementwise, reductions, indexing and slicing,
concatenation, stacking, matmul, where, sort, cumulative sums, linalg), at
random shapes (0-d, size 1, 2-D, 3-D) in float32 and float64; random pytrees
of mixed leaf kinds; and random banded or block sparse programs through
``di.AutoSparse``. Each runs on every chosen backend and is compared with a
float64 reference (raw JAX under x64, itself checked against finite
differences): values, shapes, x's dtype and array family, and no error but a
declared refusal naming the function. Importing :mod:`diffinterface.testing`
(or this package) does not import hypothesis; running a campaign does.

    >>> import diffinterface as di
    >>> from diffinterface.testing.fuzz import fuzz_programs
    >>> report = fuzz_programs({"finitediff": di.AutoFiniteDiff()}, examples=4, seed=0)
    >>> report.ok, report.programs
    (True, 4)

A long campaign is one command (it prints the count tried and every failure)::

    python -m diffinterface.testing.fuzz --examples 10000

- :func:`fuzz_programs`, :class:`FuzzReport`: the campaign (:mod:`.campaign`); :data:`KNOWN_DEFECTS`
  (:mod:`.known`): defects reported apart until fixed;
- :mod:`.programs` (:class:`Program`, printable as Python), :mod:`.operations` (the builders),
  :mod:`.strategies` (hypothesis strategies), :mod:`.reference`, :mod:`.checks`, :mod:`.structured`
  (pytrees and sparse programs), :mod:`.features` (options drawn for a program's check: workers,
  AutoSelect, same-point contexts, structured outputs).
"""

import importlib

#: public name -> the module that defines it; imported on first use, so that importing this package
#: (as pytest does to collect the kit's fuzz test) needs no hypothesis until a campaign runs
_EXPORTS = {
    "fuzz_programs": "campaign",
    "assert_fuzz_passes": "campaign",
    "FuzzReport": "campaign",
    "KNOWN_DEFECTS": "known",
    "KnownDefect": "known",
    "Finding": "checks",
    "Program": "programs",
    "Step": "programs",
}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
