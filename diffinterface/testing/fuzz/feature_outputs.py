"""The options ``"same_point"`` and ``"outputs"`` of :mod:`.features`: contexts and structured outputs.

>>> import numpy as np
>>> from diffinterface.testing.fuzz.programs import Program, Step
>>> print(structured_source(Program((2,), (Step("xp.sin(x)"),)), "dict"))
def fs(x):
    xp = di.array_namespace(x)
    v = f(x)
    return {'a': v, 'b': -1.5 * v}
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st

import diffinterface as di

from ...errors import PreparationMismatchError
from ..families import convert, is_container
from .checks import Outcome, applies
from .feature_checks import checker_for, families, run_with, source_with
from .programs import point_source

#: f's output as each structure: the coefficients of f's value in each part (None: the 0-d sum)
STRUCTURES = {"pair": (1.0, 2.0), "triple": (1.0, -1.0, 0.5), "dict": (1.0, -1.5), "0-d": None}


#: operator -> (prepare, call, the function's name, c's shape: "out" or "0-d")
_SAME_POINT = {
    "pushforward": ("prepare_pushforward_same_point", "pushforward", "fc", "out"),
    "pullback": ("prepare_pullback_same_point", "pullback", "fc", "out"),
    "hvp": ("prepare_hvp_same_point", "hvp", "gc", "0-d"),
}
_CONTEXT_FUNCTIONS = "\n\n\n".join(
    f"def {name}(x, c):\n    xp = di.array_namespace(x)\n    return xp.asarray(c, dtype=x.dtype) * {inner}(x)"
    for name, inner in (("fc", "f"), ("gc", "g"))
)


def check_same_point(data, program, point, case):
    """A same-point preparation with a ``Constant`` per chosen backend: three seeds, then ``c`` changed in place."""
    outcomes = []
    names = run_with(program, _CONTEXT_FUNCTIONS)
    source = source_with(program, point, _CONTEXT_FUNCTIONS)
    rng = case["rng"]
    for backend_id in case["chosen"]:
        backend = case["backends"][backend_id]
        if not applies(backend, program.source()):
            continue
        operator = data.draw(st.sampled_from(sorted(_SAME_POINT)), label="same-point operator")
        family = data.draw(st.sampled_from(families(backend)), label="same-point family")
        prepare_name, call_name, function, c_shape = _SAME_POINT[operator]
        reference = case["reference"](backend)
        out_shape = reference["value"].shape
        c = rng.uniform(0.5, 2.0, out_shape if c_shape == "out" else ()).round(2)
        c = np.asarray(c, dtype=point.dtype)
        x = convert(np.array(point, copy=True), family)
        outcome = Outcome()
        outcomes.append(outcome)
        what = (
            source
            + f"\n\nc = {point_source(c)}  # di.Constant(c); {operator} prepared at the same point"
        )
        largest = float(np.max(np.abs(c)))
        checker = checker_for(
            case, backend_id, backend, family, x, what, outcome, reference, largest
        )
        f = names[function]
        seed_shape = out_shape if operator == "pullback" else point.shape
        seeds = [rng.uniform(-1.0, 1.0, seed_shape).astype(point.dtype) for _ in range(3)]
        prepare = getattr(di, prepare_name)
        call = getattr(di, call_name)
        prep = checker.call(
            operator, lambda: prepare(f, backend, x, (convert(seeds[0], family),), di.Constant(c))
        )
        if prep is None:
            continue
        for seed in seeds:
            got = checker.call(
                operator,
                lambda: call(f, backend, x, (convert(seed, family),), di.Constant(c), prep=prep),
            )
            if got is not None:
                checker.compare(
                    operator, got[0], _same_point_expected(operator, reference, c, seed)
                )
        c[...] += 1.0  # in place: the very array the preparation saw
        _expect_refusal(
            checker,
            operator,
            lambda: call(f, backend, x, (convert(seeds[0], family),), di.Constant(c), prep=prep),
        )
    return outcomes


def _same_point_expected(operator, reference, c, seed):
    seed = np.asarray(seed, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    if operator == "hvp":
        n = seed.size
        return c * (reference["hessian"].reshape(n, n) @ seed.reshape(-1)).reshape(seed.shape)
    out_shape = reference["value"].shape
    jacobian = reference["jacobian"].reshape(int(np.prod(out_shape)), -1)
    if operator == "pushforward":
        return c * (jacobian @ seed.reshape(-1)).reshape(out_shape)
    return ((c * seed).reshape(-1) @ jacobian).reshape(reference["gradient"].shape)


def _expect_refusal(checker, operator, call):
    checker.outcome.checks += 1
    try:
        call()
    except PreparationMismatchError as error:
        if "changed in place" not in str(error):
            checker.finding(operator, f"the refusal does not say changed in place: {error}"[:400])
        return
    except Exception as error:  # noqa: BLE001 - any other error is a finding
        message = f"{type(error).__name__}: {str(error)[:300]}"
        checker.finding(
            operator,
            f"after the Constant changed in place, expected PreparationMismatchError; raised {message}",
        )
        return
    checker.finding(
        operator,
        "after the Constant changed in place, returned a result (expected PreparationMismatchError)",
    )


def structured_source(program, structure):
    """The source of ``fs(x)``: f's value as ``structure`` (a key of :data:`STRUCTURES`)."""
    coefficients = STRUCTURES[structure]
    if coefficients is None:
        value = "xp.sum(v)"
    elif structure == "dict":
        value = "{" + ", ".join(f"{k!r}: {_times(a)}" for k, a in zip("ab", coefficients)) + "}"
    else:
        value = "(" + ", ".join(_times(a) for a in coefficients) + ")"
    return f"def fs(x):\n    xp = di.array_namespace(x)\n    v = f(x)\n    return {value}"


