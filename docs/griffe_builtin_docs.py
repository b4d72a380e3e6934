"""Drop the help text of built-in types that inspection gives to class attributes.

Read from the imported class, an attribute such as a selector's ``mode = None``
or a context's ``kind = "Constant"`` carries its value's type's docstring
("str(object='') -> str", "bool(x) -> bool"), which mkdocstrings would print
as if it documented the attribute. This griffe extension removes those
docstrings while the site is built; an attribute left without one is not
shown (the class's Parameters section documents its fields).
"""

from __future__ import annotations

from typing import Any

import griffe

_BUILTIN_DOCS = {
    (t.__doc__ or "").strip()
    for t in (str, bytes, int, float, complex, bool, dict, list, tuple, set, frozenset, type, object, type(None))
}


class BuiltinDocsDropped(griffe.Extension):
    """Remove a built-in type's docstring from every attribute griffe inspects."""

    def on_attribute_instance(self, *, attr: griffe.Attribute, **kwargs: Any) -> None:
        if attr.docstring is not None and attr.docstring.value.strip() in _BUILTIN_DOCS:
            attr.docstring = None
