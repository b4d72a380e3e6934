"""The open registry: a backend defined outside the package is routed, checked by the kit, and queried safely."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import Adapter, Capabilities, Impl, OPERATORS, Spec, registration
from diffinterface.core import registry
from diffinterface.core.bridge import FrameworkBridge
from diffinterface.core.registry import framework_bridge
from diffinterface.testing import default_scenarios, second_order_scenarios, test_differentiation


# -- a third-party backend in a few lines: forward-mode central differences, one tangent at a time ---


@dataclasses.dataclass(frozen=True)
class AutoCentral(di.AbstractBackend):
    """Central differences with a fixed relative step (a third party's selector)."""

    step: float = 1e-6


class CentralAdapter(Adapter):
    capabilities = Capabilities(mode="forward", inplace=False, approximate=True)

    def output_spec(self, problem):
        return Spec.of(problem.f(problem.x, *problem.ctx))

    def prepare_pushforward(self, problem):
        f, h = problem.f, self.backend.step

        def pushforward(x, tangents, *ctx):
            x = np.asarray(x)
            scale = h * max(1.0, float(np.max(np.abs(x)))) if x.size else h
            return tuple(
                (
                    (np.asarray(f(x + scale * t, *ctx)) - np.asarray(f(x - scale * t, *ctx)))
                    / (2 * scale)
                ).astype(problem.spec.dtype)
                for t in tangents
            )

        def value_and_pushforward(x, tangents, *ctx):
            return np.asarray(f(x, *ctx)), pushforward(x, tangents, *ctx)

        return Impl(pushforward=pushforward, value_and_pushforward=value_and_pushforward)


di.register_backend(AutoCentral, CentralAdapter, test_backends={"central": AutoCentral()})


def test_a_third_party_backend_passes_the_kit():
    float64 = [s for s in default_scenarios() if s.dtype == "float64"]
    report = test_differentiation(
        AutoCentral(), float64, rtol=1e-6, atol=1e-8, raise_on_failure=False
    )
    assert report.ok, str(report)
    # AutoCentral declares no inplace: the kit excludes the scenarios writing into a di.Cache, and only them
    assert all(
        any(c.kind == "Cache" for c in s.contexts)
        == (s.name in {r.scenario for r in report.excluded})
        for s in float64
    )
    assert len(report.passed) == len(float64) - len(report.excluded)


def test_a_third_party_backend_composes_with_second_order():
    backend = di.SecondOrder(di.AutoFiniteDiff(), AutoCentral(step=1e-5))
    float64 = [s for s in second_order_scenarios() if s.dtype == "float64"]
    report = test_differentiation(backend, float64, rtol=1e-3, atol=1e-4, raise_on_failure=False)
    assert report.ok, str(report)


def test_its_registration_is_declared_once_and_listed_for_the_kit():
    entry = registration(AutoCentral())
    assert entry.adapter is CentralAdapter and entry.test_backends == {"central": AutoCentral()}
    assert di.check_available(AutoCentral()) and not di.check_inplace(AutoCentral())


def test_registering_needs_a_selector_class_and_an_adapter():
    with pytest.raises(
        TypeError, match="selector: expected a selector class subclassing di.AbstractBackend"
    ):
        di.register_backend(object, CentralAdapter)
    with pytest.raises(TypeError, match="adapter: expected a callable or a 'module:Class' string"):
        di.register_backend(AutoCentral, "no colon")


@pytest.mark.parametrize(
    "thing", ["jax", None, 3, [di.AutoJAX()]], ids=["string", "none", "int", "list"]
)
def test_queries_never_raise(thing):
    assert di.check_available(thing) is False
    assert di.check_inplace(thing) is False


def test_an_unregistered_selector_is_named_in_the_error():
    @dataclasses.dataclass(frozen=True)
    class Unknown(di.AbstractBackend):
        pass

    with pytest.raises(
        TypeError, match=r"or one registered with di.register_backend\); got .*Unknown\(\)"
    ):
        di.gradient(lambda x: (x**2).sum(), Unknown(), np.ones(2))


def test_every_operator_of_the_table_is_public_with_its_value_form():
    for name, op in OPERATORS.items():
        for function in (name, op.valued, "prepare_" + name):
            assert callable(getattr(di, function)), function
        # the adapter contract's default for every operator of the table: None (built from the primitives)
        assert getattr(Adapter(di.AutoZeroForward()), "prepare_" + name)(None) is None
    with pytest.raises(AttributeError, match="prepare_curl"):
        Adapter(di.AutoZeroForward()).prepare_curl


def test_importing_the_package_imports_no_framework():
    code = "import sys, diffinterface; print(sorted(m for m in ('jax', 'torch', 'autograd', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "make, error, field",
    [
        (lambda: di.AutoJAX(jit="no"), TypeError, "jit"),
        (lambda: di.AutoJAX(mode="sideways"), ValueError, "mode"),
        (lambda: di.AutoTorch(compile=1), TypeError, "compile"),
        (lambda: di.AutoFiniteDiff(rel_step=-1), ValueError, "rel_step"),
        (lambda: di.AutoFiniteDiff(rel_step="a"), TypeError, "rel_step"),
        (lambda: di.AutoFiniteDiff(abs_step=0), ValueError, "abs_step"),
        (lambda: di.AutoFiniteDiff(abs_step=float("nan")), ValueError, "abs_step"),
        (lambda: di.AutoFiniteDiff(method="backward"), ValueError, "method"),
    ],
    ids=[
        "jit-string",
        "mode",
        "compile-int",
        "rel_step-negative",
        "rel_step-string",
        "abs_step-zero",
        "abs_step-nan",
        "method",
    ],
)
def test_selectors_validate_their_fields_at_construction(make, error, field):
    with pytest.raises(error, match=rf"\({field}=\.\.\.\) expected"):
        make()


