"""Selectors and the other frozen values: built once per distinct arguments, validated every time."""

import inspect

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core.operator_table import Operator
from diffinterface.frozen import Frozen, FrozenInstanceError


def test_equal_arguments_give_the_same_selector():
    assert di.AutoJAX() is di.AutoJAX()
    assert di.AutoJAX(mode="forward") is di.AutoJAX(mode="forward")
    assert di.AutoFiniteDiff("forward") is di.AutoFiniteDiff("forward")
    assert di.SecondOrder(di.AutoJAX(), di.AutoTorch()) is di.SecondOrder(
        di.AutoJAX(), di.AutoTorch()
    )
    # another spelling of the same value is another object, but equal, with one hash
    positional, keyword = di.AutoJAX("forward"), di.AutoJAX(mode="forward")
    assert positional == keyword and hash(positional) == hash(keyword)
    assert di.AutoJAX(mode="forward") != di.AutoJAX(mode="reverse")


def test_a_selector_holding_an_executor_does_not_keep_it_alive():
    import gc
    import weakref
    from concurrent.futures import ThreadPoolExecutor

    executor = ThreadPoolExecutor(1)
    alive = weakref.ref(executor)
    backend = di.AutoFiniteDiff(workers=executor)
    assert di.SecondOrder(backend, backend) == di.SecondOrder(backend, backend)
    executor.shutdown()
    del executor, backend
    gc.collect()
    assert alive() is None


def test_a_kept_value_never_skips_validation_of_an_equal_argument_of_another_type():
    assert di.AutoJAX(jit=True).jit is True
    with pytest.raises(TypeError, match=r"AutoJAX\(jit=...\) expected True or False; got 1"):
        di.AutoJAX(jit=1)  # 1 == True and hash(1) == hash(True): the type is part of the key
    with pytest.raises(TypeError, match="expected True or False; got 1"):
        di.AutoJAX(None, 1)
    with pytest.raises(ValueError, match="mode"):
        di.AutoTorch(mode="sideways")


def test_unhashable_arguments_and_identity_classes_are_built_afresh():
    pattern = np.eye(3, dtype=bool)
    first, second = di.KnownSparsity(pattern), di.KnownSparsity(pattern)
    assert first is not second and first == second and hash(first) == hash(second)
    assert repr(first) == "KnownSparsity(shape=(3, 3), nnz=3)"
    row = dict(name="x", order=1, seeds=None, methods=("a", "b"), valued_returns=("value", "first"))
    rows = [Operator(**row, plain_returns="first") for _ in range(2)]
    assert rows[0] is not rows[1] and rows[0] != rows[1]  # eq=False: compared by identity


def test_frozen_values_refuse_assignment_and_show_their_fields():
    backend = di.AutoJAX()
    with pytest.raises(FrozenInstanceError):
        backend.mode = "forward"  # type: ignore[misc]
    assert str(inspect.signature(di.AutoFiniteDiff)) == (
        "(method: 'str' = 'central', rel_step: 'Optional[float]' = None, abs_step: 'Optional[float]' = None, "
        "*, batch_size: 'Optional[int]' = None, memory_budget: 'Optional[int]' = None, workers: 'Any' = None) -> None"
    )

    class Point(Frozen):
        x: float
        y: float = 0.0

    assert Point(1.0) is Point(1.0) and Point(1.0) == Point(x=1.0, y=0.0)
    with pytest.raises(TypeError, match="Point"):
        Point()


def test_a_selector_written_inline_serves_the_prepared_call():
    f = lambda x: (x**2).sum()  # noqa: E731
    prep = di.prepare_gradient(f, di.AutoFiniteDiff(), np.ones(3))
    g = di.gradient(f, di.AutoFiniteDiff(), np.array([1.0, 2.0, 3.0]), prep=prep)
    np.testing.assert_allclose(g, [2.0, 4.0, 6.0], rtol=1e-6)


def test_a_selector_without_options_names_what_it_was_given_and_the_way_around():
    with pytest.raises(
        TypeError,
        match=r"AutoAutograd\(mode=...\): AutoAutograd takes only batch_size= and memory_budget=; "
        r"got mode='forward'\. It picks forward or reverse mode per operator",
    ):
        di.AutoAutograd(mode="forward")
    with pytest.raises(
        TypeError, match=r"AutoAutograd takes only batch_size= and memory_budget=; got \[1\]"
    ):
        di.AutoAutograd([1])  # unhashable: not looked up, refused all the same
    with pytest.raises(
        TypeError, match=r"AutoZeroReverse\(...\): AutoZeroReverse takes no arguments; got 'x'"
    ):
        di.AutoZeroReverse("x")
    assert di.AutoAutograd() is di.AutoAutograd()
