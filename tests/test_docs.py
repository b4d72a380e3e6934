"""The documentation's code runs: each page's Python blocks, in order, in a fresh interpreter.

A page's blocks share one script (later blocks use what earlier ones
defined). ``docs/testing.md`` is left to the kit's own tests, which run what
it describes; the API reference pages hold no code of their own, and the
example pages include examples/*.py, which ``tests/test_examples.py`` runs.
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ["index", "operators", "preparation", "contexts", "second-order", "scipy", "scale"]


def python_blocks(page):
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / f"{page}.md").read_text(), flags=re.S)


@pytest.mark.parametrize("page", PAGES)
def test_page_code_runs(page):
    blocks = python_blocks(page)
    assert blocks, f"docs/{page}.md has no Python block"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", "\n".join(blocks)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    assert [p for p in pages if p not in nav] == []
