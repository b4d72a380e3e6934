"""Defects the fuzz suite knows and reports apart until they are fixed: :data:`KNOWN_DEFECTS`.

Each :class:`KnownDefect` names an item of issue #36 and a rule that matches
its findings by their symptom (the operator, the message, the program; where
a defect is one framework's, the framework its adapter declares), never by
a backend's id. A report lists the matching findings apart and prints each
(:class:`~.campaign.FuzzReport`); :func:`~.campaign.assert_fuzz_passes`
warns with them, so they show in pytest's summary. They are never hidden: a
fixed defect leaves its rule matching nothing, and the rule is then deleted.

    >>> from diffinterface.testing.fuzz.checks import Finding
    >>> finding = Finding("autograd", "numpy", "float32", "gradient",
    ...                   "expected shape (2,) and dtype float32; got numpy float64 array of shape (2,)", "def f(x): ...")
    >>> _float32_became_float64(finding)
    True
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from ...core import get_adapter
from ...core.registry import registration
from ..tolerances import _uses_finite_differences


@dataclasses.dataclass(frozen=True)
class KnownDefect:
    """A defect the campaign knows: its name, what it is, and ``matches(finding) -> bool``."""

    name: str
    description: str
    matches: Callable


def _framework(finding):
    try:
        return get_adapter(finding.backend).framework
    except Exception:  # noqa: BLE001 - a backend that cannot say matches no framework rule
        return None


def _tree(finding):
    return "def g(p):" in finding.source


def _finite_difference_step_per_leaf(finding):
    return (_tree(finding) and finding.backend is not None and _uses_finite_differences(finding.backend)
            and finding.dtype == "float64" and "float32" in finding.source.split("\np = ", 1)[-1]
            and "wrong values" in finding.message)


def _float32_became_float64(finding):
    return "and dtype float32; got" in finding.message and "float64" in finding.message.split("; got", 1)[1]


def _raw_rule_error(finding):
    return finding.message.startswith("raised NotImplementedError: ") and (
        "JVP of" in finding.message or "Gradient of sort" in finding.message)


def _sort_forward_rule(finding):
    return (_framework(finding) == "autograd" and finding.operator in ("pushforward", "derivative")
            and "xp.sort(" in finding.source and ("expected shape" in finding.message or any(
                words in finding.message for words in ("same number of dimensions", "IndexError"))))


def _tree_tangent_kinds(finding):
    return "expected a tree shaped like x; leaf" in finding.message and "given builtins.float" in finding.message


def _autograd_tree_pullback(finding):
    return (_framework(finding) == "autograd" and _tree(finding)
            and "'float' object has no attribute 'astype'" in finding.message)


def _zero_tree_output_dtype(finding):
    return (_tree(finding) and finding.backend is not None and registration(finding.backend).returns_zeros
            and finding.operator == "pushforward" and "expected shape () and dtype" in finding.message)


#: the defects issue #36 lists (and the fuzz campaign found) that are not fixed on the branch this suite ships with
KNOWN_DEFECTS = (
    KnownDefect("finite-difference-step-per-leaf",
                "#36 (smaller): AutoFiniteDiff on a tree with a float32 leaf gives the float64 leaves float32 accuracy",
                _finite_difference_step_per_leaf),
    KnownDefect("float32-results-in-float64",
                "#36 class 5: float32 x gives float64 derivatives (autograd rules that promote: maximum, max...)",
                _float32_became_float64),
    KnownDefect("raw-framework-rule-error",
                "#36 class 4: a framework's missing rule raises its own NotImplementedError (autograd: JVP of det, "
                "cholesky, solve, slogdet; gradient of sort of a multi-dimensional array) instead of an error "
                "naming the function and the way around", _raw_rule_error),
    KnownDefect("autograd-sort-forward-rule",
                "#36 class 4: autograd's forward rule of sort along an axis of a 2-D or 3-D array gives a wrong shape "
                "(or an IndexError further on)",
                _sort_forward_rule),
    KnownDefect("tree-tangent-kinds",
                "#36 kinds: a Python float tangent leaf where x's leaf is a NumPy scalar is refused",
                _tree_tangent_kinds),
    KnownDefect("autograd-tree-pullback-attribute-error",
                "AutoAutograd's pullback of a tree with a 0-d float32 leaf raises AttributeError ('float' ... 'astype')",
                _autograd_tree_pullback),
    KnownDefect("zero-backend-tree-output-dtype",
                "the zero backends' pushforward of a tree mixing float32 and float64 leaves is float32, y is float64",
                _zero_tree_output_dtype),
)
