"""Write the API reference from the public names, so that a name added to ``__all__`` appears by itself.

A reference page holds a marker such as ``<!-- public-api: diffinterface operators -->``;
this MkDocs hook replaces it with one mkdocstrings block per public name of that
module whose definition lives in that part of the package. The public names
are ``__all__`` of ``diffinterface``, ``diffinterface.scipy`` and
``diffinterface.testing``, read statically (griffe): building the site imports
no framework. Each name of ``diffinterface`` falls into the first group whose
module prefix matches where it is defined; the last group of a module takes
everything else, so no public name can be left out of the reference.

The operators' docstrings are written at import time from the operator table
(``diffinterface/operators/_docs.py``) and the signatures of the selectors and
the other frozen classes come from their fields, so the names of
``diffinterface`` are rendered from the imported objects (``force_inspection``;
importing them imports no framework either); ``diffinterface.scipy`` and
``diffinterface.testing`` are read statically, so that the build needs
neither scipy nor hypothesis.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import griffe

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_MODULES = ("diffinterface", "diffinterface.scipy", "diffinterface.testing")

# (module, group, where the names are defined, rendered from the imported object)
# a prefix of None takes every name of the module that no earlier group took
GROUPS = (
    ("diffinterface", "operators", ("diffinterface.operators.",), True),
    ("diffinterface", "backends", ("diffinterface.selectors",), True),
    ("diffinterface", "wrappers", ("diffinterface.wrappers.",), True),
    ("diffinterface", "configuration", None, True),
    ("diffinterface.scipy", "all", None, False),
    ("diffinterface.testing", "all", None, False),
)

_MARKER = re.compile(r"<!-- public-api: ([\w.]+) (\w+) -->")


@lru_cache(maxsize=None)
def _module(name: str) -> griffe.Module:
    return griffe.load(name, search_paths=[str(ROOT)], resolve_aliases=True)  # type: ignore[return-value]


def public_names(module: str) -> list[str]:
    """``module.__all__``, read from the source without importing it."""
    exports = _module(module).exports
    if exports is None:
        raise ValueError(f"{module} has no literal __all__: the reference is generated from it")
    return [str(name) for name in exports]


def definition_path(module: str, name: str) -> str:
    """Where the public name ``module.name`` is defined (``diffinterface.gradient`` -> its module's path)."""
    member = _module(module).members[name]
    # a re-export can point at another re-export (diffinterface.gradient -> diffinterface.operators.gradient)
    target = member.final_target if isinstance(member, griffe.Alias) else member
    # a function named like the module that defines it (operators/gradient.py's gradient) is
    # shadowed by that module in a static reading of the package
    if target.is_module and name in target.members:
        inner = target.members[name]
        target = inner.final_target if isinstance(inner, griffe.Alias) else inner
    return target.path


def grouped(module: str) -> dict[str, list[tuple[str, str, bool]]]:
    """The public names of ``module`` by group: ``group -> [(name, definition path, inspected)]``."""
    groups: dict[str, list[tuple[str, str, bool]]] = {g: [] for m, g, _, _ in GROUPS if m == module}
    for name in public_names(module):
        path = definition_path(module, name)
        for group_module, group, prefixes, inspected in GROUPS:
            if group_module == module and (prefixes is None or path.startswith(prefixes)):
                groups[group].append((name, path, inspected))
                break
    return groups


def _block(path: str, inspected: bool) -> str:
    options = ["    options:", "      heading_level: 2"]
    if inspected:
        options.append("      force_inspection: true")
    return "\n".join([f"::: {path}", *options])


def render(module: str, group: str) -> str:
    """The mkdocstrings blocks of one group, in the order of ``__all__``."""
    entries = grouped(module)[group]
    return "\n\n".join(_block(path, inspected) for _, path, inspected in entries)


def on_page_markdown(markdown: str, **kwargs) -> str:
    return _MARKER.sub(lambda match: render(match.group(1), match.group(2)), markdown)
