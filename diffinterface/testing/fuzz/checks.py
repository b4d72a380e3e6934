"""One program on one backend: every operator's result against the float64 reference.

:func:`check_program` calls ``value_and_gradient``, ``hvp``, ``hessian`` (on the
scalar-valued ``g``), ``value_and_jacobian``, ``pushforward``, ``pullback`` (on
the array-valued ``f``) and, at a 0-d x, ``derivative`` and
``second_derivative``. Each result must have the reference's values (within
:func:`~diffinterface.testing.default_tolerances` for x's dtype, the absolute
tolerance scaled by the reference's largest entry; for a backend that declares approximate results,
``Capabilities.approximate``, the error of the step a finite-difference rule takes at x, see
:meth:`Checker.slack`), its shape, and x's dtype and array family. A raised error is a failure unless it
is a *refusal*: a
``di.UnsupportedError``, or an error that says the backend does not support or
cannot differentiate (has no derivative for...) a function the program
calls, naming it.

    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.testing.fuzz.programs import Program, Step
    >>> from diffinterface.testing.fuzz.reference import array_reference
    >>> program, x = Program((2,), (Step("xp.tanh(x)"),)), np.array([0.25, -0.5])
    >>> outcome = check_program(program, x, "finitediff", di.AutoFiniteDiff(), "numpy",
    ...                         array_reference(program, x), np.random.default_rng(0))
    >>> outcome.checks, outcome.findings, outcome.refusals
    (6, [], [])
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

import diffinterface as di

from ...errors import DifferentiationError, UnsupportedError
from ...families import dtype_name
from ..array_api_cases import ArrayAPICase, applies as array_api_applies
from ..families import convert, to_numpy, tree_leaves
from ..probes import Problems
from ..tolerances import EXACT_TOLERANCES, default_tolerances, is_approximate
from .operations import NOT_HOLOMORPHIC

#: operator -> order (the tolerance table it is checked with)
ORDERS = {
    "gradient": 1,
    "jacobian": 1,
    "pushforward": 1,
    "pullback": 1,
    "derivative": 1,
    "hvp": 2,
    "hessian": 2,
    "second_derivative": 2,
}
#: the words of a refusal, with the function's name
REFUSAL_WORDS = (
    "does not support",
    "cannot differentiate",
    "not supported",
    "does not differentiate",
    "has no derivative",
    "no derivative rule",
    "no forward rule",
)


@dataclasses.dataclass
class Finding:
    """Something wrong: which backend, array family, dtype and operator, what it got, and the program."""

    backend_id: str
    family: str
    dtype: str
    operator: str
    message: str
    source: str
    #: the backend's selector (what a known defect's rule may ask about: its framework, finite
    #: differences...)
    backend: object = None
    #: the name of the known defect it matches (None: a failure)
    known: object = None

    def signature(self):
        """What makes two findings the same defect: the backend, the operator and the message's words."""
        # numbers, arrays and tree paths (leaf ['a'][0]) differ between findings of one defect
        words = re.sub(
            r"(\[[^\]]*\])+",
            "[]",
            re.sub(r"array\(.*", "", re.sub(r"[-+]?\d[\d.e+-]*", "#", self.message)),
        )[:120]
        return self.backend_id, self.operator, words

    def __str__(self):
        return (
            f"{self.backend_id} / {self.operator} / x {self.family} {self.dtype}: {self.message}\n"
            + "\n".join("    " + line for line in self.source.splitlines())
        )


@dataclasses.dataclass
class Outcome:
    """What checking one program on one backend found: the count of checks, findings and refusals."""

    checks: int = 0
    findings: list = dataclasses.field(default_factory=list)
    #: (backend id, the function it refused) per refusal
    refusals: list = dataclasses.field(default_factory=list)


def functions_called(source):
    """The array-API functions a program's source calls, ``linalg.det`` style."""
    return sorted(set(re.findall(r"xp\.([A-Za-z_][\w.]*)\(", source)) - {"array_namespace"})


def refused_function(error, source):
    """The function a refusal names, or None when ``error`` is not a refusal of one the program calls."""
    # NotImplementedError included: a namespace may refuse by name (a framework's raw "JVP of det
    # ... not defined" has none of the refusal words, so it stays a failure)
    if not isinstance(error, (NotImplementedError, DifferentiationError, ValueError, TypeError)):
        return None
    text = str(error)
    named = [name for name in functions_called(source) if name.split(".")[-1] in text]
    if isinstance(error, UnsupportedError):
        return named[0] if named else "(unnamed)"
    if named and any(words in text for words in REFUSAL_WORDS):
        return named[0]
    return None


#: the least relative tolerance of a float32 result against the float64 reference (a few float32
#: ulps per step of a program); wrong derivatives (a dropped term, a wrong rule) are off by far more
FLOAT32_CHAIN_TOLERANCE = 5e-4

