"""The documentation holds what a user needs, and its code runs.

Each page's Python blocks run, in order, in a fresh interpreter (later blocks
use what earlier ones defined); pages written as interpreter sessions print
exactly what they show, and so do the first examples of the README and the
home page. ``docs/testing.md`` is left to the kit's own tests, which run what
it describes; the example pages include examples/*.py, which
``tests/docs/test_examples.py`` runs, and their recorded output. The API reference
is generated from the public names by ``docs/api_reference_hook.py``: every
public name has an entry in the built site with its parameters and an
example, and nothing internal has one.
"""

import functools
import os
import re
import subprocess
import sys

import pytest

from tests.matrix import SECONDARY, quick_cases
from tests.paths import ROOT

PAGES = [
    "index",
    "operators",
    "preparation",
    "contexts",
    "second-order",
    "scipy",
    "auto-select",
    "aux-outputs",
    "linear-operators",
    "scale",
    "nesting",
    "implicit",
    "sparse",
]

#: what a page's code prints where the page quotes it in prose
PRINTS = {"sparse": ("bidirectional 3", "7 4")}


def python_blocks(page):
    return re.findall(
        r"```python\n(.*?)```", (ROOT / "docs" / f"{page}.md").read_text(), flags=re.S
    )


@pytest.mark.parametrize("page", quick_cases(PAGES, quick={"index"}))
def test_page_code_runs(page):
    blocks = python_blocks(page)
    assert blocks, f"docs/{page}.md has no Python block"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", "\n".join(blocks)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for line in PRINTS.get(page, ()):
        assert line in done.stdout, f"docs/{page}.md: expected its code to print {line!r}"


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    assert [p for p in pages if p not in nav] == []


# --- the API reference: generated from the public names, each with its parameters and an example ---

sys.path.insert(0, str(ROOT / "docs"))
import api_reference_hook as reference  # noqa: E402  (the MkDocs hook that writes the reference)

# built-in help text that once leaked into the reference, and internal names that had entries there
BUILTIN_HELP = (
    "dict() -> new empty dictionary",
    "bool(x) -> bool",
    "str(object=",
    "Alias for field number",
    " at 0x",
)
INTERNAL_NAMES = (
    "FALLBACKS",
    "OPERATORS",
    "Impl",
    "Call",
    "Operator",
    "prepare",
    "prepared_fast_path",
    "prepared_call",
)


@functools.lru_cache(maxsize=None)
def _reference_package(name):
    import griffe
    from griffe_runtime_docs import RuntimeDocstringsAndSignatures

    return griffe.load(
        name,
        search_paths=[str(ROOT), *sys.path],
        extensions=griffe.load_extensions(RuntimeDocstringsAndSignatures()),
    )


def _reference_object(path):
    """The object as the site's reference reads it (griffe, statically, with the build's extension)."""
    return _reference_package(path.split(".")[0])[path.split(".", 1)[1]]


def _sections(obj):
    if obj.docstring is None:
        return {}
    return {section.kind.value: section for section in obj.docstring.parse("numpy")}


def _missing(obj):
    """What the reference entry of ``obj`` lacks, in words (empty when it is complete)."""
    if obj.docstring is None or not obj.docstring.value.strip():
        return ["a docstring"]
    sections = _sections(obj)
    missing = []
    if "examples" not in sections:
        missing.append("an Examples section (a runnable >>> example)")
    if obj.is_attribute:
        return missing
    function = obj
    if obj.is_class:
        init = obj.members.get("__init__")
        if init is not None and init.docstring is not None:
            sections = {**_sections(init), **sections}
        function = init if init is not None and init.is_function else None
        params = (
            [p.name for p in obj.parameters]
            if function is None
            else [p.name for p in function.parameters]
        )
    else:
        params = [p.name for p in function.parameters]
    params = [p for p in params if p not in ("self", "cls")]
    if obj.is_class and not params and _has_attributes(obj):
        if "parameters" not in sections and "attributes" not in sections:
            missing.append("an Attributes section (what a user reads off it)")
    elif params:
        if "parameters" not in sections:
            missing.append("a Parameters section for " + ", ".join(params))
        else:
            documented = {p.name.lstrip("*") for p in sections["parameters"].value}
            absent = [p for p in params if p.lstrip("*") not in documented]
            if absent:
                missing.append("Parameters entries for " + ", ".join(absent))
            blank = [p.name for p in sections["parameters"].value if not p.description.strip()]
            if blank:
                missing.append("a description of " + ", ".join(blank))
    if obj.is_function and "returns" not in sections and obj.name.split(".")[-1] != "__init__":
        missing.append("a Returns section")
    return missing


