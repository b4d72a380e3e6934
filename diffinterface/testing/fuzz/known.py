"""Defects the fuzz suite knows and reports apart until they are fixed: :data:`KNOWN_DEFECTS`.

Each :class:`KnownDefect` names an issue and a rule ``matches(finding)``
that recognizes its findings by their symptom (the operator, the message,
the program; where a defect is one framework's, the framework its adapter
declares), never by a backend's id. A report lists the matching findings
apart and prints each (:class:`~.campaign.FuzzReport`);
:func:`~.campaign.assert_fuzz_passes` warns with them, so they show in
pytest's summary. They are never hidden: a fixed defect leaves its rule
matching nothing, and the rule is then deleted. Today the list is empty:
every defect the campaigns of issue #36 found is fixed.

    >>> KNOWN_DEFECTS
    ()
"""

from __future__ import annotations

import dataclasses
from typing import Callable


@dataclasses.dataclass(frozen=True)
class KnownDefect:
    """A defect the campaign knows: its name, what it is, and ``matches(finding) -> bool``."""

    name: str
    description: str
    matches: Callable


#: defects found and not yet fixed, each with the rule that recognizes its findings
KNOWN_DEFECTS: tuple = ()
