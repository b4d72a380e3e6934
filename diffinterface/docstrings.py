"""Docstring sections written once and shared: :func:`shared_sections` fills them in at import.

A docstring names a shared section on a line of its own, ``$name``, indented
where the section goes; the section's text (``{key}`` fields filled from the
decorator's keywords) replaces that line, every line at its indentation. The
documentation site reads the source without importing it:
``docs/griffe_runtime_docs.py`` copies the filled docstrings of public names
over the static ones that still hold a ``$name`` line.

    >>> @shared_sections({"x": "x : {kind}\\n    The point."}, kind="array")
    ... def f(x):
    ...     '''Twice x.
    ...
    ...     Parameters
    ...     ----------
    ...     $x
    ...     '''
    >>> print(f.__doc__.strip())
    Twice x.
    <BLANKLINE>
        Parameters
        ----------
        x : array
            The point.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, TypeVar

T = TypeVar("T")

#: a line that stands for a shared section: its indentation, then ``$name``
SECTION_LINE = re.compile(r"^([ \t]*)\$(\w+)[ \t]*$", re.MULTILINE)


def shared_sections(sections: Mapping[str, str], **fields: str) -> Callable[[T], T]:
    """A decorator writing ``sections`` (``{key}`` fields filled from ``fields``) into a docstring.

    Parameters
    ----------
    sections : mapping of str to str
        Section name -> its text, unindented; a docstring's ``$name`` line takes it.
    **fields : str
        Values of the ``{key}`` fields in the sections' texts.

    Returns
    -------
    callable
        The decorator: it rewrites the decorated object's ``__doc__`` and returns the object.

    Raises
    ------
    KeyError
        A ``$name`` line with no such section, or a ``{key}`` field with no such keyword.
    """

    def fill(match: re.Match) -> str:
        indent, text = match.group(1), sections[match.group(2)].format(**fields)
        return "\n".join(indent + line if line else line for line in text.splitlines())

    def decorate(obj: T) -> T:
        obj.__doc__ = SECTION_LINE.sub(fill, obj.__doc__ or "")
        return obj

    return decorate