def _has_attributes(cls):
    """Whether a user reads something off instances of ``cls``: an exception, or public attributes."""
    exception = any(str(base).endswith(("Error", "Exception")) for base in cls.bases)
    public = [m for n, m in cls.members.items() if not n.startswith("_") and m.is_attribute]
    return exception or bool(public)


def _public_entries():
    for module in reference.PUBLIC_MODULES:
        for group, entries in reference.grouped(module).items():
            for name, path in entries:
                yield module, name, path


# Public names whose docstrings live in files the documentation does not own: each
# must gain what the message of test_every_public_name_has_a_complete_reference_entry
# says, and then leave this list (the test fails on a stale entry too).
INCOMPLETE_ELSEWHERE: set[str] = set()


def test_the_reference_has_every_public_name():
    import importlib

    for module in reference.PUBLIC_MODULES:
        names = [name for group in reference.grouped(module).values() for name, _ in group]
        assert sorted(names) == sorted(importlib.import_module(module).__all__), module
    pages = "".join(p.read_text() for p in (ROOT / "docs" / "reference").glob("*.md"))
    for module, group, _ in reference.GROUPS:
        assert f"<!-- public-api: {module} {group} -->" in pages, (
            f"no reference page shows {module} {group}"
        )


def test_every_public_name_has_a_complete_reference_entry():
    incomplete = {}
    for module, name, path in _public_entries():
        missing = _missing(_reference_object(path))
        if missing:
            incomplete[f"{module}.{name}"] = f"{path} needs " + "; ".join(missing)
    new = {k: v for k, v in incomplete.items() if k not in INCOMPLETE_ELSEWHERE}
    assert not new, "reference entries without what a user needs:\n" + "\n".join(
        f"- {k}: {v}" for k, v in new.items()
    )
    stale = INCOMPLETE_ELSEWHERE - set(incomplete)
    assert not stale, f"complete now, remove from INCOMPLETE_ELSEWHERE: {sorted(stale)}"


@SECONDARY  # builds the whole site (CI also runs mkdocs build --strict)
def test_the_built_site_shows_every_public_name_and_no_internals(tmp_path):
    """The strict build succeeds, and its reference pages hold every public name and nothing internal."""
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (
        "mkdocs build --strict failed (pip install -e '.[docs]'):\n" + done.stderr
    )
    html = "".join(p.read_text() for p in (site / "reference").rglob("*.html"))
    absent = [
        f"{module}.{name}"
        for module, name, path in _public_entries()
        if f'id="{module}.{name}"' not in html
    ]
    assert not absent, f"public names without a reference entry in the built site: {absent}"
    leaked = [text for text in BUILTIN_HELP if text in html]
    assert not leaked, f"built-in help text in the built reference: {leaked}"
    entries = set(re.findall(r'id="(diffinterface[\w.]*)"', html))
    internal = sorted(e for e in entries if e.rsplit(".", 1)[-1] in INTERNAL_NAMES)
    assert not internal, f"internal names with entries in the built reference: {internal}"
    # anchors read as the names a user imports, never as the modules that define them
    public = {f"{module}.{name}" for module, name, _ in _public_entries()}
    private = sorted(e for e in entries if not any(e == p or e.startswith(p + ".") for p in public))
    assert not private, f"reference anchors under an internal module path: {private[:10]}"
    see_also = re.findall(r"<summary>See Also</summary>\s*<p>(.*?)</p>", html, flags=re.S)
    assert see_also and all("<a href=" in names for names in see_also), (
        "a See Also section of the reference without links"
    )
    assert "<img" in (site / "benchmarks" / "index.html").read_text(), (
        "the benchmarks page shows no plot"
    )


