"""Interface vs native: time every (backend, operator, workload) both ways, interleaved.

Run from the repository root:

    python -m benchmarks            # full mode, writes benchmarks/results/
    python -m benchmarks --quick    # under 2 minutes, writes benchmarks/results/quick/

For each case the harness builds every native recipe of the framework
(``native.py``), prepares the interface, checks that both give the same
derivative, picks the fastest native recipe, and then times native and
prepared interface calls alternately (native first on even rounds, interface
first on odd ones) so that load from other processes hits both alike. The
ratio is the median over rounds of (interface time / native time) within
each round. Backends whose adapter fails to import are listed, not fatal; a
case that raises becomes an "error" row.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import diffinterface as di

from . import native, nested, report, timing
from .timing import CLOCKS, interleaved, loops_for, rounds_within, sample
from .workloads import WORKLOADS, counted, numpy_input, square, sum_of_squares, to_family

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Settings:
    """How long to measure. A sample is ``loops`` calls timed together (at least ``sample_s``)."""

    name: str
    rounds: int  # interleaved native/interface rounds per case
    min_rounds: int  # never fewer, even past the case budget
    sample_s: float  # target duration of one sample
    case_budget_s: float  # time for a case's rounds; slow cases get fewer rounds
    select_rounds: int  # rounds that pick the fastest native recipe
    unprepared_reps: int  # calls without preparation, at most
    overhead_rounds: int  # rounds of the zero-backend overhead measurement
    cold_rounds: int  # interleaved rounds of fresh processes per backend (0: no cold-start table)


MODES = {
    "full": Settings(
        "full",
        rounds=101,
        min_rounds=3,
        sample_s=0.005,
        case_budget_s=8.0,
        select_rounds=5,
        unprepared_reps=5,
        overhead_rounds=41,
        cold_rounds=9,
    ),
    "quick": Settings(
        "quick",
        rounds=9,
        min_rounds=3,
        sample_s=0.002,
        case_budget_s=0.6,
        select_rounds=3,
        unprepared_reps=2,
        overhead_rounds=11,
        cold_rounds=1,
    ),
    "tiny": Settings(
        "tiny",
        rounds=3,
        min_rounds=3,
        sample_s=0.0005,
        case_budget_s=0.1,
        select_rounds=1,
        unprepared_reps=1,
        overhead_rounds=3,
        cold_rounds=0,
    ),
}


def native_framework(selector):
    """``(framework of the native recipes, mode pinned by the selector)``, or None without native recipes.

    The one mapping kept here: the selectors themselves come from the backend
    registry (``diffinterface.testing.BACKENDS``, the kit's ids).
    """
    if isinstance(selector, di.AutoFiniteDiff):
        return {"central": ("finitediff", None), "forward": ("finitediff-forward", None)}.get(
            selector.method
        )
    for selector_type, framework in (
        (di.AutoJAX, "jax"),
        (di.AutoTorch, "torch"),
        (di.AutoAutograd, "autograd"),
    ):
        if isinstance(selector, selector_type):
            return framework, getattr(selector, "mode", None)
    return None


def _registered_backends():
    from diffinterface.testing import BACKENDS as registered

    table = {}
    for backend_id, selector in registered.items():
        native_of = native_framework(selector)
        if native_of is not None:
            table[backend_id] = (selector, *native_of)
    return table


#: backend id (the kit's) -> (selector, framework of the native recipes, mode pinned by the selector)
BACKENDS = _registered_backends()
#: backends per workload: the default-mode ones, or, where both modes are benchmarked, the mode-pinned
#: ones and those of frameworks that have no mode to pin
DEFAULT_BACKENDS = tuple(b for b, (_, _, mode) in BACKENDS.items() if mode is None)
_PINNED_FRAMEWORKS = {framework for _, framework, mode in BACKENDS.values() if mode is not None}
MODE_BACKENDS = tuple(
    b
    for b, (_, framework, mode) in BACKENDS.items()
    if mode is not None or framework not in _PINNED_FRAMEWORKS
)
CUSTOM_RULE_RECIPE = "grad of 2*g, g through a native custom rule"


class NotAvailable(Exception):
    """The interface lacks what a case needs (an operator not written yet)."""


def now():
    return time.perf_counter()


def blocker(framework):
    """Wait for a result: JAX dispatches asynchronously, the others return finished arrays."""
    if framework == "jax":
        import jax

        return jax.block_until_ready
    return lambda result: result


def _numpy_result(result):
    """The interface's result at a numpy x, already a numpy array of the caller's own (checked, not copied)."""
    if result.__class__ is not np.ndarray:
        raise TypeError(f"numpy in, numpy out: the interface returned {type(result).__name__}")
    return result


def to_numpy(a):
    if hasattr(a, "detach"):
        return a.detach().cpu().numpy()
    return np.asarray(a)


def configure_frameworks():
    """float64 JAX arrays (the native recipes need them); single-threaded torch.

    One torch thread keeps small workloads from fighting over a shared
    machine's cores; native recipes and the interface run under the same setting.
    Returns a function that puts both settings back, so an in-process run (the
    smoke test) leaves no global setting behind.
    """
    restore = []
    try:
        import jax

        restore.append(
            lambda old=jax.config.jax_enable_x64: jax.config.update("jax_enable_x64", old)
        )
        jax.config.update("jax_enable_x64", True)
    except ImportError:
        pass
    try:
        import torch

        restore.append(lambda old=torch.get_num_threads(): torch.set_num_threads(old))
        torch.set_num_threads(1)
    except ImportError:
        pass
    return lambda: [undo() for undo in restore]


# -- one case ---------------------------------------------------------------------------------


def interface_operator(operator):
    prepare = getattr(di, "prepare_" + operator, None)
    run = getattr(di, operator, None)
    if prepare is None or run is None:
        raise NotAvailable(f"diffinterface has no {operator} operator yet")
    return prepare, run


def native_candidates(workload, framework, mode, compiled=True):
    found = native.recipes(framework, workload.operator, mode, compiled)
    if workload.name == "nested" and compiled:  # the custom rule's recipe is compiled
        found = found + [
            native.Recipe(
                CUSTOM_RULE_RECIPE,
                "reverse",
                lambda f, x: nested.native_custom_rule_gradient(framework),
            )
        ]
    return found


def agree(a, b, framework, operator):
    a, b = to_numpy(a), to_numpy(b)
    if a.shape != b.shape:
        return False, float("inf")
    error = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    if framework.startswith("finitediff"):
        tolerance = (1e-2 if operator == "hessian" else 1e-3) * scale
    else:
        tolerance = 1e-8 * scale
    return error <= tolerance, error


def measure_case(workload, size, backend_id, settings, variant=None):
    """One row: native recipes, prepared and unprepared interface, ratio, evaluations.

    ``variant`` is None (float64 in the framework's own array type) or
    ``(family, dtype)``, the input of the rows that compare other inputs.
    """
    selector, framework, mode = BACKENDS[backend_id]
    family, dtype = variant or (framework if framework in ("jax", "torch") else "numpy", "float64")
    x = to_family(numpy_input(workload, size, dtype), family)
    block = finished = blocker(framework)
    if family == "numpy" and framework == "jax":
        # numpy in: the native recipe's result as a numpy array of its own, as the interface returns it
        # (np.asarray would give a read-only view of JAX's buffer and never read the result, which the
        # first read of it then pays: see the README); the interface's result is that array already,
        # which a second copy would charge it twice for
        block, finished = np.array, _numpy_result
    f = counted(workload.function)
    row = {
        "backend": backend_id,
        "framework": framework,
        "operator": workload.operator,
        "workload": workload.name,
        "size": size,
        "status": "ok",
    }
    if variant is not None:
        row["input"] = f"{family} {dtype}"

    # native recipes: build, first call (compilation), then pick the fastest
    candidates = []
    for recipe in native_candidates(
        workload, framework, mode, compiled=getattr(selector, "jit", True)
    ):
        try:
            start = now()
            derivative_at = recipe.build(f, x)
            first = block(derivative_at(x))
            setup = now() - start
            candidates.append(
                {
                    "recipe": recipe,
                    "call": (lambda d=derivative_at: block(d(x))),
                    "at": derivative_at,
                    "first": first,
                    "setup_s": setup,
                }
            )
        except Exception as error:  # a recipe that cannot run here is reported, not fatal
            candidates.append({"recipe": recipe, "error": f"{type(error).__name__}: {error}"})
    working = [c for c in candidates if "error" not in c]
    if not working:
        raise RuntimeError("no native recipe runs: " + "; ".join(c["error"] for c in candidates))

    # the interface, prepared and not
    prepare, operator = interface_operator(workload.operator)
    start = now()
    if workload.name == "nested":
        f_di = counted(nested.outer_through_interface(framework, selector, x))
    else:
        f_di = f
    prep = prepare(f_di, selector, x)
    row["prepare_s"] = now() - start
    start = now()
    result = finished(operator(f_di, selector, x, prep=prep))
    row["first_call_s"] = now() - start

    def prepared():
        return finished(operator(f_di, selector, x, prep=prep))

    def unprepared():
        return finished(operator(f_di, selector, x))

    for c in working:
        c["loops"], c["once_s"], c["evals"] = loops_for(c["call"], settings)
    per_round = sum(c["loops"] * c["once_s"] for c in working)
    select = int(min(settings.select_rounds, settings.case_budget_s / 4 // max(per_round, 1e-9)))
    if len(working) > 1 and select >= 1:
        times = interleaved([(c["call"], c["loops"]) for c in working], select)
        for c, t in zip(working, times):
            c["median_s"], c["best_s"] = float(np.median(t)), float(np.min(t))
    else:  # one recipe, or calls too slow to repeat: the calibration call decides
        for c in working:
            c["median_s"] = c["best_s"] = c["once_s"]
    # the fastest sample picks the recipe: load from other processes only ever adds time
    best = min(working, key=lambda c: c["best_s"])
    row["native_recipe"] = best["recipe"].name
    row["native_setup_s"] = best["setup_s"]
    row["candidates"] = [
        {
            "recipe": c["recipe"].name,
            "mode": c["recipe"].mode,
            **(
                {"error": c["error"]}
                if "error" in c
                else {"median_s": c["median_s"], "best_s": c["best_s"]}
            ),
        }
        for c in candidates
    ]
    row["correct"], row["max_error"] = agree(result, best["first"], framework, workload.operator)

    # the measurement: native and prepared interface, interleaved; the calibration calls also count
    # the evaluations of f per call (Python-level calls; compiled code counts 0)
    native_loops = best["loops"]
    row["evals_native"] = best["evals"]
    prepared_loops, prepared_once, row["evals_prepared"] = loops_for(prepared, settings)
    per_round = native_loops * best["once_s"] + prepared_loops * prepared_once
    rounds = rounds_within(settings.case_budget_s, per_round, settings, settings.rounds)
    # the same native recipe behind a function with the public signature, delivering what the
    # interface delivers (numpy out for numpy in): the cost of the API's shape, paid by any Python API
    through = through_public_signature(
        best["at"], np.array if framework == "jax" and family == "numpy" else None
    )

    def passed_through():
        return finished(through(f_di, selector, x, prep=prep))

    through_loops = loops_for(passed_through, settings)[0]
    timed = [
        (best["call"], native_loops),
        (prepared, prepared_loops),
        (passed_through, through_loops),
    ]
    custom_rule = [c for c in working if c["recipe"].name == CUSTOM_RULE_RECIPE and c is not best]
    if (
        custom_rule
    ):  # nesting: also the native custom rule, the same mechanism without the interface
        timed.append((custom_rule[0]["call"], custom_rule[0]["loops"]))
    function_call = (
        plain_function(workload, framework, x) if workload.operator == "gradient" else None
    )
    if function_call is not None:  # gradient / function: f itself, as its framework runs it fastest
        timed.append((function_call, loops_for(function_call, settings)[0]))
    native_times, prepared_times, through_times, *other_times = interleaved(timed, rounds)
    row["through_s"] = float(np.median(through_times))
    row["through_over_native"] = float(np.median(np.array(through_times) / np.array(native_times)))
    row["ratio_vs_through"] = float(np.median(np.array(prepared_times) / np.array(through_times)))
    if function_call is not None:
        function_times = other_times.pop()
        row["function_s"] = float(np.median(function_times))
        row["native_over_function"] = float(
            np.median(np.array(native_times) / np.array(function_times))
        )
        row["interface_over_function"] = float(
            np.median(np.array(prepared_times) / np.array(function_times))
        )
    custom_times = other_times
    if custom_rule or best["recipe"].name == CUSTOM_RULE_RECIPE:
        custom = custom_times[0] if custom_rule else native_times
        row["custom_rule_s"] = float(np.median(custom))
        row["ratio_vs_custom_rule"] = float(np.median(np.array(prepared_times) / np.array(custom)))
        row["custom_rule_vs_native"] = float(np.median(np.array(custom) / np.array(native_times)))
    paired = np.array(prepared_times) / np.array(native_times)
    row.update(
        rounds=rounds,
        native_loops=native_loops,
        prepared_loops=prepared_loops,
        native_s=float(np.median(native_times)),
        prepared_s=float(np.median(prepared_times)),
        ratio=float(np.median(paired)),
        ratio_q1=float(np.percentile(paired, 25)),
        ratio_q3=float(np.percentile(paired, 75)),
        ratio_of_minima=min(prepared_times) / min(native_times),
    )
    row["delta_s"] = row["prepared_s"] - row["native_s"]

    # unprepared: preparation on every call, so only a few calls
    _, unprepared_once, row["evals_unprepared"] = loops_for(unprepared, settings)
    reps = int(
        max(
            1,
            min(settings.unprepared_reps, settings.case_budget_s / 4 // max(unprepared_once, 1e-9)),
        )
    )
    row["unprepared_s"] = float(
        np.median([unprepared_once] + [sample(unprepared, 1) for _ in range(reps - 1)])
    )
    return row


def through_public_signature(derivative_at, convert):
    """``derivative_at`` (a native recipe) behind a function shaped like ``di.<op>``, results ``convert``-ed.

    Timed like the interface (``through(f, backend, x, prep=prep)``), it measures
    what a Python call with the public signature costs around the native
    recipe, and the output conversion the interface's contract asks for (a
    numpy result for a numpy x on JAX), with none of the interface's code:
    *interface / pass-through* is then the interface's own cost.
    """
    if convert is None:

        def through(f, backend, x, *contexts, prep=None, out=None):
            return derivative_at(x)

    else:

        def through(f, backend, x, *contexts, prep=None, out=None):
            return convert(derivative_at(x))

    return through


def plain_function(workload, framework, x):
    """``f(x)`` without derivatives, as its framework runs it fastest (JAX: jitted), or None."""
    if workload.name == "nested":
        return None
    function = workload.function
    if framework == "jax":
        import jax

        if workload.skip_reason("jax", 1) is not None:
            return None
        jitted = jax.jit(function)
        jax.block_until_ready(jitted(x))
        return lambda: jax.block_until_ready(jitted(x))
    if framework == "torch":
        import torch

        def call():
            with torch.no_grad():
                return function(x)

        return call
    return lambda: function(x)


# -- the zero-backend overhead ----------------------------------------------------------------


def zero_overhead(settings):
    """The interface's own cost per prepared call, on backends that compute nothing.

    For each operator, interleaved: the public prepared call with the default
    (checked) preparation (``di.<op>(..., prep=prep)``: the key comparison, then
    the implementation), the same with a ``strict=False`` preparation (no
    check), the same through the core's slow path (``_call_slowly``, taken with
    ``out=``, ``y=`` or on a mismatch), the prepared implementation called
    directly (``prep.impl.<op>``), and the bare work any backend must do:
    allocate the result (the zero backends' plain primitives never evaluate f).
    """
    from diffinterface.core import OPERATORS
    from diffinterface.core import Call
    from diffinterface.core.call import _call_slowly

    x = numpy_input(WORKLOADS[0], 10)
    cases = [
        ("gradient", di.AutoZeroReverse(), sum_of_squares, x, None, np.zeros(10)),
        ("gradient", di.AutoZeroForward(), sum_of_squares, x, None, np.zeros(10)),
        ("derivative", di.AutoZeroForward(), square, 1.0, None, np.zeros(())),
        ("derivative", di.AutoZeroReverse(), square, 1.0, None, np.zeros(())),
        ("jacobian", di.AutoZeroForward(), square, x, None, np.zeros((10, 10))),
        ("jacobian", di.AutoZeroReverse(), square, x, None, np.zeros((10, 10))),
        ("pushforward", di.AutoZeroForward(), square, x, (np.ones(10),), np.zeros(10)),
        ("pullback", di.AutoZeroReverse(), square, x, (np.ones(10),), np.zeros(10)),
    ]
    rows = []
    for operator, backend, f, x_at, seeds, zeros in cases:
        name = type(backend).__name__
        try:
            prepare, public = interface_operator(operator)
            args = () if seeds is None else (seeds,)
            prep = prepare(f, backend, x_at, *args)
            unchecked = prepare(f, backend, x_at, *args, strict=False)
            method = getattr(prep.impl, operator)
            op = OPERATORS[operator]
            calls = {
                "call_s": lambda: public(f, backend, x_at, *args, prep=prep),
                "unchecked_s": lambda: public(f, backend, x_at, *args, prep=unchecked),
                "slow_s": lambda: _call_slowly(Call(op, f, backend, x_at, seeds, prep=prep)),
                "impl_s": lambda: method(x_at, *args),
                "bare_s": zeros.copy,
            }
            timed = [(call, loops_for(call, settings)[0]) for call in calls.values()]
            medians = [float(np.median(t)) for t in interleaved(timed, settings.overhead_rounds)]
            rows.append(dict(zip(calls, medians), operator=operator, backend=name))
        except Exception as error:
            rows.append(
                {"operator": operator, "backend": name, "error": f"{type(error).__name__}: {error}"}
            )
    return rows


# -- evaluations per operator (the kit's counters) ------------------------------------------


def evaluation_counts(backend_ids):
    """The conformance kit's evaluations of f per (backend, operator, family), as a text table.

    ``diffinterface.testing.test_differentiation(...).counts_table()`` over the
    default first- and second-order scenarios: at preparation and per prepared
    call (the second one, after any compilation). None when the kit fails to run.
    """
    from diffinterface.testing import (
        default_scenarios,
        second_order_scenarios,
        test_differentiation,
    )

    selectors = {b: BACKENDS[b][0] for b in backend_ids}
    try:
        kit = test_differentiation(
            selectors, default_scenarios() + second_order_scenarios(), raise_on_failure=False
        )
    except Exception as error:  # reported in the table's place, not fatal
        return {"error": f"{type(error).__name__}: {error}"}
    return {"table": kit.counts_table(), "failed": len(kit.failed), "passed": len(kit.passed)}


# -- cold start: a whole process, imports and a first gradient ----------------------------------

_COLD_F = "def f(x):\n    return (x * x).sum()\n"
_COLD_X = "np.linspace(0.1, 1.0, 10)"
#: row -> (the native recipe's script, the interface's script): imports, x, one gradient. A row's first
#: word is its framework. An unprepared call runs eagerly on JAX, as ``jax.grad`` does (compiling a one-off
#: call costs more than it saves); a preparation compiles, as ``jax.jit`` does: each against its own.
COLD_SCRIPTS = {
    "jax": (
        "import numpy as np, jax\njax.config.update('jax_enable_x64', True)\n"
        + _COLD_F
        + f"g = jax.grad(f)({_COLD_X}).block_until_ready()\n",
        "import numpy as np, diffinterface as di\n"
        + _COLD_F
        + f"g = di.gradient(f, di.AutoJAX(), {_COLD_X})\n",
    ),
    "jax prepared (vs jax.jit)": (
        "import numpy as np, jax\njax.config.update('jax_enable_x64', True)\n"
        + _COLD_F
        + f"g = jax.jit(jax.grad(f))({_COLD_X}).block_until_ready()\n",
        "import numpy as np, diffinterface as di\n" + _COLD_F + f"x = {_COLD_X}\nb = di.AutoJAX()\n"
        "g = di.gradient(f, b, x, prep=di.prepare_gradient(f, b, x))\n",
    ),
    "torch": (
        "import numpy as np, torch\n"
        + _COLD_F
        + f"x = torch.from_numpy({_COLD_X}).requires_grad_()\n(g,) = torch.autograd.grad(f(x), x)\n",
        "import numpy as np, torch, diffinterface as di\n"
        + _COLD_F
        + f"g = di.gradient(f, di.AutoTorch(), torch.from_numpy({_COLD_X}))\n",
    ),
    "autograd": (
        "import numpy as np, autograd\n" + _COLD_F + f"g = autograd.grad(f)({_COLD_X})\n",
        "import numpy as np, diffinterface as di\n"
        + _COLD_F
        + f"g = di.gradient(f, di.AutoAutograd(), {_COLD_X})\n",
    ),
    "finitediff": (
        "import numpy as np\n" + _COLD_F + f"x = {_COLD_X}\nh = 6e-6\n"
        "g = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])\n",
        "import numpy as np, diffinterface as di\n"
        + _COLD_F
        + f"g = di.gradient(f, di.AutoFiniteDiff(), {_COLD_X})\n",
    ),
}


def _process_seconds(script):
    import subprocess

    root = Path(__file__).resolve().parent.parent
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=600
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
        )
    return elapsed


def _compile_package():
    """Write the ``.pyc`` files of the diffinterface package (``__pycache__`` folders, ignored by git)."""
    import compileall

    import diffinterface

    compileall.compile_dir(str(Path(diffinterface.__file__).parent), quiet=1)


def cold_start(settings, backend_ids, log):
    """Per framework: wall time of a fresh process importing it and computing one gradient.

    The native recipe's process and the interface's alternate (which one goes
    first alternating per round); medians over rounds, and the median of the
    per-round ratios. A process also pays Python's own start-up, on both sides.
    Both sides import compiled bytecode, as installed packages do: the
    frameworks' ``.pyc`` files are written when pip installs them, and
    diffinterface's are written here first (:func:`_compile_package`), else a
    machine with ``PYTHONDONTWRITEBYTECODE`` set would compile diffinterface from
    source in every process and charge it to the interface alone.
    """
    if not settings.cold_rounds:
        return []
    _compile_package()
    frameworks = []
    for backend_id in backend_ids:
        framework = BACKENDS[backend_id][1].split("-")[0]
        if framework in COLD_SCRIPTS and framework not in frameworks:
            frameworks.append(framework)
    rows = []
    for framework in (row for row in COLD_SCRIPTS if row.split(" ")[0] in frameworks):
        print(
            f"cold start: {framework} ({settings.cold_rounds} rounds of two processes)",
            file=log,
            flush=True,
        )
        native_script, interface_script = COLD_SCRIPTS[framework]
        try:
            native_s, interface_s = [], []
            for r in range(settings.cold_rounds):
                order = ((native_s, native_script), (interface_s, interface_script))
                for times, script in order if r % 2 == 0 else order[::-1]:
                    times.append(_process_seconds(script))
            rows.append(
                {
                    "framework": framework,
                    "rounds": settings.cold_rounds,
                    "native_s": float(np.median(native_s)),
                    "interface_s": float(np.median(interface_s)),
                    "ratio": float(np.median(np.array(interface_s) / np.array(native_s))),
                }
            )
        except Exception as error:
            rows.append({"framework": framework, "error": f"{type(error).__name__}: {error}"})
    return rows


# -- the run ----------------------------------------------------------------------------------


def plan(settings, backend_filter=None, workload_filter=None):
    """The cases to run, and the ones left out as not applicable (with the reason)."""
    cases, skipped = [], []
    if settings.name == "tiny":
        # one small workload on the backends of distinct frameworks
        workload_filter = workload_filter or ("sumsq",)
        backend_filter = backend_filter or ("jax", "torch", "autograd", "finitediff-central")
    for workload in WORKLOADS:
        if workload_filter and workload.name not in workload_filter:
            continue
        if settings.name == "tiny":
            sizes = workload.quick_sizes[:1]
        else:
            sizes = workload.sizes if settings.name == "full" else workload.quick_sizes
        ids = MODE_BACKENDS if workload.modes != (None,) else DEFAULT_BACKENDS
        for backend_id in ids:
            if backend_filter and backend_id not in backend_filter:
                continue
            framework = BACKENDS[backend_id][1]
            if not native.has_recipes(framework, workload.operator):
                skipped.append(
                    {
                        "workload": workload.name,
                        "backend": backend_id,
                        "size": None,
                        "operator": workload.operator,
                        "reason": f"no native {workload.operator} recipe for {framework}",
                    }
                )
                continue
            for size in sizes:
                reason = workload.skip_reason(framework.split("-")[0], size)
                if reason:
                    skipped.append(
                        {
                            "workload": workload.name,
                            "backend": backend_id,
                            "size": size,
                            "operator": workload.operator,
                            "reason": reason,
                        }
                    )
                else:
                    cases.append((workload, size, backend_id, None))
                    if settings.name != "tiny" and (workload.name, size) in INPUT_VARIANT_CASES.get(
                        backend_id, ()
                    ):
                        cases += [(workload, size, backend_id, v) for v in INPUT_VARIANTS]
    return cases, skipped


#: the cases also run with other inputs: numpy and JAX arrays, float32 and float64 (JAX's small calls
#: are where an input conversion or a dtype switch would show)
INPUT_VARIANT_CASES = {"jax": (("sumsq", 10), ("square", 100))}
INPUT_VARIANTS = (("jax", "float32"), ("numpy", "float32"), ("numpy", "float64"))


def check_backends(backend_ids):
    """Which adapters import: ``{id: None or the error line}``."""
    from diffinterface.core import get_adapter

    status = {}
    for backend_id in backend_ids:
        try:
            get_adapter(BACKENDS[backend_id][0])
            status[backend_id] = None
        except Exception as error:
            status[backend_id] = f"{type(error).__name__}: {error}"
    return status


def run(
    mode="full",
    out=None,
    backends=None,
    workloads=None,
    plot=True,
    log=sys.stderr,
    clock_name="wall",
    overhead=True,
):
    """Run the benchmarks, write ``results.md``, ``results.json`` (and ``ratios.png``) into ``out``."""
    timing.use_clock(clock_name)
    settings = MODES[mode]
    started = now()
    restore_frameworks = configure_frameworks()
    try:
        return _run(
            mode, out, backends, workloads, plot, log, clock_name, overhead, settings, started
        )
    finally:
        restore_frameworks()


def _run(mode, out, backends, workloads, plot, log, clock_name, overhead, settings, started):
    cases, skipped = plan(settings, backends, workloads)
    used = sorted({case[2] for case in cases}, key=list(BACKENDS).index)
    imports = check_backends(used)
    rows = []
    cases_started = now()
    for i, (workload, size, backend_id, variant) in enumerate(cases):
        inputs = f" [{' '.join(variant)}]" if variant else ""
        label = f"[{i + 1}/{len(cases)}] {backend_id:<18} {workload.operator:<10} {workload.name + inputs:<34} n={size}"
        base = {
            "backend": backend_id,
            "framework": BACKENDS[backend_id][1],
            "operator": workload.operator,
            "workload": workload.name,
            "size": size,
        }
        if imports[backend_id]:
            rows.append({**base, "status": "unavailable", "reason": imports[backend_id]})
            continue
        start = now()
        try:
            row = measure_case(workload, size, backend_id, settings, variant)
            # time left: the mean case so far times the cases left (the sections after them are short)
            left = (now() - cases_started) / (i + 1) * (len(cases) - i - 1)
            print(
                f"{label}  ratio {row['ratio']:.2f}  ({now() - start:.1f} s; about {left:.0f} s left)",
                file=log,
                flush=True,
            )
        except NotAvailable as error:
            row = {**base, "status": "unavailable", "reason": str(error)}
            print(f"{label}  unavailable: {error}", file=log, flush=True)
        except Exception as error:
            row = {**base, "status": "error", "reason": f"{type(error).__name__}: {error}"}
            print(f"{label}  ERROR {type(error).__name__}: {error}", file=log, flush=True)
            traceback.print_exc(file=log)
        rows.append(row)
    overhead = zero_overhead(settings) if overhead else []
    print(
        "zero-backend overhead measured; then evaluation counts (full mode) and cold starts",
        file=log,
        flush=True,
    )
    evaluations = (
        evaluation_counts(used) if settings.name == "full" else None
    )  # the kit takes ~1-2 min
    cold = cold_start(settings, used, log)
    cross = []
    if settings.name != "tiny" and (not workloads or "cross-framework" in workloads):
        try:
            cross = nested.cross_framework(settings, log=log)
        except Exception as error:  # reported, not fatal, like any case
            cross = [{"status": "error", "reason": f"{type(error).__name__}: {error}"}]
    elapsed = now() - started
    results = {
        "mode": mode,
        "clock": clock_name,
        "settings": settings.__dict__,
        "elapsed_s": elapsed,
        "environment": report.environment(),
        "imports": imports,
        "rows": rows,
        "skipped": skipped,
        "overhead": overhead,
        "evaluations": evaluations,
        "cold_start": cold,
        "cross_framework": cross,
    }
    out = Path(out) if out is not None else (RESULTS if mode == "full" else RESULTS / mode)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    (out / "results.md").write_text(
        report.markdown(results)
        + nested.cross_framework_markdown([r for r in cross if "ratio" in r])
    )
    if plot:
        note = report.plot(results, out / "ratios.png")
        if note:
            print(note, file=log)
    print(f"wrote {out}/results.md in {elapsed:.0f} s", file=log)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.splitlines()[0]
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--quick",
        action="store_const",
        dest="mode",
        const="quick",
        help="small sizes, few rounds: under 2 minutes (writes results/quick/)",
    )
    group.add_argument(
        "--tiny",
        action="store_const",
        dest="mode",
        const="tiny",
        help="one small workload, three rounds: the smoke test's mode",
    )
    parser.add_argument(
        "--out", help="output folder (default benchmarks/results/, or results/<mode>/)"
    )
    parser.add_argument("--backends", help="comma-separated backend ids: " + ",".join(BACKENDS))
    parser.add_argument(
        "--workloads",
        help="comma-separated workloads: "
        + ",".join(w.name for w in WORKLOADS)
        + ",cross-framework",
    )
    parser.add_argument(
        "--no-plot", action="store_true", help="skip the PNG (matplotlib is optional)"
    )
    parser.add_argument(
        "--clock",
        choices=tuple(CLOCKS),
        default="wall",
        help="wall (default), or cpu: the process's CPU time, for a machine busy with other work",
    )
    args = parser.parse_args(argv)
    split = lambda s: tuple(s.split(",")) if s else None  # noqa: E731
    run(
        args.mode or "full",
        args.out,
        split(args.backends),
        split(args.workloads),
        plot=not args.no_plot,
        clock_name=args.clock,
    )
