"""The shape of a kit probe: one misuse or defect (:class:`BadInput`) and what it found (:class:`Problems`).

:mod:`.bad_inputs` and :mod:`.regressions` are lists of probes; each probe's
``run(backend, problems, zero)`` makes its calls and states, with
``problems.expect_*``, what each must return or raise.

    >>> import numpy as np, diffinterface as di
    >>> problems = Problems()
    >>> got = problems.expect_result("gradient of sum(x**2)", lambda: di.gradient(lambda x: (x**2).sum(), di.AutoFiniteDiff(), np.ones(2)),
    ...                        np.full(2, 2.0), like=np.ones(2))
    >>> problems.found
    []
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

import numpy as np

from ..errors import DifferentiationError
from ..families import NUMBERS, describe, dtype_name, family_of, is_array, shape_of
from ..operators import gradient, pushforward
from .families import to_numpy


def _names(error):
    return " or ".join(e.__name__ for e in error) if isinstance(error, tuple) else error.__name__


class Problems:
    """What one probe found, as sentences (``found``); its methods state what a call must do.

    Each ``expect_*`` method makes a call and records a sentence in ``found``
    for each way the call broke the contract, instead of raising.

    Attributes
    ----------
    found : list of str
        The problems recorded so far (empty: none).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.testing import Problems
    >>> problems = Problems()
    >>> problems.expect_error("a bare tangent", lambda: di.pushforward(np.sin, di.AutoFiniteDiff(), np.ones(2),
    ...                       np.ones(2)), TypeError, "tangents")
    >>> problems.found
    []
    >>> problems.expect_error("a valid call", lambda: di.gradient(np.sum, di.AutoFiniteDiff(), np.ones(2)),
    ...                       TypeError, "tangents")
    >>> problems.found
    ["a valid call: expected TypeError matching 'tangents'; nothing was raised"]
    """

    def __init__(self):
        self.found = []

    def raised(self, what, error, expected=None):
        """Record that ``what`` raised ``error`` (where ``expected`` says what it should have done)."""
        said = f"expected {expected}; got " if expected is not None else ""
        self.found.append(f"{what}: {said}{type(error).__name__}: {str(error)[:300]}")

    def expect_error(self, what, call, error, pattern, unchanged=()):
        """``call()`` must raise ``error`` with ``pattern`` in its message and leave ``unchanged`` as they were."""
        before = [np.array(to_numpy(a), copy=True) for a in unchanged]
        try:
            call()
        except error as raised:
            if not re.search(pattern, str(raised)):
                self.found.append(
                    f"{what}: raised {type(raised).__name__} without {pattern!r}: {raised}"
                )
        except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
            self.raised(what, raised, f"{_names(error)} matching {pattern!r}")
        else:
            self.found.append(
                f"{what}: expected {_names(error)} matching {pattern!r}; nothing was raised"
            )
        for i, (a, copy) in enumerate(zip(unchanged, before)):
            if not np.array_equal(to_numpy(a), copy):
                self.found.append(f"{what}: argument {i} of the refused call was modified")

    def expect_error_in_both_modes(self, what, f, backend, x, error, pattern, unchanged=()):
        """:meth:`expect_error` for the gradient of f at x and for its pushforward along ones.

        ``what`` describes f; each problem found starts with the operator's name and "of".
        """
        for name, call in (
            ("gradient", lambda: gradient(f, backend, x)),
            ("pushforward", lambda: pushforward(f, backend, x, (np.ones_like(x),))),
        ):
            self.expect_error(f"{name} of {what}", call, error, pattern, unchanged)

    def expect_right_or_explained(self, what, call, expected, zero):
        """``call()`` returns ``expected`` (any array for a zero backend) or raises a DifferentiationError naming the fix."""
        try:
            got = call()
        except DifferentiationError as raised:
            if "di.array_namespace" not in str(raised):
                self.found.append(
                    f"{what}: {type(raised).__name__} does not name the fix di.array_namespace: {raised}"
                )
            return
        except Exception as raised:  # noqa: BLE001
            self.raised(what, raised, "the derivative or a DifferentiationError")
            return
        if not is_array(got) or np.shape(to_numpy(got)) != np.shape(expected):
            self.found.append(
                f"{what}: expected an array of shape {np.shape(expected)}; got {got!r}"
            )
        elif not zero and not np.allclose(to_numpy(got), expected, rtol=1e-4, atol=1e-6):
            self.found.append(
                f"{what}: wrong derivative without an error: got {to_numpy(got)!r}, expected {expected!r}"
            )

    def answer_or_named_refusal(self, what, call, refusals, names, raw_from=None):
        """``call()``'s result, or None: a refusal of the ``refusals`` types must name one of ``names``.

        For calls inside another framework's transform (``jax.jit``,
        ``torch.func.vmap``), where an operator may answer or refuse by name
        but never fail with a raw error: a refusal that names none of
        ``names``, one raised by a module under ``raw_from`` (the framework's
        own error), and any other error are problems.
        """
        expected = "the result or an error naming " + " or ".join(names)
        try:
            return call()
        except refusals as error:
            raw = raw_from is not None and type(error).__module__.startswith(raw_from)
            if raw or not any(n in str(error) for n in names):
                self.raised(what, error, expected)
        except Exception as error:  # noqa: BLE001 - the problem is reported, not raised
            self.raised(what, error, expected)
        return None

    def expect_result(self, what, call, expected, *, like, zero=False, rtol=1e-4, atol=1e-6):
        """``call()`` returns ``expected``'s values in ``like``'s family, shape and dtype (any values for a zero backend).

        ``like`` is the array whose family and dtype the result must have
        (usually x); ``expected`` is a numpy array. A raised error is a problem.
        """
        try:
            got = call()
        except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
            self.raised(what, raised, "a result")
            return None
        self.check_result(what, got, expected, like=like, zero=zero, rtol=rtol, atol=atol)
        return got

    def expect_results(self, calls, *, like, zero=False, rtol=1e-4, atol=1e-6):
        """:meth:`expect_result` for each ``what: (call, expected)`` of ``calls``, all like ``like``."""
        for what, (call, expected) in calls.items():
            self.expect_result(what, call, expected, like=like, zero=zero, rtol=rtol, atol=atol)

    def check_result(self, what, got, expected, *, like, zero=False, rtol=1e-4, atol=1e-6):
        """Record a problem unless ``got`` is ``expected`` in ``like``'s family, shape and dtype."""
        expected = np.asarray(expected)
        if not is_array(got):
            self.found.append(f"{what}: expected an array; got {describe(got)}")
            return
        if family_of(got) != family_of(like) and not (
            family_of(like) == NUMBERS and family_of(got) == "numpy"
        ):
            self.found.append(
                f"{what}: expected a result in x's family {family_of(like)}; got {describe(got)}"
            )
        if shape_of(got) != expected.shape or dtype_name(got) != dtype_name(like):
            self.found.append(
                f"{what}: expected shape {expected.shape} and dtype {dtype_name(like)}; got {describe(got)}"
            )
        elif not zero and not np.allclose(to_numpy(got), expected, rtol=rtol, atol=atol):
            self.found.append(
                f"{what}: wrong values without an error: got {to_numpy(got)!r}, expected {expected!r}"
            )


