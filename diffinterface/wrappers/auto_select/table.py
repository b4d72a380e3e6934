"""The table :func:`~diffinterface.explain` prints for an ``AutoSelect`` selection (presentation only)."""

from __future__ import annotations

from ...frozen import changed_fields


def short_name(selector):
    """``AutoTorch(mode='forward')``: the selector with only the fields that differ from their defaults."""
    fields = ", ".join(f"{name}={value!r}" for name, value in changed_fields(selector))
    return f"{type(selector).__name__}({fields})"


def _duration(seconds):
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def table(selection):
    """The table of a selection: one line per candidate, then the choice."""
    header = ("candidate", "prepared", "agreed", "median per call", "")
    lines = []
    for row in selection.rows:
        prepared = "yes" if row.status in ("chosen", "agreed", "disagreed") else "no"
        agreed = {"chosen": "yes", "agreed": "yes", "disagreed": "no"}.get(row.status, "-")
        note = "<- chosen" if row.status == "chosen" else row.reason
        lines.append((short_name(row.backend), prepared, agreed, _duration(row.median), note))
    widths = [max(len(line[i]) for line in (header, *lines)) for i in range(len(header))]

    def format_line(line):
        return (
            "  ".join(cell.ljust(width) for cell, width in zip(line[:-1], widths)) + "  " + line[-1]
        )

    title = (
        f"AutoSelect for {selection.operator}: agreement within rtol={selection.rtol:g}, "
        f"{selection.rounds} timed rounds"
        if selection.rtol is not None
        else f"AutoSelect for {selection.operator}"
    )
    body = [format_line(header).rstrip(), *(format_line(line).rstrip() for line in lines)]
    choice = (
        f"chosen: {short_name(selection.chosen)} (the fastest median of those that agree)"
        if selection.chosen is not None
        else "chosen: none"
    )
    return "\n".join([title, *body, choice])
