"""diffinterface benchmarks: the interface against each framework's native recipes.

Run ``python -m benchmarks --quick`` (or without ``--quick`` for the full
run) from the repository root; see ``benchmarks/README.md``.
"""