# -- a third party's DifferentiateWith rules, registered with its backend ------------------------


class CentralRules(FrameworkBridge):
    """The rules of a framework named "central" (no array family has that name: found, never called)."""


CENTRAL_RULES = CentralRules()


@dataclasses.dataclass(frozen=True)
class AutoTracedCentral(di.AbstractBackend):
    """A third party's selector whose registration also brings a framework's DifferentiateWith rules."""


@pytest.fixture
def isolated_registry(monkeypatch):
    """Registrations made by the test are undone after it."""
    monkeypatch.setattr(registry, "_REGISTRATIONS", dict(registry._REGISTRATIONS))
    monkeypatch.setattr(registry, "_ADAPTERS", dict(registry._ADAPTERS))
    monkeypatch.setattr(registry, "_BRIDGES", {})


def test_a_backend_registers_its_differentiate_with_rules_imported_on_first_use(isolated_registry):
    where = f"{__name__}:CENTRAL_RULES"
    di.register_backend(
        AutoTracedCentral, CentralAdapter, framework="central", differentiate_with=where
    )
    entry = registration(AutoTracedCentral())
    assert (entry.framework, entry.differentiate_with) == ("central", where)
    assert framework_bridge("central") is CENTRAL_RULES
    assert framework_bridge("unknown") is None


def test_differentiate_with_rules_need_the_framework_they_serve(isolated_registry):
    with pytest.raises(
        TypeError, match="framework: differentiate_with rules need the name of the framework"
    ):
        di.register_backend(AutoTracedCentral, CentralAdapter, differentiate_with=CENTRAL_RULES)


def test_registered_rules_serve_their_framework_s_arrays(isolated_registry):
    import jax
    from diffinterface.backends.jax.differentiate_with import JAXBridge

    class CountingRules(JAXBridge):
        calls = 0

        def call(self, bridge, x, contexts):
            CountingRules.calls += 1
            return super().call(bridge, x, contexts)

    di.register_backend(
        AutoTracedCentral, CentralAdapter, framework="jax", differentiate_with=CountingRules()
    )
    g = di.DifferentiateWith(lambda x: np.sum(x**2), AutoCentral())
    with jax.enable_x64(True):
        gradient = jax.grad(g)(jax.numpy.arange(3.0))
    assert CountingRules.calls == 1
    np.testing.assert_allclose(np.asarray(gradient), [0.0, 2.0, 4.0], atol=1e-5)


