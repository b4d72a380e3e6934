"""Every docstring example of the package runs (doctest), and every public name has a full docstring."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import diffinterface as di

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(di.__path__, prefix="diffinterface.")
    if not info.name.endswith("test_kit_conformance")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} doctest examples failed in {name}"
    )


@pytest.mark.parametrize("name", sorted(di.__all__))
def test_every_public_name_is_documented(name):
    obj = getattr(di, name)
    doc = getattr(obj, "__doc__", None) or ""
    assert doc.strip(), f"di.{name} has no docstring"
    if callable(obj) and not isinstance(obj, type) and name not in ("array_namespace",):
        for section in ("Parameters", "Returns", "Examples"):
            assert section in doc, f"di.{name}'s docstring has no {section} section"


def _attribute_docstrings(module):
    """The docstrings written under module-level assignments (read by the reference, unseen by doctest)."""
    import ast
    import inspect

    body = ast.parse(inspect.getsource(module)).body
    for statement, following in zip(body, body[1:]):
        if (
            isinstance(statement, ast.Assign)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            yield statement.targets[0].id, following.value.value


@pytest.mark.parametrize(
    "name", ["diffinterface.testing.backends", "diffinterface.testing.scenario"]
)
def test_attribute_docstring_examples_run(name):
    module = importlib.import_module(name)
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    examples = 0
    for attribute, text in _attribute_docstrings(module):
        test = parser.get_doctest(
            text, dict(vars(module)), f"{name}.{attribute}", module.__file__, 0
        )
        examples += len(test.examples)
        runner.run(test)
    assert examples > 0, f"no attribute docstring with an example in {name}"
    assert runner.failures == 0, f"{runner.failures} attribute docstring examples failed in {name}"


def test_operator_docstrings_wrap_as_textwrap_does():
    """The operators' docstrings are wrapped by a small fill of their own (importing the package writes
    them): it must give textwrap's lines on texts made of their words (none longer than a line)."""
    import random
    import textwrap

    from diffinterface.operators._docs import _fill

    texts = [di.gradient.__doc__, di.prepare_hvp_same_point.__doc__, di.jacobian.__doc__]
    words = " ".join(texts).split()
    rng = random.Random(0)
    for _ in range(300):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 80)))
        for indent in ("", "    "):
            expected = textwrap.fill(
                text, 88, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
            )
            assert _fill(text, 88, indent) == expected
