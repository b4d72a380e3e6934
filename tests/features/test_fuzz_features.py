"""The fuzz campaign's options: workers with changing state, AutoSelect, same-point contexts, outputs."""

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.fuzz import fuzz_programs
from diffinterface.testing.fuzz.__main__ import main
from diffinterface.testing.fuzz.feature_outputs import check_outputs, check_same_point
from diffinterface.testing.fuzz.features import FEATURES, Pools, known_features
from diffinterface.testing.fuzz.programs import Program, Step
from diffinterface.testing.fuzz.reference import array_reference

BACKENDS = {
    "finitediff-central": di.AutoFiniteDiff(),
    "finitediff-forward": di.AutoFiniteDiff("forward"),
}


def test_every_option_drawn_at_every_program_is_checked_and_clean():
    report = fuzz_programs(BACKENDS, examples=6, seed=2, kinds=("array",), feature_percent=100)
    assert report.ok, str(report)
    assert set(report.features) == set(FEATURES)
    assert "with workers" in report.summary()


def test_no_option_is_drawn_without_features():
    report = fuzz_programs(BACKENDS, examples=2, seed=2, kinds=("array",), features=())
    assert report.ok and not report.features


def test_an_unknown_option_is_refused_by_name():
    with pytest.raises(ValueError, match="features: expected some of workers"):
        known_features(["wrokers"])


def test_the_command_line_selects_options(capsys):
    status = main(
        ["--examples", "2", "--kinds", "array", "--backends", "finitediff-central"]
        + ["--features", "outputs", "--feature-percent", "100"]
    )
    printed = capsys.readouterr().out
    assert status == 0 and "with outputs" in printed and "with workers" not in printed


def _case(backend, point, program):
    reference = array_reference(program, point)
    return {
        "backends": {"b": backend},
        "chosen": ["b"],
        "reference": lambda backend: reference,
        "zero": set(),
        "rng": np.random.default_rng(0),
    }


class _Draws:
    """A stand-in for hypothesis's ``data`` drawing from ``sampled_from``: a preferred choice, else the first."""

    def __init__(self, *preferred):
        self.preferred = preferred

    def draw(self, strategy, label=None):
        elements = list(strategy.elements)
        return next((e for e in elements if e in self.preferred), elements[0])


def test_a_result_that_ignores_a_changed_constant_is_a_finding(monkeypatch):
    program, x = Program((2,), (Step("xp.sin(x)"),)), np.array([0.5, -0.25])
    # a backend that answers at the new Constant instead of refusing: the check says so
    monkeypatch.setattr(di, "hvp", lambda f, b, x, seeds, c, prep: (np.zeros(2),))
    monkeypatch.setattr(di, "pullback", lambda f, b, x, seeds, c, prep: (np.zeros(2),))
    monkeypatch.setattr(di, "pushforward", lambda f, b, x, seeds, c, prep: (np.zeros(2),))
    outcomes = check_same_point(_Draws(), program, x, _case(di.AutoFiniteDiff(), x, program))
    messages = [finding.message for outcome in outcomes for finding in outcome.findings]
    assert any("expected PreparationMismatchError" in m for m in messages), messages


def test_a_pair_output_must_give_a_tree_or_a_type_error():
    program, x = Program((), (Step("xp.sin(x)"),)), np.array(0.5)
    for operator in ("jacobian", "derivative", "second_derivative"):
        draws = _Draws("pair", operator, "numpy")
        outcomes = check_outputs(draws, program, x, _case(di.AutoFiniteDiff(), x, program))
        assert outcomes[0].checks == 1 and not outcomes[0].findings, outcomes


def test_pools_are_made_once_and_shut_down():
    pools = Pools()
    assert pools.get("thread") is pools.get("thread")
    pools.close()
    assert not pools._pools