def test_an_operator_family_defined_outside_the_package_is_one_module_of_code():
    """A new operator family: its row, its fallback and its public functions, registered once."""
    from diffinterface.core import (
        Call,
        Operator,
        RULES,
        call,
        prepare,
        prepared_call,
        register_operator,
    )
    from diffinterface.core.operator_table import FALLBACKS

    op = Operator(
        name="sum_of_columns",
        order=1,
        seeds=None,
        methods=("sum_of_columns", "value_and_sum_of_columns"),
        valued_returns=("value", "first"),
        plain_returns="first",
    )

    def fallback(problem):
        # J @ ones: one pushforward along a tangent of ones
        ones = (problem.xp.ones(problem.x_shape, dtype=problem.xp.float64),)
        impl = problem.impl("pushforward", tangents=ones)

        def value_and_sum_of_columns(x, *ctx):
            value, (column,) = impl.value_and_pushforward(x, ones, *ctx)
            return value, column

        return Impl(
            sum_of_columns=lambda x, *ctx: impl.pushforward(x, ones, *ctx)[0],
            value_and_sum_of_columns=value_and_sum_of_columns,
        )

    register_operator(op, fallback=fallback, empty=lambda answer: None)

    @prepared_call(op, 0)
    def sum_of_columns(f, backend, x, *contexts, prep=None, out=None):
        return call(Call(op, f, backend, x, None, contexts, prep=prep, out=out))

    def prepare_sum_of_columns(f, backend, x, *contexts, strict=True):
        return prepare(Call(op, f, backend, x, None, contexts), strict)

    try:
        f = lambda x: x[1:] * x[:-1]  # noqa: E731
        x = np.array([1.0, 2.0, 3.0])
        expected = np.array([3.0, 5.0])  # rows of the Jacobian [[2, 1, 0], [0, 3, 2]] summed
        for backend in (di.AutoFiniteDiff(), di.AutoZeroForward()):
            prep = prepare_sum_of_columns(f, backend, x)
            got = sum_of_columns(f, backend, x, prep=prep)
            assert got.shape == (2,)
            if backend == di.AutoFiniteDiff():
                np.testing.assert_allclose(got, expected, rtol=1e-6)
            with pytest.raises(di.PreparationMismatchError, match="sum_of_columns"):
                sum_of_columns(f, backend, np.ones(4), prep=prep)
        np.testing.assert_allclose(sum_of_columns(f, di.AutoFiniteDiff(), x), expected, rtol=1e-6)
    finally:
        for table in (OPERATORS, RULES, FALLBACKS):
            table.pop("sum_of_columns", None)


def test_an_adapter_declaring_its_flags_the_old_way_still_works():
    with pytest.warns(DeprecationWarning, match="capabilities = Capabilities"):

        class OldStyle(CentralAdapter):
            mode = "reverse"
            inplace = True

    assert OldStyle.capabilities == CentralAdapter.capabilities.replace(
        mode="reverse", inplace=True
    )


def test_an_operator_a_third_party_registers_is_prepared_through_the_declared_table():
    class WithOwn(CentralAdapter):
        def prepare_third_party_operator(self, problem):
            return Impl(own=problem)

    adapter = WithOwn(AutoCentral())
    assert (
        WithOwn.preparations["third_party_operator"]
        is vars(WithOwn)["prepare_third_party_operator"]
    )
    assert adapter.prepare("third_party_operator", "problem").own == "problem"
    assert adapter.prepare("another_operator", "problem") is None
    assert "same_point" not in WithOwn.preparations


# -- what a registration keeps, replaces and finds ------------------------------------------------


@dataclasses.dataclass(frozen=True)
class AutoOther(di.AbstractBackend):
    """A second third-party selector, to see that one registration leaves the other's adapter."""


class InplaceCentral(CentralAdapter):
    capabilities = CentralAdapter.capabilities.replace(inplace=True)


def test_a_registration_keeps_its_selector_and_its_declarations(isolated_registry):
    di.register_backend(AutoOther, CentralAdapter)
    entry = registration(AutoOther())
    assert entry.selector is AutoOther
    assert entry.returns_zeros is False and entry.extra is None and entry.framework is None
    assert entry.test_backends == {}
    given = {"other": AutoOther()}
    di.register_backend(AutoOther, CentralAdapter, test_backends=given)
    assert registration(AutoOther()).test_backends == given
    assert registration(di.AutoZeroForward()).returns_zeros is True
    di.register_backend(AutoOther, CentralAdapter, returns_zeros=1)
    assert registration(AutoOther()).returns_zeros is True
    # the error for an unregistered selector lists the registered ones by name
    assert registry.registrations()[-1] is registration(AutoOther())
    assert registry.registrations()[0] is not registration(AutoOther())
    with pytest.raises(TypeError, match=r"AutoCentral\(\), .*AutoOther\(\), or one registered"):
        registration("no selector")


def test_a_new_registration_replaces_the_adapter_of_its_selector_only(isolated_registry):
    di.register_backend(AutoOther, CentralAdapter)
    other, central = registry.get_adapter(AutoOther()), registry.get_adapter(AutoCentral())
    assert registry.get_adapter(AutoOther()) is other  # built once per selector value
    assert not di.check_inplace(AutoOther())
    di.register_backend(AutoOther, InplaceCentral)
    assert type(registry.get_adapter(AutoOther())) is InplaceCentral
    assert di.check_inplace(AutoOther())
    assert registry.get_adapter(AutoCentral()) is central


