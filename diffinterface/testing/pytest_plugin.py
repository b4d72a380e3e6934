"""pytest plugin: run the conformance kit on chosen backends, one test id per case.

Load it with ``-p diffinterface.testing.pytest_plugin`` (or
``pytest_plugins = ["diffinterface.testing.pytest_plugin"]`` in a root
``conftest.py``). It adds:

- ``--di-backends=ID,ID`` (or the ``DI_BACKENDS`` environment variable):
  which backends to test. An ID is a key of ``diffinterface.testing.BACKENDS``
  or ``ZERO_BACKENDS``, a prefix of such keys (``finitediff`` selects
  ``finitediff-central``, ``finitediff-forward``...), or ``module:attribute``
  naming a selector or a dict id -> selector in your own code. Default: all.
- ``--di-matrix=full|quick|rest`` (or ``DI_MATRIX``, or the ini option ``di_matrix``): how much of
  the matrix of backend configurations and groups to run. ``full`` (the default) runs every case;
  ``quick`` runs every operator on every configuration (``test_first_order``, ``test_second_order``)
  and every other group on each registration's default configuration only (the modes, ``jit=False``
  and other step methods are :data:`~diffinterface.testing.backends.SECONDARY_BACKENDS`); ``rest``
  runs exactly what ``quick`` leaves out. A test of your own joins the split with the
  ``di_secondary`` marker (:func:`matrix_marks`).
- ``--di-devices=FAMILY=DEVICE,...`` (or ``DI_DEVICES``), e.g. ``torch=cuda,jax=gpu``: run
  ``di_case``, ``di_second_order_case``, ``di_pytree_case`` and ``di_edge_case`` with x in those
  families only, placed on those devices; every result must come back on x's device.
- fixtures parametrized over the selection: ``di_backend`` (a selector),
  ``di_case`` (first-order cases over :func:`default_scenarios`) and
  ``di_second_order_case`` (over :func:`second_order_scenarios`),
  ``di_pytree_case`` (over :func:`pytree_scenarios`: x a dict, tuple, namedtuple...),
  ``di_edge_case`` (over :func:`edge_scenarios`: empty x, empty outputs),
  ``di_bad_input_case`` (over :func:`bad_inputs`: misuses refused with named errors),
  ``di_nested_case`` (over :func:`~.bad_inputs.nested_cases`: operators inside their framework's own
  transforms, a gradient penalty and a MAML step),
  ``di_aux_case`` (every operator with ``has_aux=True``, see :mod:`.aux_scenarios`),
  ``di_same_point_case`` (same-point preparations, see :mod:`.same_point_scenarios`),
  ``di_implicit_case`` (``ImplicitFunction`` against closed forms, see :mod:`.implicit_scenarios`),
  ``di_complex_case`` (complex x: one convention on every backend, see :mod:`.complex_scenarios`),
  ``di_batch_case`` (over :func:`~.batch_scenarios.batch_cases`: sweeps agree for every ``batch_size``),
  ``di_worker_case`` (over :func:`~.worker_scenarios.worker_cases`: evaluations through ``workers`` agree).

A third party checks its backend with::

    pytest --pyargs diffinterface.testing -p diffinterface.testing.pytest_plugin --di-backends=mypkg.di:BACKEND

which runs ``diffinterface/testing/test_kit_conformance.py``: ``case.check()`` for every case of
every group. Test ids read ``backend-operator-scenario-dtype-family``. The groups are one list,
:data:`GROUPS` (test name, fixture, cases); the fixtures are parametrized from it and both
conformance files (the kit's and ``tests/core/test_conformance.py``) are made from it by
:func:`conformance_tests`, so they run the same cases.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
from typing import Callable

import pytest

from ..core import get_adapter
from ..selectors import AbstractBackend
from .backends import BACKENDS, SECONDARY_BACKENDS, ZERO_BACKENDS
from .aux_scenarios import aux_cases
from .bad_inputs import bad_input_cases, nested_cases
from .batch_scenarios import batch_cases
from .complex_scenarios import complex_cases
from .worker_scenarios import worker_cases
from .runner import build_cases
from .pytree_scenarios import pytree_scenarios
from .same_point_scenarios import same_point_cases
from .implicit_scenarios import implicit_cases
from .edge_scenarios import edge_scenarios
from .scenarios import default_scenarios, second_order_scenarios

ENVIRONMENT_VARIABLE = "DI_BACKENDS"
DEVICES_VARIABLE = "DI_DEVICES"
MATRIX_VARIABLE = "DI_MATRIX"
MATRICES = ("full", "quick", "rest")
#: the groups the quick matrix runs on every configuration: every operator on every backend
EVERY_CONFIGURATION = frozenset({"test_first_order", "test_second_order"})
_SECONDARY = "di_secondary"


def pytest_addoption(parser):
    group = parser.getgroup("diffinterface", "diffinterface conformance kit")
    group.addoption(
        "--di-backends",
        action="store",
        default=None,
        metavar="ID,ID",
        help=(
            "backends the conformance kit tests: ids of diffinterface.testing.BACKENDS / ZERO_BACKENDS, "
            f"prefixes of them, or module:attribute; default: ${ENVIRONMENT_VARIABLE}, else all"
        ),
    )
    group.addoption(
        "--di-matrix",
        action="store",
        default=None,
        choices=MATRICES,
        help=(
            "full: every case; quick: every operator on every backend configuration, the other "
            "groups on each backend's default one; rest: what quick leaves out; default: "
            f"${MATRIX_VARIABLE}, else the ini option di_matrix, else full"
        ),
    )
    parser.addini("di_matrix", "the kit's default --di-matrix (full, quick or rest)", default="")
    group.addoption(
        "--di-devices",
        action="store",
        default=None,
        metavar="FAMILY=DEVICE,...",
        help=(
            "place x on these devices, one per array family (e.g. torch=cuda,jax=gpu), and check that results "
            f"stay there; only those families are tried; default: ${DEVICES_VARIABLE}, else each family's default"
        ),
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{_SECONDARY}: a secondary backend configuration's case beyond the operators; "
        "--di-matrix=quick leaves it out, --di-matrix=rest runs only such cases",
    )


def selected_matrix(config):
    """``"full"``, ``"quick"`` or ``"rest"``: ``--di-matrix``, else ``$DI_MATRIX``, else the ini ``di_matrix``."""
    text = config.getoption("--di-matrix", default=None) or os.environ.get(MATRIX_VARIABLE)
    if not text:
        try:
            text = config.getini("di_matrix")
        except ValueError:  # the ini option is registered with the plugin's options
            text = None
    text = text or "full"
    if text not in MATRICES:
        raise pytest.UsageError(f"--di-matrix: expected one of {', '.join(MATRICES)}; got {text!r}")
    return text


#: the mark of a case the quick matrix leaves out (``--di-matrix=rest`` runs only these)
SECONDARY = getattr(pytest.mark, _SECONDARY)


def matrix_marks(backend_id, group=None, in_own_family=True):
    """The marks of a case of ``backend_id`` in ``group`` (a test name): ``[SECONDARY]`` where the
    quick matrix leaves it out, else ``[]``.

    The quick matrix runs a secondary configuration (a mode, ``jit=False``, another
    step method) only in the groups of :data:`EVERY_CONFIGURATION`, and there only
    with x in the backend's own family (``in_own_family``): every operator on every
    configuration, once.

    >>> matrix_marks("jax"), matrix_marks("jax", "test_workers")
    ([], [])
    >>> [mark.name for mark in matrix_marks("torch-forward", "test_workers")]
    ['di_secondary']
    >>> matrix_marks("torch-forward", "test_first_order")
    []
    >>> [mark.name for mark in matrix_marks("torch-forward", "test_first_order", in_own_family=False)]
    ['di_secondary']
    """
    if backend_id in SECONDARY_BACKENDS and (group not in EVERY_CONFIGURATION or not in_own_family):
        return [SECONDARY]
    return []


def _in_own_family(case):
    """Whether a case's x is in the family its backend computes in (numpy for one without a framework)."""
    capabilities = get_adapter(case.backend).capabilities
    own = capabilities.framework if capabilities.framework in capabilities.families else "numpy"
    return case.family == own


