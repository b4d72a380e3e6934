"""A fuzz campaign: hypothesis draws programs, trees and sparse programs; each runs on every chosen backend.

:func:`fuzz_programs` returns a :class:`FuzzReport`: how many programs it
tried (and of which kind), how many checks it made, the points it drew again
(too near a kink, or values too large for float32), the refusals each backend
declared (counted, not failures) and the findings, each with its program as
Python source. Findings that match :data:`KNOWN_DEFECTS` are listed apart.

    >>> import diffinterface as di
    >>> report = fuzz_programs({"finitediff": di.AutoFiniteDiff()}, examples=3, seed=1, kinds=("array",))
    >>> report.programs, report.ok
    (3, True)
"""

from __future__ import annotations

import collections
import dataclasses
import os
import time
import warnings
import numpy as np
from hypothesis import (
    HealthCheck,
    Phase,
    Verbosity,
    assume,
    given,
    seed as hypothesis_seed,
    settings,
)
from hypothesis import strategies as st

from ...core import get_adapter
from ...core.registry import registration
from ..backends import BACKENDS, ZERO_BACKENDS
from ..families import tree_leaves
from ..runner import _as_backend_dict
from .checks import ORDERS, Finding, Outcome, check_program
from .features import FEATURES, PERCENT, Options
from .features import families as _families
from .known import KNOWN_DEFECTS
from .operations import OPERATIONS, SMOOTH_UNARY
from .reference import array_reference, reference_disagreement
from .strategies import DTYPES, points, programs, trees
from .structured import check_sparse, check_tree, sparse_program

#: a kinked step's argument must be this far from its kink at the drawn point
MARGIN = 0.1
#: values (and reference derivatives) larger than this are drawn again: float32 cannot compare them
LARGEST = 1e3
KINDS = ("array", "tree", "sparse")
#: examples per hypothesis run: a time limit is checked between runs
CHUNK = 10


@dataclasses.dataclass
class FuzzReport:
    """What a campaign tried and found."""

    programs: int = 0
    kinds: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    #: option of :mod:`.features` -> the programs whose check drew it
    features: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    checks: int = 0
    redrawn: int = 0
    findings: list = dataclasses.field(default_factory=list)
    known: list = dataclasses.field(default_factory=list)
    refusals: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    @property
    def ok(self):
        return not self.findings

    def distinct(self, findings=None):
        """``(finding, count)`` per distinct defect (backend, operator, message's words), the shortest program kept."""
        groups: dict = {}
        for finding in self.findings if findings is None else findings:
            key = finding.signature()
            shortest, count = groups.get(key, (finding, 0))
            if len(finding.source) < len(shortest.source):
                shortest = finding
            groups[key] = (shortest, count + 1)
        return list(groups.values())

    def summary(self):
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.kinds.items()))
        kinds += "".join(f"; {n} with {feature}" for feature, n in sorted(self.features.items()))
        return (
            f"{self.programs} programs ({kinds}), {self.checks} checks, {self.redrawn} points drawn again; "
            f"{len(self.findings)} findings ({len(self.distinct())} distinct), "
            f"{len(self.known)} known, {sum(self.refusals.values())} refusals"
        )

    def __str__(self):
        lines = [self.summary()]
        for (backend_id, function), n in sorted(self.refusals.items()):
            lines.append(
                f"refused: {backend_id} declares it cannot differentiate {function} ({n} times)"
            )
        for finding, n in self.distinct(self.known):
            lines.append(f"known defect {finding.known} ({n} times): {finding}")
        for finding, n in self.distinct():
            lines.append(f"FAILURE ({n} times): {finding}")
        return "\n".join(lines)

    def add(self, outcome, known_defects):
        self.checks += outcome.checks
        self.refusals.update(outcome.refusals)
        for finding in outcome.findings:
            finding.known = next((d.name for d in known_defects if d.matches(finding)), None)
            (self.known if finding.known else self.findings).append(finding)


def _returns_zeros(backend):
    return registration(backend).returns_zeros


