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

mkdocstrings names each entry's anchor after where the name is defined
(``#diffinterface.core.workers.close_workers``); the pages then rename every
such anchor, and every link to it, to the name a user imports
(``#diffinterface.close_workers``), and turn the names of a "See Also"
section into links to their entries.
"""

from __future__ import annotations

import html
import posixpath
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
    # the zero backends measure the interface's own cost in tests: shown with the kit
    ("diffinterface", "zero_backends", ("diffinterface.selectors.AutoZero",)),
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


def public_paths() -> dict[str, str]:
    """Where each public name is defined -> the name a user imports (``module.name``)."""
    return {
        path: f"{module}.{name}"
        for module in PUBLIC_MODULES
        for entries in grouped(module).values()
        for name, path in entries
    }


def reference_pages() -> dict[str, str]:
    """The public name (``module.name``) -> the source path of the reference page that shows it."""
    pages = {}
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        for module, group in _MARKER.findall(page.read_text()):
            for name, _ in grouped(module)[group]:
                pages[f"{module}.{name}"] = f"reference/{page.name}"
    return pages


@lru_cache(maxsize=None)
def _anchor_pattern() -> re.Pattern[str]:
    # longest first, so that a path is never renamed by a shorter one it starts with
    paths = sorted(public_paths(), key=len, reverse=True)
    return re.compile(r'(id="|#)(' + "|".join(map(re.escape, paths)) + r')(?=[."])')


def public_anchors(text: str) -> str:
    """``text`` (HTML) with every anchor of a definition path renamed to the public name."""
    renames = public_paths()
    return _anchor_pattern().sub(lambda m: m.group(1) + renames[m.group(2)], text)


_SEE_ALSO = re.compile(
    r'(<details class="see-also"[^>]*>\s*<summary>See Also</summary>\s*<p>)(.*?)(</p>)', re.S
)


def linked_see_also(text: str, page_url: str, use_directory_urls: bool) -> str:
    """The names of each "See Also" section of ``text`` as links to their reference entries."""
    pages = reference_pages()
    here = page_url.rstrip("/") if use_directory_urls else posixpath.dirname(page_url)

    def link(name: str) -> str:
        public = next(
            (p for p in pages if p.rsplit(".", 1)[-1] == name and p.startswith("diffinterface.")),
            None,
        )
        if public is None:
            return name
        page = pages[public].removesuffix(".md")
        target = f"{page}/" if use_directory_urls else f"{page}.html"
        href = posixpath.relpath(target, here or ".")
        if use_directory_urls and not href.endswith("/"):
            href += "/"
        return f'<a href="{html.escape(href)}#{public}"><code>{name}</code></a>'

    def links(match: re.Match[str]) -> str:
        names = [name.strip() for name in match.group(2).split(",")]
        return match.group(1) + ", ".join(link(name) for name in names) + match.group(3)

    return _SEE_ALSO.sub(links, text)


def on_page_markdown(markdown: str, **kwargs) -> str:
    return _MARKER.sub(lambda match: render(match.group(1), match.group(2)), markdown)


def on_page_content(content: str, page, config, **kwargs) -> str:
    # the table of contents (and the search index built from it) gets the public anchors too
    _rename_toc(page.toc)
    return linked_see_also(public_anchors(content), page.url, config["use_directory_urls"])


def _rename_toc(items) -> None:
    renames = public_paths()
    for item in items:
        if item.id in renames:
            item.id = renames[item.id]
        _rename_toc(item.children)


def on_post_page(output: str, **kwargs) -> str:
    # links made after the pages' content (autorefs' cross-references) point at the public anchors too
    return public_anchors(output)
