"""``python -m benchmarks [--quick | --tiny] [--out DIR] [--backends ...] [--workloads ...]``.

On Linux the harness runs with glibc's malloc thresholds fixed (the process
re-executes itself once with ``MALLOC_MMAP_THRESHOLD_`` and
``MALLOC_TRIM_THRESHOLD_`` set). By default glibc raises its mmap threshold
each time a large block is freed, so whether a call that allocates megabytes
(the 1000 x 1000 Jacobians) gets heap memory or fresh pages, 2-4x slower with
their page faults, depends on what ran before it: interleaved recipes would
time each other's allocation history (measured: torch's n = 1000 Jacobian read
0.35x, 1.15x and 3.6x in three runs; with fixed thresholds both recipes run
2.2x faster, without page faults). Set the variables yourself to choose other values.
"""

from .timing import with_fixed_malloc

with_fixed_malloc("benchmarks")

from .harness import main  # noqa: E402 - after the re-execution, which must come first

main()
