"""Selectors written inline: construction plus comparison, against a ``@dataclass(frozen=True, slots=True)``.

    python -m benchmarks.bench_selectors

Users write the selector inside the call, ``di.gradient(f, di.AutoJAX(), x, prep=prep)``,
so each prepared call builds one and compares it with the prepared one. This times
``di.AutoJAX(...) == stored`` against the same expression for a frozen slots dataclass
with the same fields and the same validation, alternately within each round; the
ratio printed is the median over rounds (below 1: the selector is cheaper). Equal
arguments give the value built before (``diffinterface.frozen``), so the inline
selector is also the very object the preparation stored, which the prepared path
compares by identity first.
"""

from __future__ import annotations

import dataclasses
import statistics
import timeit
from typing import Optional

import diffinterface as di
from diffinterface.selectors import AbstractBackend

ROUNDS = 41
NUMBER = 20000


@dataclasses.dataclass(frozen=True, slots=True)
class DataclassJAX(AbstractBackend):
    """AutoJAX's fields and validation as a frozen slots dataclass: the reference."""

    mode: Optional[str] = None
    jit: bool = True

    def __post_init__(self):
        if self.mode not in (None, "forward", "reverse"):
            raise ValueError(f"mode: {self.mode!r}")
        if not isinstance(self.jit, bool):
            raise TypeError(f"jit: {self.jit!r}")


def ratio(ours, reference):
    """Median over rounds of the per-call time of ``ours`` over ``reference``, and both times in ns."""
    ratios, times = [], []
    for _ in range(ROUNDS):
        a = min(timeit.repeat(ours, number=NUMBER, repeat=3)) / NUMBER
        b = min(timeit.repeat(reference, number=NUMBER, repeat=3)) / NUMBER
        ratios.append(a / b)
        times.append((a, b))
    a, b = (statistics.median(t) for t in zip(*times))
    return statistics.median(ratios), a * 1e9, b * 1e9


def main():
    stored, stored_reference = di.AutoJAX(), DataclassJAX()
    cases = {
        "AutoJAX() == stored": (
            lambda: di.AutoJAX() == stored,
            lambda: DataclassJAX() == stored_reference,
        ),
        "AutoJAX(mode='reverse') == stored": (
            lambda: di.AutoJAX(mode="reverse") == stored,
            lambda: DataclassJAX(mode="reverse") == stored_reference,
        ),
    }
    print(
        f"{'expression':<36} {'selector / dataclass':>20} {'selector ns':>12} {'dataclass ns':>13}"
    )
    for name, (ours, reference) in cases.items():
        r, a, b = ratio(ours, reference)
        print(f"{name:<36} {r:>20.2f} {a:>12.0f} {b:>13.0f}")


if __name__ == "__main__":
    main()
