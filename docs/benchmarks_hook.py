"""Put the benchmark results on the site: the ratios plot and a summary table per framework.

``python -m benchmarks`` writes ``benchmarks/results/`` (``results.json``,
``results.md``, ``ratios.png``), ``python -m benchmarks.bench_sizes`` the
size sweep's ``sizes.png``; this MkDocs hook adds the plots to the site
and replaces ``<!-- benchmark-summary -->`` in a page with the table that
``benchmarks/report.py`` makes from ``results.json``, and
``<!-- benchmark-table: NAME -->`` with the first table of
``benchmarks/results/NAME.md``, so the pages follow the latest run without a
copy in ``docs/`` and a reader who installed with pip sees the figures.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PLOTS = (  # relative to the repository root, and to the site's root
    "benchmarks/results/ratios.png",
    "benchmarks/results/sizes.png",
)
_TABLE = re.compile(r"<!-- benchmark-table: (\w+) -->")


def on_files(files, config, **kwargs):
    for plot in PLOTS:
        if (ROOT / plot).exists():
            files.append(
                File(
                    plot,
                    src_dir=str(ROOT),
                    dest_dir=config["site_dir"],
                    use_directory_urls=config["use_directory_urls"],
                )
            )
    return files


def first_table(name: str) -> str:
    """The first Markdown table of ``benchmarks/results/<name>.md``, with where it comes from."""
    lines = (RESULTS / f"{name}.md").read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), None)
    if start is None:
        raise ValueError(f"benchmarks/results/{name}.md holds no table")
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    if not (ROOT / "benchmarks" / f"bench_{name}.py").exists():
        raise ValueError(f"benchmarks/results/{name}.md has no benchmarks/bench_{name}.py")
    source = (
        f"*Recorded in `benchmarks/results/{name}.md`; from a clone of the repository,"
        f" `python -m benchmarks.bench_{name}` measures it again.*"
    )
    return "\n".join([*lines[start:end], "", source])


def on_page_markdown(markdown, **kwargs):
    markdown = _TABLE.sub(lambda match: first_table(match.group(1)), markdown)
    if "<!-- benchmark-summary -->" not in markdown:
        return markdown
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.report import summary_markdown
    finally:
        sys.path.remove(str(ROOT))
    results = json.loads((RESULTS / "results.json").read_text())
    return markdown.replace("<!-- benchmark-summary -->", summary_markdown(results))
