"""The options ``"workers"`` and ``"autoselect"`` of :mod:`.features`, and the helpers of every option.

>>> import diffinterface as di
>>> "numpy" in families(di.AutoFiniteDiff())
True
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import diffinterface as di

from ...core import get_adapter
from ..families import CONVERTIBLE_FAMILIES, convert, to_numpy
from ..worker_scenarios import takes_workers, with_workers
from .checks import Checker, Outcome, applies, differenced_size


def families(backend):
    """The array families ``backend`` accepts that the kit can convert to."""
    accepted = get_adapter(backend).capabilities.families
    return [f for f in CONVERTIBLE_FAMILIES if f in accepted]


def source_with(program, point, extra):
    return program.source(point) + "\n\n" + extra


def run_with(program, extra):
    names = {"np": np, "di": di}
    exec(compile(program.source() + "\n\n" + extra, "<fuzz program>", "exec"), names)  # noqa: S102 - our own source
    return names


def checker_for(case, backend_id, selector, family, like, source, outcome, reference, scale=1.0):
    """A :class:`~.checks.Checker` with the curvature and differenced size of ``reference`` times ``scale``."""
    checker = Checker(
        backend_id, selector, family, like, source, backend_id in case["zero"], outcome
    )
    checker.curvature = max(1.0, abs(scale) * float(np.max(np.abs(reference["hessian"]))))
    checker.differenced = max(1.0, abs(scale)) * differenced_size(reference)
    return checker


def check_workers(data, program, point, case):
    """A ``workers`` backend with a thread or process pool, its prepared call after f's global ``scale`` changes."""
    backends = case["backends"]
    ids = [i for i in case["chosen"] if takes_workers(backends[i])] or [
        i for i in backends if takes_workers(backends[i])
    ]
    ids = [i for i in ids if applies(backends[i], program.source())]
    if not ids:
        return []
    backend_id = data.draw(st.sampled_from(ids), label="workers backend")
    kind = data.draw(st.sampled_from(("thread", "process")), label="pool")
    operator = data.draw(st.sampled_from(("gradient", "jacobian")), label="workers operator")
    scales = (1.0, data.draw(st.sampled_from((-2.0, 0.5, 3.0)), label="scale"))
    inner = "g(x)" if operator == "gradient" else "f(x)"
    extra = f'STATE = {{"scale": 1.0}}\n\n\ndef h(x):\n    return STATE["scale"] * {inner}'
    names = run_with(program, extra)
    selector = with_workers(backends[backend_id], case["pools"].get(kind))
    x = np.array(point, copy=True)
    reference = case["reference"](backends[backend_id])
    outcome = Outcome()
    expected = reference["gradient" if operator == "gradient" else "jacobian"]
    prepare = getattr(di, f"prepare_{operator}")
    call = getattr(di, operator)
    for scale in scales:
        names["STATE"]["scale"] = scale
        what = f"{backend_id} (workers: a {kind} pool)"
        source = source_with(
            program, point, extra + f"\n\n# prepared at scale {scales[0]}, called at {scale}"
        )
        largest = max(abs(s) for s in scales)
        checker = checker_for(case, what, selector, "numpy", x, source, outcome, reference, largest)
        if scale == scales[0]:
            prep = checker.call(operator, lambda: prepare(names["h"], selector, x))
            if prep is None:
                return [outcome]
        got = checker.call(operator, lambda: call(names["h"], selector, x, prep=prep))
        if got is not None:
            checker.compare(operator, got, scale * expected)
    return [outcome]


def check_autoselect(data, program, point, case):
    """``AutoSelect`` of two or three of the campaign's backends: one unprepared ``value_and_*`` call."""
    backends = case["backends"]
    ids = [
        i
        for i in backends
        if i not in case["zero"]
        and applies(backends[i], program.source())
        and families(backends[i])
    ]
    if len(ids) < 2:
        return []
    size = data.draw(st.integers(2, min(3, len(ids))), label="candidates")
    picked = data.draw(st.lists(st.sampled_from(ids), min_size=size, max_size=size, unique=True))
    operators = ["gradient", "jacobian", "pushforward", "pullback", "hessian"]
    operators += ["derivative", "second_derivative"] if point.ndim == 0 else []
    operator = data.draw(st.sampled_from(operators), label="autoselect operator")
    selector = di.AutoSelect([backends[i] for i in picked], time_budget=0.01)
    backend_id = f"AutoSelect({', '.join(picked)})"
    common = set.intersection(*(set(families(backends[i])) for i in picked))
    if not common:
        return []
    family = "numpy" if "numpy" in common else sorted(common)[0]
    x = convert(np.array(point, copy=True), family)
    # the least exact candidate's reference framework: torch's for all but torch's own
    reference = case["reference"](backends[picked[0]])
    f, g = program.functions()
    outcome = Outcome()
    checker = checker_for(
        case, backend_id, selector, family, x, program.source(point), outcome, reference
    )
    rng = case["rng"]
    out_shape = reference["value"].shape
    flat_jacobian = reference["jacobian"].reshape(int(np.prod(out_shape)), -1)
    seed_shape = out_shape if operator == "pullback" else point.shape
    seed = convert(rng.uniform(-1.0, 1.0, seed_shape).astype(point.dtype), family)
    flat_seed = np.asarray(to_numpy(seed), dtype=np.float64).reshape(-1)
    scalar = operator in ("gradient", "hessian")
    calls = {
        "gradient": lambda: di.value_and_gradient(g, selector, x),
        "jacobian": lambda: di.value_and_jacobian(f, selector, x),
        "pushforward": lambda: di.value_and_pushforward(f, selector, x, (seed,)),
        "pullback": lambda: di.value_and_pullback(f, selector, x, (seed,)),
        "hessian": lambda: di.value_gradient_and_hessian(g, selector, x),
        "derivative": lambda: di.value_and_derivative(f, selector, x),
        "second_derivative": lambda: di.value_derivative_and_second_derivative(f, selector, x),
    }
    second = reference.get("second_derivative")
    if operator == "pushforward":
        reference = {**reference, "pushforward": (flat_jacobian @ flat_seed).reshape(out_shape)}
    if operator == "pullback":
        reference = {**reference, "pullback": (flat_seed @ flat_jacobian).reshape(point.shape)}
    # each derivative part: (the name it is checked as, its expected value, its order)
    expected = {
        "gradient": [("gradient", reference["gradient"], 1)],
        "jacobian": [("jacobian", reference["jacobian"], 1)],
        "pushforward": [("pushforward", reference.get("pushforward"), 1)],
        "pullback": [("pullback", reference.get("pullback"), 1)],
        "hessian": [("gradient", reference["gradient"], 1), ("hessian", reference["hessian"], 2)],
        "derivative": [("derivative", reference["jacobian"], 1)],
        "second_derivative": [
            ("derivative", reference["jacobian"], 1),
            ("second_derivative", second, 2),
        ],
    }[operator]
    got = checker.call(operator, calls[operator])
    if got is None:
        return [outcome]
    checker.compare("value", got[0], reference["scalar" if scalar else "value"], order=1)
    parts = (got[1][0],) if operator in ("pushforward", "pullback") else got[1:]
    for part, (name, want, order) in zip(parts, expected):
        checker.compare(name, part, want, order=order)
    return [outcome]
