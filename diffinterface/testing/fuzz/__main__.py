"""A long fuzz campaign from the command line; prints the count tried and every failure.

python -m diffinterface.testing.fuzz --examples 10000 [--seed 0] [--backends jax,torch] [--per-program 2]
    [--features workers,autoselect,same_point,outputs] [--feature-percent 10]
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv=None):
    """Parse the command line, run :func:`~diffinterface.testing.fuzz.fuzz_programs`, print its report.

    Returns the exit status: 0 when nothing but known defects and refusals was found, else 1.
    """
    from ..pytest_plugin import select_backends
    from .campaign import KINDS, fuzz_programs
    from .checks import ORDERS
    from .features import FEATURES, PERCENT
    from .operations import OPERATIONS

    parser = argparse.ArgumentParser(
        prog="python -m diffinterface.testing.fuzz", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--examples", type=int, default=1000, help="programs to try (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument(
        "--backends",
        default=None,
        help="ids of diffinterface.testing.BACKENDS (prefixes too), "
        "or module:attribute; default: all",
    )
    parser.add_argument(
        "--per-program",
        type=int,
        default=None,
        help="check each program on this many backends drawn at random (default: all)",
    )
    parser.add_argument(
        "--checks-per-program",
        type=int,
        default=None,
        help="check this many operators, drawn at random, per program (default: all)",
    )
    parser.add_argument(
        "--operators", default=None, help=f"comma-separated, of {', '.join(ORDERS)}"
    )
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}"
    )
    parser.add_argument(
        "--operations", default=",".join(OPERATIONS), help="comma-separated families of operations"
    )
    parser.add_argument(
        "--features",
        default=",".join(FEATURES),
        help=f"comma-separated options an array program's check may draw, of {', '.join(FEATURES)}; "
        "empty: none",
    )
    parser.add_argument(
        "--feature-percent",
        type=int,
        default=PERCENT,
        help=f"the chance, in percent, of each option per program (default {PERCENT})",
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="stop after this many minutes with the report so far",
    )
    parser.add_argument(
        "--all-families", action="store_true", help="every array family each backend accepts"
    )
    arguments = parser.parse_args(argv)
    started = time.time()

    seen: set = set()
    printed = [0]

    def progress(report):
        # each new kind of failure is printed as soon as it is found, so a campaign cut short loses
        # nothing
        new, printed[0] = report.findings[printed[0] :], len(report.findings)
        for finding in new:
            if finding.signature() not in seen:
                seen.add(finding.signature())
                print(f"NEW: {finding}", file=sys.stderr, flush=True)
        if report.programs % 50 == 0:
            print(f"[{time.time() - started:.0f}s] {report.summary()}", file=sys.stderr, flush=True)

    report = fuzz_programs(
        select_backends(arguments.backends),
        arguments.examples,
        arguments.seed,
        kinds=tuple(arguments.kinds.split(",")),
        operations=tuple(arguments.operations.split(",")),
        operators=tuple(arguments.operators.split(",")) if arguments.operators else None,
        per_program=arguments.per_program,
        checks_per_program=arguments.checks_per_program,
        all_families=arguments.all_families,
        features=tuple(f for f in arguments.features.split(",") if f),
        feature_percent=arguments.feature_percent,
        progress=progress,
        time_limit=None if arguments.minutes is None else 60 * arguments.minutes,
    )
    print(report)
    print(f"tried {report.programs} programs in {time.time() - started:.0f}s")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
