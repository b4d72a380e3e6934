"""Put the benchmark results on the site: the ratios plot and a summary table per framework.

``python -m benchmarks`` writes ``benchmarks/results/`` (``results.json``,
``results.md``, ``ratios.png``), ``python -m benchmarks.bench_sizes`` the
size sweep's ``sizes.png``; this MkDocs hook adds the plots to the site
and replaces ``<!-- benchmark-summary -->`` in a page with the table that
``benchmarks/report.py`` makes from ``results.json``, so the page follows the
latest run without a copy in ``docs/``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PLOTS = (  # relative to the repository root, and to the site's root
    "benchmarks/results/ratios.png",
    "benchmarks/results/sizes.png",
)


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


def on_page_markdown(markdown, **kwargs):
    if "<!-- benchmark-summary -->" not in markdown:
        return markdown
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.report import summary_markdown
    finally:
        sys.path.remove(str(ROOT))
    results = json.loads((RESULTS / "results.json").read_text())
    return markdown.replace("<!-- benchmark-summary -->", summary_markdown(results))
