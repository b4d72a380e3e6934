"""Show Sphinx roles in docstrings as inline code on the documentation site.

The package's docstrings name other objects the way numpy and scipy do,
``:func:`gradient``` or ``:class:`~diffinterface.Constant```, which
mkdocstrings would print as they are. This griffe extension rewrites each
role to inline code (the name after a ``~`` shortened to its last part)
while the site is built; the source is not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`([^`]+)`")


def _as_code(match: re.Match) -> str:
    target = match.group(1)
    if target.startswith("~"):
        target = target.rsplit(".", 1)[-1]
    return f"`{target.lstrip('.')}`"


class SphinxRolesAsCode(griffe.Extension):
    """Rewrite ``:role:`target``` to ```target``` in every docstring griffe loads."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_as_code, obj.docstring.value)
