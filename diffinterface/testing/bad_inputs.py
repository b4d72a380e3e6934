"""Bad inputs and broken functions: what every backend must refuse, and how.

Each :class:`BadInput` misuses the API once (a bare tangent instead of a
tuple, a tangent of another dtype, a read-only or aliasing ``out=``, ``f``
returning a string, numpy or ``float()`` applied to the traced input...) and
states the contract: the error type, the argument its message names, and that
nothing the call received was modified. The functions that break a
framework's graph have one rule for every backend: the right derivative (a
backend that evaluates f at plain numbers can differentiate them) or a
:class:`~diffinterface.DifferentiationError` whose message names the fix,
``di.array_namespace``, and never a wrong number such as a silent zero.

    >>> import diffinterface as di
    >>> from diffinterface.testing import bad_input_cases
    >>> cases = bad_input_cases({"fd": di.AutoFiniteDiff()})
    >>> cases[0].id
    'fd-bad_input-tangents_not_a_tuple'
    >>> all(case.run().status == "passed" for case in cases)
    True

``bad_input_cases(backends)`` builds the cases for a dict of backends; the
pytest plugin's ``di_bad_input_case`` fixture runs them (``case.check()``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..families import array_namespace
from ..errors import MissingBackendError
from ..operators import gradient, pullback, pushforward
from .cases import CaseResult
from .probes import BadInput, Problems
from .regressions import regressions

X = np.linspace(0.2, 1.0, 3)


def _square_sum(x):
    xp = array_namespace(x)
    return xp.sum(x**2)


def _sines(x):
    xp = array_namespace(x)
    return xp.sin(x)


def _bare_tangent(backend, problems, zero):
    t = np.ones(3)
    problems.expect_error(
        "pushforward with a bare array as tangents",
        lambda: pushforward(_sines, backend, X, t),
        TypeError,
        r"tangents: expected a non-empty tuple of arrays shaped like x",
        (t,),
    )


def _bare_tangent_prepared(backend, problems, zero):
    from ..operators import prepare_pushforward

    t = np.ones(3)
    prep = prepare_pushforward(_sines, backend, X, (t,))
    problems.expect_error(
        "prepared pushforward with a bare array as tangents",
        lambda: pushforward(_sines, backend, X, t, prep=prep),
        (TypeError, ValueError),
        r"tangents",
        (t,),
    )


def _tangent_dtype(dtype):
    def run(backend, problems, zero):
        t = np.ones(3, dtype=dtype)
        problems.expect_error(
            f"pushforward with a {dtype} tangent",
            lambda: pushforward(_sines, backend, X, (t,)),
            TypeError,
            r"tangents\[0\]: expected .*float64 like x; got numpy " + dtype,
            (t,),
        )
        problems.expect_error(
            f"pullback with a {dtype} cotangent",
            lambda: pullback(_sines, backend, X, (t,)),
            TypeError,
            r"cotangents\[0\]: expected .*float64 like the output y",
            (t,),
        )

    return run


def _expect_out_refused(problems, backend, what, x, out, pattern, unchanged=()):
    """``gradient(_square_sum, backend, x, out=out)`` must raise ValueError matching ``pattern``."""
    problems.expect_error(
        what, lambda: gradient(_square_sum, backend, x, out=out), ValueError, pattern, unchanged
    )


def _read_only_out(backend, problems, zero):
    out = np.zeros(3)
    out.flags.writeable = False
    what = "gradient into a read-only out="
    _expect_out_refused(problems, backend, what, X, out, "out: expected a writable buffer", (out,))


def _out_aliasing_x(backend, problems, zero):
    x = X.copy()
    what, pattern = "gradient with out=x", "out: the buffer shares memory with x"
    _expect_out_refused(problems, backend, what, x, x, pattern, (x,))


def _out_of_the_wrong_type(backend, problems, zero):
    what, pattern = "gradient into a list", "out: expected a buffer like the result"
    _expect_out_refused(problems, backend, what, X, [0.0, 0.0, 0.0], pattern)


def _second_buffer_wrong(backend, problems, zero):
    first, second = np.zeros(3), np.zeros(2)
    problems.expect_error(
        "pushforward into (good, wrong-shaped) buffers",
        lambda: pushforward(_sines, backend, X, (np.ones(3), np.ones(3)), out=(first, second)),
        ValueError,
        r"out\[1\]",
        (first,),
    )


def _non_array_output(returned):
    def run(backend, problems, zero):
        problems.expect_error_in_both_modes(
            f"f returning {returned!r}",
            lambda x: returned,
            backend,
            X,
            TypeError,
            r"f: expected f to return an array or a number; it returned ",
        )

    return run


def _numpy_on_the_input(backend, problems, zero):
    def f(x):
        return np.sum(np.sin(x))  # numpy, not the array namespace: wrong on traced arrays

    problems.expect_right_or_explained(
        "gradient of f calling numpy on x", lambda: gradient(f, backend, X), np.cos(X), zero
    )


def _float_of_the_input(backend, problems, zero):
    def f(x):
        xp = array_namespace(x)
        return float(
            xp.sum(x**2)
        )  # float() leaves the framework's graph (and drops a complex step's part)

    problems.expect_right_or_explained(
        "gradient of f calling float() on x", lambda: gradient(f, backend, X), 2 * X, zero
    )


def _zero_through_the_graph(backend, problems, zero):
    def f(x):
        xp = array_namespace(x)
        return 0.0 * xp.sum(x)  # ignores x in a way every framework sees: the derivative is zero

    problems.expect_right_or_explained(
        "gradient of 0 * sum(x)", lambda: gradient(f, backend, X), np.zeros(3), zero
    )


def bad_inputs():
    """Every :class:`BadInput` of the kit, the regression probes included.

    Returns
    -------
    list of BadInput
        A new list on each call, in a fixed order.

    Examples
    --------
    >>> from diffinterface.testing import bad_inputs
    >>> probes = bad_inputs()
    >>> probes[0].name, probes[0].description
    ('tangents_not_a_tuple', 'a bare array as tangents: TypeError naming tangents')
    >>> len(probes) >= 10
    True
    """
    return [
        BadInput(
            "tangents_not_a_tuple",
            "a bare array as tangents: TypeError naming tangents",
            _bare_tangent,
        ),
        BadInput(
            "tangents_not_a_tuple_prepared", "the same, on a prepared call", _bare_tangent_prepared
        ),
        *(
            BadInput(
                f"tangent_{d}",
                f"a {d} tangent or cotangent for float64 x: TypeError naming it",
                _tangent_dtype(d),
            )
            for d in ("int64", "complex128", "float32")
        ),
        BadInput(
            "out_read_only",
            "a read-only out=: ValueError naming out, out unchanged",
            _read_only_out,
        ),
        BadInput("out_aliasing_x", "out=x: ValueError naming out, x unchanged", _out_aliasing_x),
        BadInput("out_wrong_type", "a list as out=: ValueError naming out", _out_of_the_wrong_type),
        BadInput(
            "out_second_buffer",
            "the second of two buffers wrong: ValueError naming out[1]",
            _second_buffer_wrong,
        ),
        *(
            BadInput(
                f"f_returns_{name}",
                f"f returning {name}: the same TypeError on every backend",
                _non_array_output(v),
            )
            for name, v in (("str", "abc"), ("None", None), ("list", [1.0, 2.0]))
        ),
        BadInput(
            "numpy_on_the_input",
            "numpy called on x: the derivative or an error naming the fix",
            _numpy_on_the_input,
        ),
        BadInput(
            "float_of_the_input",
            "float() of a value of x: the derivative or an error, never zeros",
            _float_of_the_input,
        ),
        BadInput(
            "zero_through_the_graph", "0 * sum(x): zeros, not an error", _zero_through_the_graph
        ),
        *regressions(),
    ]


@dataclasses.dataclass
class BadInputCase:
    """One backend and one bad input; ``run()`` returns a CaseResult, ``check()`` raises on failure.

    :func:`bad_input_cases` builds them; each parameter is also the attribute
    of the same name. A backend whose framework fails to import fails the case.

    Parameters
    ----------
    backend_id : str
        The backend's test id; ``id`` is ``<backend_id>-<kind>-<name of bad_input>``.
    backend : AbstractBackend
        The selector the bad input is given to.
    bad_input : BadInput
        The misuse to check.
    zero : bool, default False
        The backend's derivatives are zeros by design (only shapes are checked).
    kind : str, default "bad_input"
        The probe's group, in the id: "bad_input", or "nested" for the probes of
        :func:`~diffinterface.testing.nested_cases`.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import BadInputCase, bad_inputs
    >>> case = BadInputCase("fd", di.AutoFiniteDiff(), bad_inputs()[0])
    >>> case
    <BadInputCase fd-bad_input-tangents_not_a_tuple>
    >>> case.run().status
    'passed'
    """

    backend_id: str
    backend: object
    bad_input: BadInput
    zero: bool = False
    kind: str = "bad_input"

    @property
    def id(self):
        return f"{self.backend_id}-{self.kind}-{self.bad_input.name}"

    def run(self) -> CaseResult:
        result = CaseResult(
            self.backend_id, f"{self.kind}-{self.bad_input.name}", self.kind, "numpy", "passed"
        )
        problems = Problems()
        try:
            self.bad_input.run(self.backend, problems, self.zero)
        except MissingBackendError as error:
            problems.found.append(f"the backend failed to import: {error}")
        result.problems.extend(problems.found)
        if problems.found:
            result.status = "failed"
        return result

    def check(self):
        result = self.run()
        if result.status != "passed":
            raise AssertionError(result.message())
        return result

    def __repr__(self):
        return f"<BadInputCase {self.id}>"


def bad_input_cases(backends, *, zero=()):
    """A :class:`BadInputCase` per backend and bad input.

    Parameters
    ----------
    backends : AbstractBackend or dict
        A selector (its id is its class name) or a dict test id -> selector.
    zero : sequence of str, default ()
        The ids of backends whose derivatives are zeros by design.

    Returns
    -------
    list of BadInputCase
        For each backend, one case per :func:`bad_inputs` entry, in that order.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import bad_input_cases
    >>> cases = bad_input_cases(di.AutoFiniteDiff())
    >>> cases[0].id
    'AutoFiniteDiff-bad_input-tangents_not_a_tuple'
    >>> cases[0].check().status
    'passed'
    """
    return _cases_of(backends, bad_inputs(), zero, "bad_input")


def _cases_of(backends, probes, zero, kind):
    """A :class:`BadInputCase` of ``kind`` per backend (a selector or a dict id -> selector) and probe."""
    if not isinstance(backends, dict):
        backends = {type(backends).__name__: backends}
    return [
        BadInputCase(k, b, probe, k in zero, kind) for k, b in backends.items() for probe in probes
    ]


def nested_cases(backends, *, zero=()):
    """A :class:`BadInputCase` per backend and probe of an operator inside its framework's transforms.

    The probes (:func:`~diffinterface.testing.regressions.nesting_probes`) call
    operators under the outer gradient, vectorizing map and compiler of the
    framework a backend differentiates in (``torch.autograd`` and ``torch.func``,
    ``jax.grad``/``vmap``/``jit``, ``tf.GradientTape``/``tf.function``/``tf.vectorized_map``,
    ``autograd.grad``), with a gradient penalty and a MAML step, and compare with
    the framework's own derivatives. A probe does nothing on a backend that
    differentiates in another framework.

    Parameters
    ----------
    backends : AbstractBackend or dict
        A selector (its id is its class name) or a dict test id -> selector.
    zero : sequence of str, default ()
        The ids of backends whose derivatives are zeros by design.

    Returns
    -------
    list of BadInputCase
        For each backend, one case (kind "nested") per probe.

    Examples
    --------
    >>> import diffinterface as di
    >>> from diffinterface.testing import nested_cases
    >>> cases = nested_cases({"autograd": di.AutoAutograd()})
    >>> [case.id for case in cases][-1]
    'autograd-nested-autograd_outer_grad'
    >>> cases[-1].check().status
    'passed'
    """
    from .regressions import nesting_probes

    return _cases_of(backends, nesting_probes(), zero, "nested")
