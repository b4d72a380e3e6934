"""``python -m benchmarks [--quick | --tiny] [--out DIR] [--backends ...] [--workloads ...]``."""

from .harness import main

main()