#: A difference quotient divides the rounding error of its evaluations (a few ulps of |f| each) by
#: its step h. The smallest step a finite-difference rule takes is about sqrt(eps) (forward
#: differences; central and second differences take larger ones, eps**(1/3) and eps**(1/4), and
#: their rounding error is then no larger), so a result may be off by ``FINITE_DIFFERENCE_ROUNDING *
#: sqrt(eps) * |f|`` with no rule wrong: an f of size 10 whose derivatives are 0.01 loses a tenth of
#: a percent of them to rounding. Wrong rules are off by the derivatives' own size, which this term
#: is far below.
FINITE_DIFFERENCE_ROUNDING = 4.0
#: the power of eps in the step of the loosest rule a finite-difference backend may take, per order:
#: forward differences (h = sqrt(eps) max(|x|, 1)) and second differences (h = eps**(1/4) max(|x|, 1))
FINITE_DIFFERENCE_STEP_POWERS = {1: 1 / 2, 2: 1 / 4}
#: the most an approximate result's truncation error may reach, relative to the result's largest
#: entry: what a first- or second-order rule reaches on the campaign's curviest programs in float32
#: (0.9 %), yet with the float32 chain tolerance below 1 %, so a rule off by 1 % is a finding
FINITE_DIFFERENCE_CAPS = {"float32": 7e-3, "float64": 1e-4}
#: float32 second differences: their rounding, eps |f| / h**2 with h = eps**(1/4), is eps**(1/2) of
#: f's scale (3e-4), which on a curvy program's small Hessian entries reaches a few percent; a
#: reference 5 % off is still a finding
SECOND_DIFFERENCES_FLOAT32_CAP = 3e-2


class Checker:
    """Calls on one backend at one point, each compared with its expected value."""

    def __init__(self, backend_id, backend, family, like, source, zero, outcome, precision=None):
        self.backend_id, self.backend, self.family, self.like = backend_id, backend, family, like
        self.source, self.zero, self.outcome = source, zero, outcome
        # the family-independent name: a TensorFlow dtype prints as "<dtype: 'float32'>", which no tolerance
        # table knew, so float32 tensors were checked with the kit's tolerances for one function,
        # not a chain
        self.dtype = str(np.asarray(like).dtype) if family == "numpy" else dtype_name(like)
        #: the dtype whose tolerances apply: x's, or float32 where f itself mixes x with float32
        #: values
        self.precision = precision or self.dtype
        #: finite differences err in proportion to the curvature (set by check_program from the
        #: reference)
        self.curvature = 1.0
        #: max(|x|, 1): a finite-difference step scales with it (set by check_program)
        self.scale = 1.0
        #: and by rounding, in proportion to the largest value they difference (f's, or the
        #: gradient's)
        self.differenced = 0.0

    def finding(self, operator, message):
        self.outcome.findings.append(
            Finding(
                self.backend_id,
                self.family,
                self.dtype,
                operator,
                message,
                self.source,
                self.backend,
            )
        )

    def call(self, operator, call):
        """``call()``, or None after recording a refusal or a failure."""
        self.outcome.checks += 1
        try:
            return call()
        except Exception as error:  # noqa: BLE001 - every error is a finding or a counted refusal
            refused = refused_function(error, self.source)
            if refused is not None:
                self.outcome.refusals.append((self.backend_id, refused))
            else:
                self.finding(operator, f"raised {type(error).__name__}: {str(error)[:400]}")
            return None

    def compare(self, operator, got, expected, order=None):
        """Record a finding unless ``got`` has ``expected``'s values and shape, in x's dtype and family."""
        expected = np.asarray(expected)
        order = order or ORDERS[operator]
        approximate = is_approximate(self.backend)
        if approximate:
            # the exact tables, plus the slack of the step taken (below): never a table loosened for
            # one well-conditioned function and then multiplied by the curvature
            rtol, atol = EXACT_TOLERANCES.get(self.precision, EXACT_TOLERANCES["float32"])
        else:
            rtol, atol = default_tolerances(self.backend, self.precision, order)
        if self.precision == "float32":
            # a chain of float32 operations (matmul, cumulative products, variances) rounds at each
            # step: the kit's tolerances are for one well-conditioned function, a program's error
            # grows along it
            rtol, atol = max(rtol, FLOAT32_CHAIN_TOLERANCE), max(atol, FLOAT32_CHAIN_TOLERANCE)
        size = float(np.max(np.abs(expected), initial=0.0))
        atol *= max(1.0, size)
        if approximate:
            # the reference's Hessian is g's: it bounds the truncation of g's gradient only
            curvature = self.curvature if operator == "gradient" else None
            atol += self.slack(order, size, curvature)
        problems = Problems()
        problems.check_result(
            operator, got, expected, like=self.like, zero=self.zero, rtol=rtol, atol=atol
        )
        for message in problems.found:
            self.finding(operator, message.split(": ", 1)[1])

    def slack(self, order, size, curvature=None):
        """The error of a finite-difference result of ``order`` whose largest entry is ``size``, absolute.

        With the step ``h = eps**p max(|x|, 1)`` of the loosest rule of that order
        (:data:`FINITE_DIFFERENCE_STEP_POWERS`): the rounding of the values it differences (a few ulps
        of the largest, :data:`FINITE_DIFFERENCE_ROUNDING`) divided by ``h`` (first order) or ``h**2``
        (second differences), plus the truncation, ``h |f''| / 2`` at first order where the reference's
        Hessian is the differenced function's (``curvature``: g's gradient), capped at
        :data:`FINITE_DIFFERENCE_CAPS` of ``size``; elsewhere the cap alone, as the reference holds
        neither f's second derivatives nor third ones.
        """
        eps = float(np.finfo(np.float64 if self.precision == "float64" else np.float32).eps)
        h = eps ** FINITE_DIFFERENCE_STEP_POWERS[order] * self.scale
        rounding = FINITE_DIFFERENCE_ROUNDING * eps * self.differenced / h**order
        cap = FINITE_DIFFERENCE_CAPS.get(self.precision, FINITE_DIFFERENCE_CAPS["float32"]) * size
        if order == 2 and self.precision != "float64":
            cap = SECOND_DIFFERENCES_FLOAT32_CAP * size
        truncation = cap if curvature is None else min(h * curvature / 2, cap)
        return truncation + rounding