def pytest_collection_modifyitems(config, items):
    matrix = selected_matrix(config)
    if matrix == "full":
        return
    keep, drop = [], []
    for item in items:
        secondary = item.get_closest_marker(_SECONDARY) is not None
        (drop if secondary == (matrix == "quick") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def selected_devices(config):
    """The family -> device mapping of ``--di-devices`` or ``$DI_DEVICES`` (None: default devices)."""
    text = config.getoption("--di-devices", default=None)
    if text is None:
        text = os.environ.get(DEVICES_VARIABLE)
    if not text:
        return None
    devices = {}
    for item in text.split(","):
        family, equals, device = item.strip().partition("=")
        if not equals or not family or not device:
            raise pytest.UsageError(
                f"--di-devices: expected FAMILY=DEVICE items such as torch=cuda,jax=gpu; got {text!r}"
            )
        devices[family] = device
    return devices


def known_backends():
    """Every backend the project tests, id -> selector (zero backends included)."""
    return {**BACKENDS, **ZERO_BACKENDS}


def _import_backends(spec):
    module_name, _, attribute = spec.partition(":")
    try:
        value = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise pytest.UsageError(f"--di-backends: cannot import {spec!r}: {error}") from error
    if isinstance(value, AbstractBackend):
        return {attribute: value}
    if isinstance(value, dict) and all(isinstance(v, AbstractBackend) for v in value.values()):
        return dict(value)
    raise pytest.UsageError(
        f"--di-backends: {spec!r} must name a backend selector or a dict id -> selector; got {type(value).__name__}"
    )


def select_backends(text):
    """``{id: selector}`` for a comma-separated selection (None or empty: every known backend).

    >>> sorted(select_backends("finitediff"))
    ['finitediff-central', 'finitediff-complex', 'finitediff-forward']
    """
    known = known_backends()
    if not text or not text.strip():
        return known
    selected = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if ":" in item:
            selected.update(_import_backends(item))
        elif item in known:
            selected[item] = known[item]
        else:
            matches = {k: v for k, v in known.items() if k.startswith(item + "-")}
            if not matches:
                raise pytest.UsageError(
                    f"--di-backends: unknown backend id {item!r}; expected one of {', '.join(known)} "
                    "(or a prefix of them, or module:attribute)"
                )
            selected.update(matches)
    return selected


def selected_backends(config):
    """The backends chosen by ``--di-backends`` or ``$DI_BACKENDS`` for this session."""
    text = config.getoption("--di-backends", default=None)
    if text is None:
        text = os.environ.get(ENVIRONMENT_VARIABLE)
    return select_backends(text)


def _zero(backends):
    return tuple(k for k in backends if k in ZERO_BACKENDS)


def _over_scenarios(scenarios):
    """A group's ``params(config, test)``: the selected backends' cases over ``scenarios()``.

    The cases run on the chosen devices; an excluded one is marked skipped, with its reason.
    """

    def params(config, test):
        backends = selected_backends(config)
        cases = build_cases(
            backends, scenarios(), zero=_zero(backends), device=selected_devices(config)
        )
        return [
            pytest.param(
                case,
                id=case.id,
                marks=_skip_marks(case)
                + matrix_marks(case.backend_id, test, in_own_family=_in_own_family(case)),
            )
            for case in cases
        ]

    return params


def _skip_marks(case):
    """A skip mark giving an excluded case's reason; none for a case that runs."""
    return [pytest.mark.skip(reason=f"excluded: {case.excluded}")] if case.excluded else []


def _of_backends(cases, *, zero=False):
    """A group's ``params(config, test)``: ``cases(backends)`` of the selected backends.

    With ``zero``, ``cases`` is also told which of them are zero backends.
    """

    def params(config, test):
        backends = selected_backends(config)
        options = {"zero": _zero(backends)} if zero else {}
        return [
            pytest.param(case, id=case.id, marks=matrix_marks(case.backend_id, test))
            for case in cases(backends, **options)
        ]

    return params


@dataclasses.dataclass(frozen=True)
class Group:
    """One group of conformance cases: the test that checks them and the fixture it takes."""

    test: str
    fixture: str
    what: str
    params: Callable[[pytest.Config, str], list]


#: Every group of the conformance kit, in the order the tests run. The fixtures are parametrized
#: from it (:func:`pytest_generate_tests`) and both conformance files,
#: ``tests/core/test_conformance.py`` and ``diffinterface/testing/test_kit_conformance.py``, are
#: made from it (:func:`conformance_tests`): a group added here runs everywhere.
GROUPS = (
    Group(
        "test_first_order",
        "di_case",
        "first-order operators over default_scenarios()",
        _over_scenarios(default_scenarios),
    ),
    Group(
        "test_second_order",
        "di_second_order_case",
        "second-order operators over second_order_scenarios()",
        _over_scenarios(second_order_scenarios),
    ),
    Group(
        "test_pytree_x",
        "di_pytree_case",
        "x a pytree (dict, tuple, namedtuple...) over pytree_scenarios()",
        _over_scenarios(pytree_scenarios),
    ),
    Group(
        "test_empty_arrays",
        "di_edge_case",
        "empty x and empty outputs over edge_scenarios()",
        _over_scenarios(edge_scenarios),
    ),
    Group(
        "test_bad_inputs",
        "di_bad_input_case",
        "misuses refused with named errors (bad_inputs())",
        _of_backends(bad_input_cases, zero=True),
    ),
    Group(
        "test_inside_framework_transforms",
        "di_nested_case",
        "operators inside their framework's own gradients, vmaps and compilers (nested_cases())",
        _of_backends(nested_cases, zero=True),
    ),
    Group(
        "test_batch_sizes",
        "di_batch_case",
        "sweeps agree for every batch_size",
        _of_backends(batch_cases),
    ),
    Group(
        "test_workers",
        "di_worker_case",
        "evaluations through workers agree",
        _of_backends(worker_cases),
    ),
    Group(
        "test_auxiliary_outputs",
        "di_aux_case",
        "every operator with has_aux=True",
        _of_backends(aux_cases),
    ),
    Group(
        "test_same_point_preparations",
        "di_same_point_case",
        "same-point preparations",
        _of_backends(same_point_cases),
    ),
    Group(
        "test_implicit_functions",
        "di_implicit_case",
        "ImplicitFunction against closed forms, as conditions and as outer backend",
        _of_backends(implicit_cases, zero=True),
    ),
    Group(
        "test_complex_numbers",
        "di_complex_case",
        "complex x: one convention on every backend",
        _of_backends(complex_cases, zero=True),
    ),
)


def pytest_generate_tests(metafunc):
    if "di_backend" in metafunc.fixturenames:
        backends = selected_backends(metafunc.config)
        metafunc.parametrize(
            "di_backend",
            [pytest.param(b, id=k, marks=matrix_marks(k)) for k, b in backends.items()],
        )
    for group in GROUPS:
        if group.fixture in metafunc.fixturenames:
            metafunc.parametrize(group.fixture, group.params(metafunc.config, group.test))


def _conformance_test(group, module):
    def test(**case):
        case[group.fixture].check()

    test.__name__ = test.__qualname__ = group.test
    test.__module__ = module
    test.__doc__ = f"``{group.fixture}.check()`` for each case: {group.what}."
    # pytest reads the fixture a test takes from its signature
    setattr(
        test,
        "__signature__",
        inspect.Signature([inspect.Parameter(group.fixture, inspect.Parameter.KEYWORD_ONLY)]),
    )
    return test


def conformance_tests(module):
    """The conformance tests, one per group of :data:`GROUPS`, for a test module's namespace.

    Parameters
    ----------
    module : str
        The ``__name__`` of the test module they are put in.

    Returns
    -------
    dict
        Test name -> test function taking the group's fixture; a test module runs them all with
        ``globals().update(conformance_tests(__name__))``.

    Examples
    --------
    >>> list(conformance_tests("test_mine"))[:3]
    ['test_first_order', 'test_second_order', 'test_pytree_x']
    """
    return {group.test: _conformance_test(group, module) for group in GROUPS}
