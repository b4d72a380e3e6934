"""Every docstring example of the package runs (doctest), and every public name has a full docstring."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import diffinterface as di

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(di.__path__, prefix="diffinterface.")
    if not info.name.endswith("test_kit_conformance")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {name}"


@pytest.mark.parametrize("name", sorted(di.__all__))
def test_every_public_name_is_documented(name):
    obj = getattr(di, name)
    doc = getattr(obj, "__doc__", None) or ""
    assert doc.strip(), f"di.{name} has no docstring"
    if callable(obj) and not isinstance(obj, type) and name not in ("array_namespace",):
        for section in ("Parameters", "Returns", "Examples"):
            assert section in doc, f"di.{name}'s docstring has no {section} section"
