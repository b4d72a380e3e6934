"""One case of the kit: a backend on a scenario in an array family, run stage by stage.

A case calls the scenario's operator in every way the contract allows and
compares each result with the scenario's analytic answer:

- prepared (the default, checked preparation, then ``strict=False``) at
  *other values* of x, the tangents and the Constants (same shapes), then
  called twice at the scenario's values;
- prepared with ``out=`` (the buffer itself must come back);
- prepared ``value_and_<op>`` (and its second-order siblings), with and without ``out=``;
- unprepared, plain and ``value_and_``;
- with the checked preparation, calls that change one slot of the key at a
  time (x's shape, dtype and array type; the tangents' count and shape; the
  function object; the backend; the contexts' kinds), each of which must
  raise ``PreparationMismatchError`` without evaluating ``f``;
- afterwards, ``x``, the tangents and the contexts must be unchanged.

``f`` is wrapped in a :class:`~diffinterface.testing.counting.CountingFunction`,
so each stage records how many times it evaluated ``f``. For a jitted JAX
backend a "call of f" is a trace: compiled calls do not run Python, so
prepared calls count 0.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from ..selectors import AbstractBackend
from .scenarios import Scenario
from .stages import CaseRun
from .tolerances import default_tolerances, pick


@dataclasses.dataclass
class CaseResult:
    """What running one case found: ``status`` is "passed", "failed" or "excluded".

    :meth:`Case.run` builds it; each parameter is also the attribute of the
    same name, and ``id`` is ``backend_id-scenario-family``.

    Parameters
    ----------
    backend_id : str
        The backend's test id.
    scenario : str
        The scenario's name.
    operator : str
        The scenario's operator.
    family : str
        The array family the case ran in (``"numpy"``, ``"torch"``, ``"jax"``).
    status : str
        ``"passed"``, ``"failed"`` or ``"excluded"``.
    problems : list of str, default []
        What the case found wrong, one sentence each (empty when it passed).
    notes : list of str, default []
        Remarks that are not failures (why a case was excluded or refused).
    counts : dict, default {}
        Evaluations of ``f`` per stage of the case (``"prepare"``, ``"call"``...).

    Examples
    --------
    >>> from diffinterface.testing import CaseResult
    >>> result = CaseResult("fd", "gradient-square", "gradient", "numpy", "failed", ["prepared call: wrong values"])
    >>> print(result.message())
    fd-gradient-square-numpy: failed
      - prepared call: wrong values
    """

    backend_id: str
    scenario: str
    operator: str
    family: str
    status: str
    problems: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)
    counts: dict = dataclasses.field(default_factory=dict)

    @property
    def id(self):
        return f"{self.backend_id}-{self.scenario}-{self.family}"

    def message(self):
        lines = [f"{self.id}: {self.status}"]
        lines += [f"  - {p}" for p in self.problems]
        lines += [f"  (note) {n}" for n in self.notes]
        return "\n".join(lines)


@dataclasses.dataclass
class ProbeCase:
    """One backend and one operator under a probe (``kind``); ``_run(found)`` notes what it finds as sentences."""

    backend_id: str
    backend: object
    operator: str
    kind = "probe"

    @property
    def id(self):
        return f"{self.backend_id}-{self.kind}-{self.operator}"

    def run(self) -> CaseResult:
        found: list = []
        try:
            self._run(found)
        except Exception as error:  # noqa: BLE001 - reported; a backend that fails to import included, never a skip
            found.append(f"raised {type(error).__name__}: {error}")
        status = "failed" if found else "passed"
        return CaseResult(
            self.backend_id, f"{self.kind}-{self.operator}", self.operator, "numpy", status, found
        )

    def check(self):
        """The :class:`CaseResult`; AssertionError listing what was found when the case failed."""
        result = self.run()
        if result.status == "failed":
            raise AssertionError(result.message())
        return result

    def _run(self, found):
        raise NotImplementedError


@dataclasses.dataclass
class Case:
    """One backend on one scenario in one array family; ``run()`` checks it, ``check()`` asserts.

    :func:`build_cases` builds them with the exclusions decided from the
    backends' capabilities; each parameter is also the attribute of the same
    name. ``run()`` returns a :class:`CaseResult`; ``check()`` runs the case
    and raises AssertionError listing every problem (inside pytest, an
    excluded case is skipped with its reason).

    Parameters
    ----------
    backend_id : str
        The backend's test id (the first part of ``id``).
    backend : AbstractBackend
        The selector under test.
    scenario : Scenario
        The operator, function, point and expected results.
    family : str, default "numpy"
        The array family the scenario is converted to.
    zero : bool, default False
        The backend's derivatives are all zeros by design: only families,
        shapes and dtypes of derivatives are checked (values of f still are).
    rtol, atol : float or dict, optional
        Overrides of :func:`default_tolerances` (a number, or a dict dtype
        name -> number).
    counts : bool, default True
        Count evaluations of ``f`` per stage.
    excluded : str, optional
        Why the case is left out; it then does not run.
    refused : str, optional
        Why the backend declares it cannot run this scenario; the case then
        checks that it refuses clearly instead of running it.
    device : str, optional
        The device to place x, seeds, contexts and ``out=`` buffers on, in
        the framework's terms (``"cuda"``, ``"gpu:0"``, ``"cpu:1"``); every
        result must then be on x's device.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.testing import Case, Scenario
    >>> square = Scenario("gradient", lambda x: (x ** 2).sum(), np.array([1.0, 2.0]),
    ...                   value=np.float64(5.0), first=np.array([2.0, 4.0]), name="gradient-square")
    >>> case = Case("fd", di.AutoFiniteDiff(), square)
    >>> case
    <Case fd-gradient-square-numpy>
    >>> case.run().status
    'passed'
    """

    backend_id: str
    backend: AbstractBackend
    scenario: Scenario
    family: str = "numpy"
    zero: bool = False
    rtol: Any = None
    atol: Any = None
    counts: bool = True
    excluded: Optional[str] = None
    #: Why the backend declares it cannot run this scenario; the case then checks
    #: that it refuses clearly (UnsupportedError, buffers untouched) instead of running it.
    refused: Optional[str] = None
    #: The device x, seeds, contexts and buffers are placed on, in the framework's terms ("cuda",
    #: "gpu:0"); every result must then come back on it. None: the family's default device, not
    #: checked.
    device: Optional[str] = None

    @property
    def id(self):
        """``backend-operator-scenario-family``, the pytest id (scenario names start with the operator)."""
        return f"{self.backend_id}-{self.scenario.name}-{self.family}"

    def tolerances(self):
        dtype = self.scenario.dtype
        rtol, atol = default_tolerances(self.backend, dtype, self.scenario.order)
        return pick(self.rtol, dtype, rtol), pick(self.atol, dtype, atol)

    def run(self) -> CaseResult:
        s = self.scenario
        result = CaseResult(self.backend_id, s.name, s.operator, self.family, "excluded")
        if self.excluded:
            result.notes.append(self.excluded)
            return result
        if self.refused:
            result.notes.append(f"refused as declared: {self.refused}")
            CaseRun(self, result).refusal()
        else:
            CaseRun(self, result).run()
        result.status = "failed" if result.problems else "passed"
        return result

    def check(self):
        """Run the case and raise AssertionError listing every problem (inside pytest: skip if excluded)."""
        if self.excluded:
            _skip(f"excluded: {self.excluded}")
        result = self.run()
        if result.problems:
            raise AssertionError(result.message())
        return result

    def __repr__(self):
        return f"<Case {self.id}>"


def _skip(reason):
    import pytest

    pytest.skip(reason)
