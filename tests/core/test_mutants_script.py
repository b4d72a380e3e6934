"""``tools/mutants`` lists its planted bugs, and each one's text still occurs once in its file (the
mutants themselves run on demand, ``tools/mutants``, not in this suite)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
import pytest

from tests.paths import ROOT

SCRIPT = ROOT / "tools" / "mutants"


def _module():
    loader = importlib.machinery.SourceFileLoader("tools_mutants", str(SCRIPT))
    spec = importlib.util.spec_from_loader("tools_mutants", loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["tools_mutants"] = module  # dataclasses look their module up
    loader.exec_module(module)
    return module


MUTANTS = _module().MUTANTS


def test_list_names_every_mutant():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--list"], capture_output=True, text=True, check=True
    )
    assert [line.split("\t")[0] for line in done.stdout.splitlines()] == [m.name for m in MUTANTS]


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_mutant_still_matches_its_source_once(mutant):
    module = _module()
    assert module.pattern_matches(mutant), (
        f"{mutant.name}: {mutant.old!r} no longer occurs exactly once in {mutant.path}"
    )
    assert mutant.old != mutant.new
    for target in mutant.tests:
        if target.startswith("tests/"):
            assert (ROOT / target.split("::")[0]).exists(), target


def test_an_unknown_name_is_refused_by_name():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "no_such_mutant"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "--only" in done.stderr and "no_such_mutant" in done.stderr