def _flat64(seed):
    """A seed of any family as a flat float64 numpy vector, to contract with a reference matrix."""
    return np.asarray(to_numpy(seed), dtype=np.float64).reshape(-1)


def differenced_size(reference):
    """The largest entry of the values a finite-difference rule differences: f's, g's and the gradient's."""
    return max(
        (
            float(np.max(np.abs(np.asarray(leaf)), initial=0.0))
            for name in ("value", "scalar", "gradient")
            if name in reference
            for leaf in tree_leaves(reference[name])
        ),
        default=0.0,
    )


def applies(backend, source):
    """False when ``backend`` needs complex-analytic functions (the complex step) and the program calls another."""
    holomorphic = not NOT_HOLOMORPHIC.intersection(functions_called(source))
    return array_api_applies(backend, ArrayAPICase(None, None, holomorphic=holomorphic))


def check_program(
    program, point, backend_id, backend, family, reference, rng, operators=None, zero=False
):
    """Check ``program`` at ``point`` (numpy, its dtype the dtype under test) on ``backend`` with x in ``family``."""
    outcome = Outcome()
    if not applies(backend, program.source()):
        return outcome
    wanted = set(ORDERS if operators is None else operators)
    f, g = program.functions()
    dtype = np.asarray(point).dtype
    x = convert(np.array(point, copy=True), family)
    source = program.source(point)
    checker = Checker(backend_id, backend, family, x, source, zero, outcome)
    checker.curvature = max(1.0, float(np.max(np.abs(reference["hessian"]), initial=0.0)))
    checker.differenced = differenced_size(reference)
    checker.scale = max(1.0, float(np.max(np.abs(point), initial=0.0)))
    jacobian = reference["jacobian"]
    out_shape = reference["value"].shape

    def random_like(shape):
        return convert(rng.uniform(-1.0, 1.0, shape).astype(dtype), family)

    if "gradient" in wanted:
        got = checker.call("gradient", lambda: di.value_and_gradient(g, backend, x))
        if got is not None:
            checker.compare("value", got[0], reference["scalar"], order=1)
            checker.compare("gradient", got[1], reference["gradient"])
    if "jacobian" in wanted:
        got = checker.call("jacobian", lambda: di.value_and_jacobian(f, backend, x))
        if got is not None:
            checker.compare("value", got[0], reference["value"], order=1)
            checker.compare("jacobian", got[1], jacobian)
    flat_jacobian = jacobian.reshape(int(np.prod(out_shape)), -1)
    hessian = reference["hessian"].reshape(point.size, point.size)
    if "pushforward" in wanted:
        tangent = random_like(point.shape)
        got = checker.call("pushforward", lambda: di.pushforward(f, backend, x, (tangent,)))
        if got is not None:
            expected = (flat_jacobian @ _flat64(tangent)).reshape(out_shape)
            checker.compare("pushforward", got[0], expected)
    if "pullback" in wanted:
        cotangent = random_like(out_shape)
        got = checker.call("pullback", lambda: di.pullback(f, backend, x, (cotangent,)))
        if got is not None:
            expected = (_flat64(cotangent) @ flat_jacobian).reshape(point.shape)
            checker.compare("pullback", got[0], expected)
    if "hvp" in wanted:
        tangent = random_like(point.shape)
        got = checker.call("hvp", lambda: di.hvp(g, backend, x, (tangent,)))
        if got is not None:
            expected = (hessian @ _flat64(tangent)).reshape(point.shape)
            checker.compare("hvp", got[0], expected)
    if "hessian" in wanted:
        got = checker.call("hessian", lambda: di.hessian(g, backend, x))
        if got is not None:
            checker.compare("hessian", got, reference["hessian"])
    if point.ndim == 0 and "derivative" in wanted:
        got = checker.call("derivative", lambda: di.derivative(f, backend, x))
        if got is not None:
            checker.compare("derivative", got, jacobian)
    if point.ndim == 0 and "second_derivative" in wanted:
        got = checker.call("second_derivative", lambda: di.second_derivative(f, backend, x))
        if got is not None:
            checker.compare("second_derivative", got, reference["second_derivative"])
    return outcome
