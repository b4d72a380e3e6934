"""The public conformance kit: check any backend against the diffinterface contract.

    >>> import diffinterface as di
    >>> from diffinterface.testing import default_scenarios, test_differentiation
    >>> report = test_differentiation(di.AutoFiniteDiff(), default_scenarios())
    >>> report.ok
    True

- :class:`Scenario`: an operator, a function, a point and the analytic answer.
- :func:`default_scenarios` (first order), :func:`second_order_scenarios`, :func:`pytree_scenarios`
  and :func:`edge_scenarios` (empty inputs and outputs).
- :func:`bad_inputs` / :func:`bad_input_cases`: misuses every backend must refuse with a named error.
- :func:`test_differentiation`: runs every case, returns a printable :class:`Report`.
- :func:`benchmark_differentiation`: evaluation counts and timings per case.
- :func:`pytest_cases` and the pytest plugin ``diffinterface.testing.pytest_plugin``
  (``--di-backends=id,id``, fixtures ``di_case``, ``di_second_order_case``, ``di_bad_input_case``, ``di_backend``).

Importing this package imports no framework.
"""

from .backends import BACKENDS, ZERO_BACKENDS
from .bad_inputs import BadInputCase, bad_input_cases, bad_inputs, nested_cases
from .probes import BadInput, Problems
from .benchmark import benchmark_differentiation
from .cases import Case, CaseResult
from .counting import CountingFunction
from .report import Report
from .runner import build_cases, pytest_cases, test_differentiation
from .tolerances import default_tolerances
from .pytree_scenarios import pytree_scenarios
from .edge_scenarios import edge_scenarios
from .scenarios import (
    FIRST_ORDER,
    SECOND_ORDER,
    Scenario,
    default_scenarios,
    second_order_scenarios,
)

__all__ = [
    "BACKENDS",
    "ZERO_BACKENDS",
    "Scenario",
    "default_scenarios",
    "edge_scenarios",
    "pytree_scenarios",
    "second_order_scenarios",
    "FIRST_ORDER",
    "SECOND_ORDER",
    "test_differentiation",
    "benchmark_differentiation",
    "pytest_cases",
    "build_cases",
    "BadInput",
    "BadInputCase",
    "Problems",
    "bad_inputs",
    "bad_input_cases",
    "nested_cases",
    "Case",
    "CaseResult",
    "CountingFunction",
    "Report",
    "default_tolerances",
]