def fuzz_programs(
    backends=None,
    examples=100,
    seed=0,
    *,
    kinds=KINDS,
    operations=tuple(OPERATIONS),
    operators=None,
    per_program=None,
    checks_per_program=None,
    all_families=False,
    features=FEATURES,
    feature_percent=PERCENT,
    known_defects=KNOWN_DEFECTS,
    progress=None,
    time_limit=None,
):
    """Run ``examples`` random programs on ``backends``; return a :class:`FuzzReport`.

    Parameters
    ----------
    backends : selector, list or dict id -> selector, optional
        Default: every backend of ``diffinterface.testing.BACKENDS`` and ``ZERO_BACKENDS``.
    examples : int
        Programs to try (hypothesis examples; a point drawn again does not count).
    seed : int
        Hypothesis's seed: the same seed draws the same programs.
    kinds : tuple of str
        ``"array"`` (programs on one array), ``"tree"`` (pytrees of mixed leaves), ``"sparse"`` (AutoSparse).
    operations : tuple of str
        The families of :data:`~.operations.OPERATIONS` programs are built from.
    operators : tuple of str, optional
        The operators checked on array programs (default: all of :data:`~.checks.ORDERS`).
    per_program : int, optional
        Check each program on this many backends drawn at random (default: all), for long campaigns.
    checks_per_program : int, optional
        Check this many of ``operators``, drawn at random, per array program (default: all), for long campaigns.
    all_families : bool
        Check each backend with x in every array family it accepts (default: one drawn family).
    features : tuple of str
        The options of :data:`~.features.FEATURES` an array program's check may draw (workers,
        AutoSelect, same-point preparations with contexts, structured outputs).
    feature_percent : int
        The chance, in percent, that a program's check draws each of ``features``.
    known_defects : tuple of KnownDefect
        Findings that match one are reported apart (:attr:`FuzzReport.known`).
    progress : callable, optional
        Called with the report after each program.
    time_limit : float, optional
        Seconds after which the campaign stops with what it found (the report says how many programs it tried);
        checked between hypothesis runs of :data:`CHUNK` programs (seeds ``seed``, ``seed + 1``...).

    Returns
    -------
    FuzzReport

    Examples
    --------
    >>> import diffinterface as di
    >>> fuzz_programs(di.AutoFiniteDiff(), examples=2, seed=3, kinds=("tree",)).ok
    True
    """
    backends = _as_backend_dict(backends if backends is not None else _every_backend())
    ids = list(backends)
    zero = {k for k, b in backends.items() if _returns_zeros(b)}
    report = FuzzReport()
    weighted = [k for k in ("array", "array", "array", "array", "tree", "sparse") if k in kinds]
    stop = None if time_limit is None else time.monotonic() + time_limit
    options = Options(features, feature_percent, seed, report.features)

    def campaign(data):
        kind = data.draw(st.sampled_from(weighted), label="kind")
        chosen = (
            ids
            if per_program is None or per_program >= len(ids)
            else data.draw(
                st.lists(
                    st.sampled_from(ids), min_size=per_program, max_size=per_program, unique=True
                ),
                label="backends",
            )
        )
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="tangents"))
        if kind == "tree":
            tree = data.draw(trees(), label="tree")
            expressions = [data.draw(st.sampled_from(SMOOTH_UNARY)) for _ in tree_leaves(tree)]
            report.programs += 1
            report.kinds[kind] += 1
            for backend_id in chosen:
                report.add(
                    check_tree(
                        tree, expressions, backend_id, backends[backend_id], rng, backend_id in zero
                    ),
                    known_defects,
                )
        else:
            _array_or_sparse(data, kind, chosen, rng)
        if progress is not None:
            progress(report)

    def _array_or_sparse(data, kind, chosen, rng):
        if kind == "sparse":
            n = data.draw(st.sampled_from((4, 6, 8, 9)), label="n")
            pattern = data.draw(st.sampled_from(("banded", "block")), label="pattern")
            width = data.draw(
                st.sampled_from([w for w in (1, 2, 3) if pattern == "banded" or n % w == 0])
            )
            expressions = data.draw(st.lists(st.sampled_from(SMOOTH_UNARY), min_size=1, max_size=3))
            program = sparse_program(n, pattern, width, expressions)
        else:
            program = data.draw(programs(operations), label="program")
        dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
        point = data.draw(points(program.shape, dtype), label="x")
        wide = point.astype(np.float64)
        try:
            far_from_kinks = program.margin(wide) > MARGIN and program.largest_value(wide) < LARGEST
        except Exception as error:  # noqa: BLE001 - a program numpy cannot run is a finding of its own
            report.programs += 1
            report.add(
                _reference_outcome(
                    program, point, "numpy", f"raised {type(error).__name__}: {error}"[:400]
                ),
                known_defects,
            )
            return
        if not far_from_kinks:
            report.redrawn += 1
            assume(False)
        references: dict = {}

        def reference(backend):
            framework = _reference_framework(backend)
            if framework not in references:
                references[framework] = _reference(program, point, framework)
            return references[framework]

        first = reference(backends[chosen[0]])
        if (
            first is not None
            and max(float(np.max(np.abs(v), initial=0.0)) for v in first.values()) > LARGEST
        ):
            report.redrawn += 1
            assume(False)
        report.programs += 1
        report.kinds[kind] += 1
        wanted = operators if operators is not None else tuple(ORDERS)
        if checks_per_program is not None and checks_per_program < len(wanted):
            wanted = data.draw(
                st.lists(
                    st.sampled_from(wanted),
                    min_size=checks_per_program,
                    max_size=checks_per_program,
                    unique=True,
                ),
                label="operators",
            )
        for backend_id in chosen:
            backend = backends[backend_id]
            expected = reference(backend)
            if expected is None:
                continue
            if kind == "sparse":
                report.add(
                    check_sparse(program, point, backend_id, backend, expected, backend_id in zero),
                    known_defects,
                )
                continue
            families = _families(backend)
            for family in (
                families if all_families else [data.draw(st.sampled_from(families), label="family")]
            ):
                report.add(
                    check_program(
                        program,
                        point,
                        backend_id,
                        backend,
                        family,
                        expected,
                        rng,
                        wanted,
                        backend_id in zero,
                    ),
                    known_defects,
                )
        if kind == "array":
            case = dict(backends=backends, chosen=chosen, reference=reference, zero=zero, rng=rng)
            for outcome in options.check(data, program, point, case):
                report.add(outcome, known_defects)

    def _reference(program, point, framework):
        """The reference in ``framework``, checked against finite differences; None (and a finding) if it raised."""
        wide = point.astype(np.float64)
        try:
            reference = array_reference(program, wide, framework)
        except Exception as error:  # noqa: BLE001 - a program the reference cannot run is a finding of its own
            report.add(
                _reference_outcome(
                    program, point, framework, f"raised {type(error).__name__}: {error}"[:400]
                ),
                known_defects,
            )
            return None
        disagreement = reference_disagreement(program, wide, reference, framework)
        if disagreement:
            report.add(_reference_outcome(program, point, framework, disagreement), known_defects)
        return reference

    # in chunks of CHUNK examples (seeds seed, seed + 1...), so that a time limit ends the campaign
    # between two: hypothesis cannot stop inside a run without replaying the example that stopped it
    done = 0
    try:
        while done < examples and (stop is None or time.monotonic() < stop):
            chunk = min(CHUNK, examples - done)
            run = settings(
                max_examples=chunk,
                database=None,
                deadline=None,
                phases=(Phase.generate,),
                suppress_health_check=list(HealthCheck),
                print_blob=False,
                verbosity=Verbosity.quiet,
            )(hypothesis_seed(seed + done // CHUNK)(given(st.data())(campaign)))
            run()
            done += chunk
    finally:
        options.close()
    return report


#: the environment variable that sets how many programs :func:`assert_fuzz_passes` tries per backend
EXAMPLES_VARIABLE = "DI_FUZZ_EXAMPLES"


def assert_fuzz_passes(backends, examples=None, seed=0, default=6, **options):
    """Run :func:`fuzz_programs`; raise AssertionError listing every failure unless the report is ok.

    ``examples`` defaults to ``$DI_FUZZ_EXAMPLES``, else ``default``. The
    report is printed (pytest shows it with the test's output); known defects
    and refusals are listed, never failures.

        >>> import diffinterface as di
        >>> assert_fuzz_passes(di.AutoFiniteDiff(), examples=2, seed=5).programs
        2
    """
    if examples is None:
        examples = int(os.environ.get(EXAMPLES_VARIABLE, default))
    report = fuzz_programs(backends, examples, seed, **options)
    if not report.ok:
        raise AssertionError(str(report))
    for finding, n in report.distinct(report.known):
        warnings.warn(
            f"known defect {finding.known} ({n} times), not failed: {finding}", stacklevel=2
        )
    return report


def _reference_framework(backend):
    """torch's float64 reference (the faster) for every backend but torch's own, which JAX's checks."""
    return "jax" if get_adapter(backend).capabilities.framework == "torch" else "torch"


def _reference_outcome(program, point, framework, message):
    outcome = Outcome(checks=1)
    outcome.findings.append(
        Finding(
            f"reference ({framework})",
            "numpy",
            str(point.dtype),
            "reference",
            message,
            program.source(point),
        )
    )
    return outcome


def _every_backend():
    return {**BACKENDS, **ZERO_BACKENDS}
