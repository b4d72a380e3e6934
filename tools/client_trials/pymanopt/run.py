"""pymanopt 2.2.1's own test suite, natively and with its derivatives from diffinterface.

    python tools/client_trials/pymanopt/run.py [--variant NAME ...] [--repo PATH]

Runs pymanopt's tests in subprocesses, natively and then once per variant
(shim.VARIANTS: which diffinterface selectors replace pymanopt's autograd, JAX
and PyTorch derivatives), and prints the outcomes side by side per test
module, then every test that passes natively and not through diffinterface,
real-valued and complex apart. TensorFlow-parametrized tests are deselected
(the shim does not route pymanopt's TensorFlow backend yet). Every diffinterface result is also compared
with pymanopt's own (``--no-cross-check`` turns that off). ``--repo`` names the
diffinterface checkout to import (default: the one holding this script). The
exit status is 1 when a real-valued test passes natively and fails through
diffinterface.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from shim import VARIANTS  # noqa: E402  (the names only; the suites import their own)

PYMANOPT = "pymanopt==2.2.1"
FETCH_SOURCE = "git clone --depth 1 --branch 2.2.1 https://github.com/pymanopt/pymanopt {src}"


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", nargs="+", default=["default"], choices=VARIANTS + ("all",))
    parser.add_argument(
        "--unprepared",
        action="store_true",
        help="unprepared calls instead of prepare once, then prep=",
    )
    parser.add_argument("--no-cross-check", action="store_true")
    parser.add_argument(
        "--complex-as-pairs",
        action="store_true",
        help="complex points as (real, imaginary) pairs, the way around the refusal",
    )
    parser.add_argument("--repo", type=Path, default=HERE.parents[2])
    parser.add_argument(
        "--src",
        type=Path,
        default=Path("/tmp/pymanopt-src"),
        help="pymanopt's source tree at 2.2.1 (for its tests)",
    )
    parser.add_argument(
        "--lib",
        type=Path,
        default=Path("/tmp/pmlib"),
        help="where pymanopt is installed (pip --target)",
    )
    parser.add_argument("-k", default="", help="a pytest -k expression, added")
    parser.add_argument("--results", type=Path, help="folder for the outcomes and logs")
    parser.add_argument(
        "--native-from",
        type=Path,
        help="a native.json of an earlier run (same -k) instead of a native run",
    )
    args = parser.parse_args()
    if "all" in args.variant:
        args.variant = list(VARIANTS)
    return args


def ensure_pymanopt(args: argparse.Namespace) -> None:
    if not (args.src / "tests").is_dir():
        sys.exit(f"pymanopt's tests are missing: {FETCH_SOURCE.format(src=args.src)}")
    if not (args.lib / "pymanopt").is_dir():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--target",
                str(args.lib),
                PYMANOPT,
            ],
            check=True,
        )


def run_suite(args: argparse.Namespace, variant: str, out: Path) -> dict:
    path = [args.lib, HERE, args.repo, args.src]
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(map(str, path)),
        CLIENT_TRIAL_RESULTS=str(out),
        CLIENT_TRIAL_VARIANT=variant,
        CLIENT_TRIAL_PREPARED="0" if args.unprepared else "1",
        CLIENT_TRIAL_CROSS_CHECK="0" if args.no_cross_check else "1",
        CLIENT_TRIAL_COMPLEX_AS_PAIRS="1" if args.complex_as_pairs else "0",
    )
    selection = "not tensorflow" + (f" and ({args.k})" if args.k else "")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--noconftest",
        "-p",
        "plugin",
        "-k",
        selection,
        "--rootdir",
        str(args.src),
        str(args.src / "tests"),
    ]
    log = out.with_suffix(".log")
    print(f"running pymanopt's tests ({variant}, pytest's output in {log}) ...", flush=True)
    with log.open("w") as output:
        subprocess.run(command, env=env, cwd=args.src, stdout=output, stderr=subprocess.STDOUT)
    return json.loads(out.read_text())


def tally(outcomes: dict, module: str) -> str:
    counts = Counter(
        o["outcome"] for test, o in outcomes.items() if module in ("all", test.split("::")[0])
    )
    return "/".join(str(counts[k]) for k in ("passed", "failed", "skipped"))


def report(runs: dict) -> int:
    native = runs["native"]
    modules = sorted({test.split("::")[0] for test in native}) + ["all"]
    print(f"\npassed/failed/skipped\n{'test module':46}" + "".join(f"{n:>14}" for n in runs))
    for module in modules:
        print(f"{module:46}" + "".join(f"{tally(o, module):>14}" for o in runs.values()))
    status = 0
    for variant, outcomes in list(runs.items())[1:]:
        lost = [
            t
            for t, o in native.items()
            if o["outcome"] == "passed" and outcomes.get(t, {}).get("outcome") != "passed"
        ]
        for kind, is_complex in (("real-valued", False), ("complex", True)):
            tests = [t for t in lost if outcomes.get(t, {}).get("complex", False) == is_complex]
            status |= bool(tests) and not is_complex
            print(f"\n{variant}: passed natively, not through diffinterface ({kind}): {len(tests)}")
            for test in tests:
                print(f"  {test}\n      {outcomes.get(test, {}).get('message', 'not run')}")
    return int(status)


def main() -> int:
    args = arguments()
    ensure_pymanopt(args)
    folder = args.results or Path(tempfile.mkdtemp(prefix="pymanopt-trial-"))
    folder.mkdir(parents=True, exist_ok=True)
    runs = {
        v: run_suite(args, v, folder / f"{v}.json")
        for v in ["native", *args.variant]
        if v != "native" or not args.native_from
    }
    if args.native_from:  # restricted to the tests this run selected
        native = json.loads(args.native_from.read_text())
        selected = set().union(*runs.values())
        runs = {"native": {t: o for t, o in native.items() if t in selected}, **runs}
    print(f"diffinterface from {args.repo}; outcomes in {folder}")
    return report(runs)


if __name__ == "__main__":
    sys.exit(main())
