"""Write the API reference from the public names, so that a name added to ``__all__`` appears by itself.

A reference page holds a marker such as ``<!-- public-api: diffinterface operators -->``;
this MkDocs hook replaces it with one mkdocstrings block per public name of that
module whose definition lives in that part of the package. The public names
are ``__all__`` of ``diffinterface``, ``diffinterface.scipy`` and
``diffinterface.testing``, read statically (griffe): building the site imports
no framework. Each name of ``diffinterface`` falls into the first group whose
module prefix matches where it is defined; the last group of a module takes
everything else, so no public name can be left out of the reference.

Everything is read statically; the docstrings and signatures that only exist
once the modules are imported (the operators', the frozen classes') are
filled in by the griffe extension ``docs/griffe_runtime_docs.py``, which
imports no framework.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import griffe

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_MODULES = ("diffinterface", "diffinterface.scipy", "diffinterface.testing")

# (module, group, where the names are defined); a prefix of None takes every
# name of the module that no earlier group took
GROUPS = (
    ("diffinterface", "operators", ("diffinterface.operators.",)),
    ("diffinterface", "backends", ("diffinterface.selectors",)),
    ("diffinterface", "wrappers", ("diffinterface.wrappers.",)),
    ("diffinterface", "configuration", None),
    ("diffinterface.scipy", "all", None),
    ("diffinterface.testing", "all", None),
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


def grouped(module: str) -> dict[str, list[tuple[str, str]]]:
    """The public names of ``module`` by group: ``group -> [(name, definition path)]``."""
    groups: dict[str, list[tuple[str, str]]] = {g: [] for m, g, _ in GROUPS if m == module}
    for name in public_names(module):
        path = definition_path(module, name)
        for group_module, group, prefixes in GROUPS:
            if group_module == module and (prefixes is None or path.startswith(prefixes)):
                groups[group].append((name, path))
                break
    return groups


def render(module: str, group: str) -> str:
    """The mkdocstrings blocks of one group, in the order of ``__all__``."""
    return "\n\n".join(
        f"::: {path}\n    options:\n      heading_level: 2" for _, path in grouped(module)[group]
    )


def on_page_markdown(markdown: str, **kwargs) -> str:
    return _MARKER.sub(lambda match: render(match.group(1), match.group(2)), markdown)
