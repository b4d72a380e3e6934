"""Where the repository's files are, for tests that read them (README, docs, examples, benchmarks)."""

from __future__ import annotations

from pathlib import Path

#: the repository's root: the folder above ``tests/``, wherever a test module sits under it
ROOT = Path(__file__).resolve().parent.parent