def test_an_adapter_string_is_imported_on_first_use_naming_the_missing_module(isolated_registry):
    di.register_backend(AutoOther, f"{__name__}:InplaceCentral")
    assert type(registry.get_adapter(AutoOther())) is InplaceCentral
    di.register_backend(AutoOther, "no_such_package.inner:Adapter", extra="other")
    with pytest.raises(
        di.MissingBackendError,
        match=r"^AutoOther needs no_such_package, which is not installed: "
        r"pip install 'diffinterface\[other\]'$",
    ):
        registry.get_adapter(AutoOther())
    assert di.check_available(AutoOther()) is False
    di.register_backend(AutoOther, "no_such_package:Adapter")
    with pytest.raises(di.MissingBackendError, match=r"not installed: pip install diffinterface$"):
        registry.get_adapter(AutoOther())


def test_an_unhashable_object_given_as_the_backend_is_refused_by_name():
    with pytest.raises(TypeError, match=r"^backend: expected a backend selector .*got \[1\]"):
        di.gradient(lambda x: (x**2).sum(), [1], np.ones(2))


def test_the_last_registration_s_rules_serve_a_framework_even_once_asked(isolated_registry):
    assert framework_bridge("central") is None  # asked before any rules are registered
    di.register_backend(
        AutoOther, CentralAdapter, framework="central", differentiate_with=CentralRules()
    )
    first = framework_bridge("central")
    assert isinstance(first, CentralRules)
    assert framework_bridge("central") is first  # imported once
    di.register_backend(
        AutoTracedCentral, CentralAdapter, framework="central", differentiate_with=CENTRAL_RULES
    )
    assert framework_bridge("central") is CENTRAL_RULES
    assert registration(AutoTracedCentral()).differentiate_with is CENTRAL_RULES


def test_entry_points_register_a_selector_once_when_it_is_first_unknown(
    isolated_registry, monkeypatch
):
    import importlib.metadata

    groups, loads = [], []

    class Point:
        def load(self):
            def register():
                loads.append(1)
                di.register_backend(AutoOther, CentralAdapter)

            return register

    def entry_points(group):
        groups.append(group)
        return [Point()]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(registry, "_ENTRY_POINTS_LOADED", False)
    registry._REGISTRATIONS.pop(AutoOther, None)
    assert registration(AutoOther()).adapter is CentralAdapter
    assert groups == ["diffinterface.backends"] and loads == [1]

    @dataclasses.dataclass(frozen=True)
    class Unknown(di.AbstractBackend):
        pass

    with pytest.raises(TypeError, match="Unknown"):
        registration(Unknown())
    assert loads == [1]  # loaded once: an unknown selector does not load them again


def test_a_framework_s_capabilities_declare_both_modes_its_family_and_its_batches():
    caps = Capabilities.of_framework("torch", "torch tensor", inplace=True, mode="forward")
    assert caps == Capabilities(
        mode="forward",
        families=("numpy", "torch"),
        framework="torch",
        traced_array_name="torch tensor",
        bounds_sweeps=True,
        inplace=True,
    )
    plain = Capabilities.of_framework("jax", "JAX tracer")
    assert (plain.mode, plain.inplace, plain.all_families) == ("both", False, ("numpy", "jax"))
    assert Capabilities(traceable_families=("numpy", "jax")).all_families == ("numpy", "jax")


def test_work_of_a_framework_runs_in_the_context_its_rules_give_for_the_dtype(isolated_registry):
    from diffinterface.core.bridge import wide

    class WideRules(FrameworkBridge):
        def wide(self, dtype):
            return ("wide for", dtype)

    di.register_backend(
        AutoOther, CentralAdapter, framework="central", differentiate_with=WideRules()
    )
    assert wide("central", "float64") == ("wide for", "float64")
    assert wide("central", "float32") == ("wide for", "float32")


def test_rules_whose_module_is_missing_name_the_arrays_and_the_extra(isolated_registry):
    di.register_backend(
        AutoOther,
        CentralAdapter,
        extra="other",
        framework="central",
        differentiate_with="no_such_package.rules:RULES",
    )
    with pytest.raises(
        di.MissingBackendError,
        match=r"^central arrays needs no_such_package, which is not installed: "
        r"pip install 'diffinterface\[other\]'$",
    ):
        framework_bridge("central")
