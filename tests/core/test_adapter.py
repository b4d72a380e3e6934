"""The adapter contract's base (core/adapter.py): Impl, the declared table of preparations, the
legacy class attributes, the mode a fallback takes, and the defaults every adapter inherits."""

from __future__ import annotations

import dataclasses
import warnings
from types import SimpleNamespace

import numpy as np

import diffinterface as di
from diffinterface.core import Adapter, Capabilities, Impl


@dataclasses.dataclass(frozen=True)
class AutoPlain(di.AbstractBackend):
    mode: object = None


def test_an_impl_holds_its_methods_and_lists_them():
    impl = Impl(gradient=abs, value_and_gradient=divmod)
    assert impl.gradient is abs and impl.value_and_gradient is divmod
    assert repr(impl) == "Impl(gradient, value_and_gradient)"
    assert repr(Impl()) == "Impl()"
    valued = Impl.from_valued("jacobian", lambda x, c: (x + c, 2 * x, 3 * x))
    assert valued.jacobian(1.0, 10.0) == 3.0
    assert valued.value_and_jacobian(1.0, 10.0) == (11.0, 2.0, 3.0)


def test_a_plain_adapter_is_its_own_outer_and_inner_and_names_its_backend():
    adapter = Adapter(AutoPlain())
    assert adapter.backend == AutoPlain()
    assert adapter.outer is adapter and adapter.inner is adapter
    assert adapter.parts() == (adapter,)
    assert repr(adapter) == "<Adapter for AutoPlain(mode=None)>"


def test_the_table_of_preparations_holds_each_operator_the_class_defines_the_closest_first():
    # the classes are made here, in the test: the table is filled at class creation
    class Mixin:
        def prepare_gradient(self, problem):
            return "mixin gradient"

        def prepare_hessian(self, problem):
            return "mixin hessian"

    class Declared(Mixin, Adapter):
        def prepare_hessian(self, problem):
            return ("own hessian", self, problem)

        def prepare_same_point(self, operator, problem):  # a hook, not an operator
            return None

        def prepare_evaluation(self, problem):
            return problem.f

    assert dict(Adapter.preparations) == {}
    assert set(Declared.preparations) == {"gradient", "hessian"}
    assert Declared.preparations["hessian"] is vars(Declared)["prepare_hessian"]
    adapter = Declared(AutoPlain())
    assert adapter.prepare("hessian", "problem") == ("own hessian", adapter, "problem")
    assert adapter.prepare("gradient", "problem") == "mixin gradient"
    assert adapter.prepare("jacobian", "problem") is None


def test_legacy_class_attributes_are_folded_in_with_a_warning_naming_them():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        class Old(Adapter):
            mode = "reverse"
            inplace = True

    (warning,) = caught
    assert warning.category is DeprecationWarning
    assert str(warning.message) == (
        "Old: declare mode, inplace in one value, capabilities = Capabilities(mode=..., "
        "inplace=...) (diffinterface.core.Capabilities); class attributes are read once, at "
        "class creation"
    )
    assert Old.capabilities == Capabilities(mode="reverse", inplace=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class WithProperty(Adapter):  # a property of that name is no declaration
            @property
            def mode(self):
                return "reverse"

    assert WithProperty.capabilities == Capabilities()


def _problem(x_size, y_size):
    return SimpleNamespace(x_size=x_size, spec=SimpleNamespace(size=y_size))


def test_a_fallback_takes_the_declared_mode_the_selector_s_or_the_operator_s():
    class Forward(Adapter):
        capabilities = Capabilities(mode="forward")

    class Both(Adapter):
        capabilities = Capabilities(mode="both", square_jacobian_mode="reverse")

    assert Forward(AutoPlain(mode="reverse")).choose_mode("gradient", _problem(3, 1)) == "forward"
    assert Both(AutoPlain(mode="forward")).choose_mode("gradient", _problem(3, 1)) == "forward"
    both = Both(AutoPlain())
    assert both.choose_mode("gradient", None) == "reverse"
    assert both.choose_mode("pushforward", None) == "forward"
    assert both.choose_mode("jacobian", _problem(2, 5)) == "forward"  # tall
    assert both.choose_mode("jacobian", _problem(5, 2)) == "reverse"  # wide
    assert both.choose_mode("jacobian", _problem(4, 4)) == "reverse"  # square: declared
    square_forward = Adapter(AutoPlain())
    square_forward.capabilities = Capabilities(mode="both")
    assert square_forward.choose_mode("jacobian", _problem(4, 4)) == "forward"


def test_the_defaults_every_adapter_inherits():
    class Trees(Adapter):
        capabilities = Capabilities(pytrees=frozenset({"gradient"}))

    adapter = Trees(AutoPlain())
    assert adapter.takes_tree("gradient", None) and not adapter.takes_tree("jacobian", None)
    x = np.array([1.0, 2.0])
    seen = []

    def f(x, c):
        seen.append(x)
        x[0] = 100.0  # f may write into its argument: the user's x is not changed
        return (x * c).astype(np.float32)

    problem = SimpleNamespace(f=f, x=x, ctx=(3.0,))
    spec = adapter.output_spec(problem)
    assert (spec.shape, spec.dtype) == ((2,), "float32")
    assert seen[0] is not x and x.tolist() == [1.0, 2.0]
    assert adapter.prepare_evaluation(problem) is f
    assert adapter.is_traced_array_error(TypeError()) is False
    assert adapter.primal_value(x) is x
    for hook in (adapter.differentiable_value_and_gradient, adapter.prepare_pushforward):
        assert hook(problem) is None


def test_the_first_derivative_hook_of_each_operator():
    class Hooks(Adapter):
        def differentiable_value_and_gradient(self, problem):
            return ("vg", problem)

        def differentiable_value_and_derivative(self, problem):
            return ("vd", problem)

    hooks = Hooks(AutoPlain())
    assert hooks.differentiable_first_derivative("gradient", "p") == ("vg", "p")
    assert hooks.differentiable_first_derivative("derivative", "p") == ("vd", "p")
    assert Adapter(AutoPlain()).differentiable_first_derivative("gradient", "p") is None
