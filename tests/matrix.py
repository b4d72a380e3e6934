"""Which of a test's cases the README's quick command runs; the others run under ``--di-matrix=rest``.

The kit splits its own cases by backend configuration
(:func:`diffinterface.testing.pytest_plugin.matrix_marks`); the repository's
slower whole-program tests (documentation pages, examples, subprocess runs)
keep a representative case in the quick run and leave the others to the rest,
which CI runs too.
"""

from __future__ import annotations

import pytest

from diffinterface.testing.pytest_plugin import SECONDARY

__all__ = ["SECONDARY", "quick_cases"]


def quick_cases(values, quick, ids=None):
    """``values`` as ``pytest.param`` cases, those not in ``quick`` marked for the rest run.

    >>> [[mark.name for mark in case.marks] for case in quick_cases(["index", "faq"], quick={"index"})]
    [[], ['di_secondary']]
    """
    unknown = set(quick) - set(values)
    if unknown:
        raise ValueError(f"quick: expected some of {list(values)}; got {sorted(unknown)}")
    ids = list(values) if ids is None else list(ids)
    return [
        pytest.param(value, id=str(case_id), marks=() if value in quick else (SECONDARY,))
        for value, case_id in zip(values, ids)
    ]