def _times(a):
    return "v" if a == 1.0 else ("-v" if a == -1.0 else f"{a} * v")


def check_outputs(data, program, point, case):
    """f's value as a pair, triple, dict or 0-d sum per chosen backend: a right tree or a TypeError."""
    outcomes = []
    for backend_id in case["chosen"]:
        backend = case["backends"][backend_id]
        if not applies(backend, program.source()):
            continue
        structure = data.draw(st.sampled_from(sorted(STRUCTURES)), label="structure")
        operators = ["jacobian"] + (["derivative", "second_derivative"] if point.ndim == 0 else [])
        operator = data.draw(st.sampled_from(operators), label="structured operator")
        family = data.draw(st.sampled_from(families(backend)), label="structured family")
        extra = structured_source(program, structure)
        fs = run_with(program, extra)["fs"]
        reference = case["reference"](backend)
        x = convert(np.array(point, copy=True), family)
        outcome = Outcome()
        outcomes.append(outcome)
        checker = checker_for(
            case,
            backend_id,
            backend,
            family,
            x,
            source_with(program, point, extra),
            outcome,
            reference,
        )
        one = reference["second_derivative" if operator == "second_derivative" else "jacobian"]
        got = _structured_call(
            checker, operator, lambda: getattr(di, operator)(fs, backend, x), structure, point
        )
        if got is None:
            continue
        coefficients = STRUCTURES[structure]
        if coefficients is None:
            out_ndim = reference["value"].ndim
            checker.compare(operator, got, one.sum(axis=tuple(range(out_ndim))))
            continue
        keys = list("ab") if structure == "dict" else list(range(len(coefficients)))
        if (
            not is_container(got)
            or (structure == "dict") != isinstance(got, dict)
            or len(got) != len(keys)
            or (structure == "dict" and sorted(got) != keys)
        ):
            checker.finding(
                operator,
                f"expected a {structure} of results like fs's output; got {type(got).__name__}",
            )
            continue
        for key, a in zip(keys, coefficients):
            checker.compare(operator, got[key], a * one)
    return outcomes


def _structured_call(checker, operator, call, structure, point):
    """The result, or None after a TypeError (what a tuple or dict output may raise) or a finding."""
    if STRUCTURES[structure] is None:
        return checker.call(operator, call)
    checker.outcome.checks += 1
    try:
        return call()
    except TypeError as error:
        if structure == "pair" and operator != "jacobian" and "has_aux=True" not in str(error):
            checker.finding(
                operator, f"a pair output's TypeError does not name has_aux=True: {error}"[:400]
            )
        return None
    except Exception as error:  # noqa: BLE001 - any other error is a finding (or a refusal)
        checker.outcome.checks -= 1
        return checker.call(operator, functools.partial(_raise, error))


def _raise(error):
    raise error