# --- pages written as interpreter sessions, the README's first screen, the examples' pages ---

SESSION_PAGES = [
    "faq",
    "coming-from",
    "pytrees",
    "differentiate-with",
    "tensorflow-keras",
    "complex",
    "examples/backend-agnostic",
]

_RUN_SESSION = """
import doctest, sys
text = sys.stdin.read()
test = doctest.DocTestParser().get_doctest(text, {}, "page", "page", 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
runner.run(test)
sys.exit(1 if runner.failures else 0)
"""


@pytest.mark.parametrize("page", quick_cases(SESSION_PAGES, quick={"faq"}))
def test_page_sessions_print_what_they_show(page):
    """The ``pycon`` blocks of a page, in order, print exactly the output the page shows."""
    blocks = re.findall(
        r"```pycon\n(.*?)```", (ROOT / "docs" / f"{page}.md").read_text(), flags=re.S
    )
    assert blocks, f"docs/{page}.md has no pycon block"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _RUN_SESSION],
        input="\n".join(blocks),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]


@pytest.mark.parametrize("document", ["README.md", "docs/index.md"])
def test_the_first_example_prints_what_it_shows(document):
    text = (ROOT / document).read_text()
    code = re.search(r"```python\n(.*?)```", text, flags=re.S).group(1)
    shown = re.search(r"```text\n(.*?)```", text, flags=re.S).group(1)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown, (
        f"{document} shows:\n{shown}\nbut its example prints:\n{done.stdout}"
    )


def test_the_readme_first_screen_has_the_pitch_the_install_and_an_example():
    lines = (ROOT / "README.md").read_text().splitlines()
    first = "\n".join(lines[:45])
    assert len(lines) <= 200, (
        f"README.md has {len(lines)} lines: move material to CONTRIBUTING.md or docs/"
    )
    for needed in (
        "One Python API for derivatives",
        "Python ≥ 3.10",
        'pip install "diffinterface[jax]"',
        "python examples/quickstart.py",
        "python -m pytest",
        "```python",
        "```text",
    ):
        assert needed in first, f"README.md's first 45 lines lack {needed!r}"


def test_license_is_the_one_pyproject_declares():
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_every_example_has_a_page_with_its_source_and_output():
    from tests.docs.test_examples import CLAIMS

    pages = {p: p.read_text() for p in (ROOT / "docs" / "examples").glob("*.md")}
    for script, claim in CLAIMS.items():
        name = script.removesuffix(".py")
        showing = [p.name for p, text in pages.items() if f'--8<-- "examples/{script}"' in text]
        assert showing, f"no page in docs/examples/ shows examples/{script}"
        assert (
            f'--8<-- "docs/examples/output/{name}.txt"'
            in pages[ROOT / "docs" / "examples" / showing[0]]
        ), f"docs/examples/{showing[0]} does not show the output of {script}"
        output = ROOT / "docs" / "examples" / "output" / f"{name}.txt"
        assert claim in output.read_text(), (
            f"{output} lacks {claim!r}: python docs/record_example_outputs.py {script}"
        )


@pytest.mark.parametrize("document", ["README.md", "CONTRIBUTING.md"])
def test_the_repository_documents_link_to_files_that_exist(document):
    links = re.findall(r"\]\(([^)#\s]+)", (ROOT / document).read_text())
    broken = [link for link in links if "://" not in link and not (ROOT / link).exists()]
    assert links and not broken, f"{document} links to missing files: {broken}"
