"""The kit's report: one row per case, and the table of evaluations of ``f``."""

from __future__ import annotations


class Report:
    """The results of :func:`test_differentiation`; ``str(report)`` is a table, one row per case.

    Parameters
    ----------
    results : iterable of CaseResult
        One result per case, kept as the list ``results``.

    Attributes
    ----------
    passed, failed, excluded : list of CaseResult
        The results of each status.
    ok : bool
        True when no case failed.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import Report, build_cases, default_scenarios
    >>> cases = build_cases({"fd": di.AutoFiniteDiff()}, default_scenarios("derivative")[:1])
    >>> report = Report(case.run() for case in cases)
    >>> report
    <Report: 1 passed, 0 failed, 0 excluded>
    >>> report.ok, report.raise_for_failures() is report
    (True, True)
    """

    def __init__(self, results):
        self.results = list(results)

    @property
    def passed(self):
        return [r for r in self.results if r.status == "passed"]

    @property
    def failed(self):
        return [r for r in self.results if r.status == "failed"]

    @property
    def excluded(self):
        return [r for r in self.results if r.status == "excluded"]

    @property
    def ok(self):
        return not self.failed

    def raise_for_failures(self):
        if self.failed:
            raise AssertionError(
                f"{len(self.failed)} of {len(self.results)} cases failed:\n"
                + "\n".join(r.message() for r in self.failed)
            )
        return self

    def counts_table(self):
        """Evaluations of f per (backend, operator, family): at preparation and per prepared call.

        Each cell is the range over the scenarios (sizes differ, and finite
        differences cost more on bigger inputs); "call" is the second prepared
        call, after any one-time compilation.
        """
        ranges = {}
        for r in self.results:
            if r.status != "passed" or not r.counts:
                continue
            cell = ranges.setdefault(
                (r.backend_id, r.operator, r.family), {"prepare": [], "call": []}
            )
            for stage in cell:
                cell[stage].append(r.counts.get(stage, 0))

        def span(values):
            low, high = min(values), max(values)
            return str(low) if low == high else f"{low}-{high}"

        rows = [("backend", "operator", "family", "prepare", "call")]
        rows += [(*key, span(cell["prepare"]), span(cell["call"])) for key, cell in ranges.items()]
        return _format_table(rows)

    def __str__(self):
        header = (
            "backend",
            "scenario",
            "family",
            "status",
            "prep",
            "call",
            "value_and",
            "unprepared",
        )
        rows = [header]
        for r in self.results:
            c = r.counts
            rows.append(
                (
                    r.backend_id,
                    r.scenario,
                    r.family,
                    r.status,
                    *(str(c.get(k, "")) for k in ("prepare", "call", "value_and", "unprepared")),
                )
            )
        lines = _format_table(rows).splitlines()
        lines.append(
            f"{len(self.passed)} passed, {len(self.failed)} failed, {len(self.excluded)} excluded"
        )
        for r in self.failed + self.excluded:
            lines.append(r.message())
        return "\n".join(lines)

    def __repr__(self):
        return f"<Report: {len(self.passed)} passed, {len(self.failed)} failed, {len(self.excluded)} excluded>"


def _format_table(rows):
    """Rows of strings as aligned columns, with a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