@dataclasses.dataclass(frozen=True)
class BadInput:
    """One misuse of the API and the check of a backend's answer to it.

    Parameters
    ----------
    name : str
        A short identifier, used in test ids (``<backend>-bad_input-<name>``).
    description : str
        The misuse and the answer the contract requires, in words.
    run : callable
        ``run(backend, problems, zero)`` makes the calls and records what is
        wrong in ``problems`` (a :class:`Problems`); ``zero`` is True for a
        backend whose derivatives are zeros by design (only shapes are
        checked then).

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.testing import BadInput, Problems
    >>> def bare_tangent(backend, problems, zero):
    ...     problems.expect_error("a bare tangent", lambda: di.pushforward(np.sin, backend, np.ones(2), np.ones(2)),
    ...                           TypeError, "tangents")
    >>> probe = BadInput("bare_tangent", "a bare array as tangents: TypeError naming tangents", bare_tangent)
    >>> problems = Problems()
    >>> probe.run(di.AutoFiniteDiff(), problems, False)
    >>> problems.found
    []
    """

    name: str
    description: str
    run: Callable


def run_probes(probes, backend, zero=False):
    """Run each probe on ``backend``, recording what they all find in one :class:`Problems`.

    Parameters
    ----------
    probes : iterable of BadInput
        The probes, such as a regression module's ``probes()``.
    backend : AbstractBackend
        The selector under test.
    zero : bool, default False
        The backend's derivatives are zeros by design (only shapes are checked).

    Returns
    -------
    Problems
        ``found`` is empty when every probe passed.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import bad_inputs
    >>> run_probes(bad_inputs()[:3], di.AutoFiniteDiff()).found
    []
    """
    problems = Problems()
    for probe in probes:
        probe.run(backend, problems, zero)
    return problems
