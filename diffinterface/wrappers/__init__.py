"""Backends made of backends: ``SecondOrder`` (``second_order.py``), ``AutoSparse`` (``sparse/``),
``DifferentiateWith`` (``differentiate_with/``), one framework's function inside another's derivative,
``ImplicitFunction`` (``implicit/``), a solver's output differentiated by the implicit function theorem,
and ``AutoSelect`` (``auto_select/``), the fastest of several backends that agree.

Each wrapper backend registers its selector where it is defined; its adapter
module is imported on first use. ``sparse/``, ``auto_select/`` and ``differentiate_with/`` are
themselves imported on the first access to one of their names (PEP 562), so
that a process computing a plain gradient never pays for them; the registry
still finds ``AutoSparse``'s adapter, since an ``AutoSparse`` value exists only
once ``sparse/`` (which registers it) has been imported, and likewise ``AutoSelect``'s.

    >>> import diffinterface.wrappers as wrappers
    >>> wrappers.AutoSparse.__module__
    'diffinterface.wrappers.sparse.config'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..core import register_backend
from ..selectors import SecondOrder

if (
    TYPE_CHECKING
):  # the names below, for type checkers and IDEs; imported on first access at run time
    from .auto_select.config import AutoSelect
    from .auto_select.report import explain, selected_backend
    from .differentiate_with import DifferentiateWith
    from .implicit import ImplicitFunction, LinearSolveError
    from .sparse.config import (
        AutoSparse,
        DenseSparsityDetector,
        GreedyColoring,
        KnownSparsity,
        MixedMode,
        TracerSparsityDetector,
    )
    from .sparse.introspection import Coloring, coloring, ncolors, plot_sparsity, sparsity_pattern

register_backend(SecondOrder, "diffinterface.wrappers.second_order:SecondOrderAdapter")
# registered here (its selector module imports nothing), so that an AutoSelect value finds its
# adapter

#: public name -> the module defining it (under this package), imported on first access; the
#: defining module and not its package, whose ``coloring`` attribute is also a submodule's name
LAZY_NAMES = {
    "DifferentiateWith": "differentiate_with",
    **{name: "implicit" for name in ("ImplicitFunction", "LinearSolveError")},
    "AutoSelect": "auto_select.config",
    **{name: "auto_select.report" for name in ("explain", "selected_backend")},
    **{
        name: "sparse.config"
        for name in (
            "AutoSparse",
            "DenseSparsityDetector",
            "GreedyColoring",
            "KnownSparsity",
            "MixedMode",
            "TracerSparsityDetector",
        )
    },
    **{
        name: "sparse.introspection"
        for name in (
            "Coloring",
            "coloring",
            "ncolors",
            "plot_sparsity",
            "sparsity_pattern",
        )
    },
}

__all__ = ["SecondOrder", *LAZY_NAMES]


def __getattr__(name):
    module = LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later accesses are plain attribute reads
    return value


def __dir__():
    return sorted({*globals(), *LAZY_NAMES})
