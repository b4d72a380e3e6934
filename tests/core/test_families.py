"""The Family protocol: one module per array family, a fifth family added from outside, and the
protocol's conversions, writes and sparse matrices on every built-in family."""

from __future__ import annotations

import pathlib
import re
import types

import numpy as np
import pytest

import diffinterface as di
from diffinterface.families import (
    FAMILIES,
    Family,
    array_namespace,
    as_numpy,
    describe,
    family_of,
    is_array,
    register_family,
    sparse_family,
    sparse_format,
    unregister_family,
    write_out,
)
from diffinterface.families.autograd import AutogradFamily
from diffinterface.families.jax import JaxFamily
from diffinterface.families.numpy import NumpyFamily
from diffinterface.families.tensorflow import TensorFlowFamily
from diffinterface.families.mlx import MLXFamily
from diffinterface.families.torch import TorchFamily

PACKAGE = pathlib.Path(di.__file__).parent
CONCRETE = ("numpy", "torch", "jax")


# -- a fifth family, defined here, outside the package -------------------------------------------


class ToyArray:
    """An array of a family diffinterface does not ship: numpy values behind another class."""

    __module__ = "toy_arrays"

    def __init__(self, values):
        self.values = np.asarray(values)

    @property
    def shape(self):
        return self.values.shape

    @property
    def dtype(self):
        return self.values.dtype


TOY_NAMESPACE = types.SimpleNamespace(__name__="toy_namespace")


class ToyFamily(Family):
    name = "toy"
    modules = ("toy_arrays",)
    namespace_module = "toy_namespace"
    precedence = 10  # it traces every other family

    def namespace(self):
        return TOY_NAMESPACE

    def from_numpy(self, a, like):
        return ToyArray(a)

    def to_numpy(self, a):
        return a.values


@pytest.fixture
def toy():
    seen_before = family_of(ToyArray([1.0]))  # cached as unknown: registering must forget it
    family = register_family(ToyFamily())
    yield family, seen_before
    unregister_family("toy")


def test_a_fifth_family_is_one_register_family_call_and_is_detected(toy):
    family, seen_before = toy
    a = ToyArray([1.0, 2.0])
    assert seen_before == "unknown"
    assert FAMILIES["toy"] is family
    assert family_of(a) == "toy" and is_array(a)
    assert describe(a) == "toy float64 array of shape (2,)"
    assert array_namespace(a) is TOY_NAMESPACE
    assert (
        array_namespace(np.ones(2), a, 1.0) is TOY_NAMESPACE
    )  # its precedence decides mixed inputs
    np.testing.assert_array_equal(as_numpy(a), [1.0, 2.0])


def test_a_fifth_family_gets_the_generic_parts_of_the_protocol(toy):
    import torch

    a = ToyArray([1.0, 2.0])
    converted = FAMILIES["torch"].from_dlpack(a)  # through numpy
    assert isinstance(converted, torch.Tensor) and converted.dtype == torch.float64
    assert FAMILIES["numpy"].from_dlpack(a).tolist() == [1.0, 2.0]
    assert family_of(FAMILIES["toy"].from_dlpack(np.ones(2))) == "toy"
    with pytest.raises(
        ValueError,
        match="out: toy arrays are immutable and cannot be written in place; call without out=",
    ):
        write_out(ToyArray([0.0, 0.0]), a)


def test_unregistering_a_family_forgets_its_arrays(toy):
    unregister_family("toy")
    assert family_of(ToyArray([1.0])) == "unknown"
    register_family(ToyFamily())  # the fixture unregisters it


def test_register_family_refuses_what_is_no_family():
    with pytest.raises(
        TypeError,
        match="family: expected an instance of a diffinterface.families.Family subclass; got str",
    ):
        register_family("toy")


# -- the table is the family modules -------------------------------------------------------------


def test_the_table_holds_one_instance_of_each_family_module_in_order():
    assert list(FAMILIES) == ["numpy", "torch", "jax", "autograd", "tensorflow", "mlx"]
    classes = (NumpyFamily, TorchFamily, JaxFamily, AutogradFamily, TensorFlowFamily, MLXFamily)
    assert all(isinstance(FAMILIES[c.name], c) for c in classes)


def test_no_family_name_is_branched_on_in_the_sparse_modules_scipy_and_modules():
    files = [
        PACKAGE / "wrappers" / "sparse" / f"{name}.py"
        for name in ("detection", "introspection", "matrices", "coloring")
    ]
    files += [*(PACKAGE / "scipy").glob("*.py"), PACKAGE / "backends" / "torch" / "modules.py"]
    literal = re.compile(r'"(numpy|torch|jax|autograd)"')
    assert len(files) == 10
    found = [
        f"{path.name}:{i}"
        for path in files
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert found == []


def test_every_module_of_families_is_under_400_lines():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in (PACKAGE / "families").rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 400
    }
    assert long == {}


# -- conversions ---------------------------------------------------------------------------------


def _in(family, values):
    return FAMILIES[family].from_dlpack(np.asarray(values))


@pytest.mark.parametrize("source", CONCRETE)
@pytest.mark.parametrize("target", CONCRETE)
def test_from_dlpack_keeps_values_and_float64(source, target):
    a = _in(source, np.arange(3.0))
    b = FAMILIES[target].from_dlpack(a)
    assert family_of(b) == target and str(b.dtype).endswith("float64")
    np.testing.assert_array_equal(as_numpy(b), np.arange(3.0))
    assert FAMILIES[target].from_dlpack(b) is b


@pytest.mark.parametrize("family", CONCRETE)
def test_to_and_from_numpy_cast_ravel_and_stack(family):
    arrays = FAMILIES[family]
    like = _in(family, np.zeros(1))
    a = arrays.from_numpy(np.arange(4.0).reshape(2, 2), like)
    assert family_of(a) == family
    np.testing.assert_array_equal(arrays.to_numpy(a), np.arange(4.0).reshape(2, 2))
    assert str(arrays.cast(a, "float32").dtype).endswith("float32")
    flat = arrays.ravel([a, arrays.cast(a, "float32")], "float64")
    assert str(flat.dtype).endswith("float64")
    np.testing.assert_array_equal(as_numpy(flat), np.concatenate([np.arange(4.0)] * 2))
    assert tuple(arrays.stack([a, a], axis=1).shape) == (2, 2, 2)
    assert arrays.device(a) is not None


def test_writes_into_buffers_where_the_family_can():
    import torch

    out = np.zeros(2)
    assert FAMILIES["numpy"].write(out, np.ones(2)) is None and out.tolist() == [1.0, 1.0]
    assert FAMILIES["numpy"].write([0.0], np.ones(1)) == "expected a writable numpy array; got list"
    tensor = torch.zeros(2)
    assert FAMILIES["torch"].write(tensor, torch.ones(2)) is None and tensor.tolist() == [1.0, 1.0]
    assert FAMILIES["jax"].write is None and FAMILIES["autograd"].write is None


# -- sparse matrices -----------------------------------------------------------------------------

ROWS, COLS, SHAPE = np.array([0, 0, 2], dtype=np.int32), np.array([1, 2, 0], dtype=np.int32), (3, 3)
DENSE = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [3.0, 0.0, 0.0]])


@pytest.mark.parametrize("family", CONCRETE)
def test_sparse_builder_sparse_format_and_coordinates(family):
    arrays = FAMILIES[family]
    like = _in(family, np.zeros(1))
    matrix = arrays.sparse_builder(ROWS, COLS, SHAPE, like)(_in(family, [1.0, 2.0, 3.0]))
    assert (
        sparse_family(matrix) is arrays
        and sparse_format(matrix) is not None
        and arrays.is_sparse(matrix)
    )
    values, rows, cols = arrays.sparse_coordinates(matrix)
    dense = np.zeros(SHAPE)
    dense[rows, cols] = values
    np.testing.assert_array_equal(dense, DENSE)
    scatter = arrays.compiled(arrays.dense_builder(ROWS, COLS, SHAPE, (9,), like), like)
    scattered = scatter(_in(family, [1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(as_numpy(scattered), DENSE.reshape(-1))
    assert sparse_format(like) is None and sparse_format("a") is None


@pytest.mark.parametrize("family", ["numpy", "torch"])
def test_sparse_out_writes_the_values_of_the_same_pattern(family):
    arrays = FAMILIES[family]
    build = arrays.sparse_builder(ROWS, COLS, SHAPE, _in(family, np.zeros(1)))
    out, result = build(_in(family, [0.0, 0.0, 0.0])), build(_in(family, [1.0, 2.0, 3.0]))
    assert write_out(out, result) is out
    np.testing.assert_array_equal(as_numpy(arrays.sparse_values(out)), [1.0, 2.0, 3.0])
    other = arrays.sparse_builder(ROWS, COLS[::-1].copy(), SHAPE, _in(family, np.zeros(1)))
    with pytest.raises(
        ValueError, match="with the prepared pattern; got a matrix with another pattern"
    ):
        write_out(other(_in(family, [0.0, 0.0, 0.0])), result)


def test_jax_sparse_matrices_are_refused_as_out():
    build = FAMILIES["jax"].sparse_builder(ROWS, COLS, SHAPE, _in("jax", np.zeros(1)))
    with pytest.raises(
        ValueError, match=r"out: JAX sparse matrices \(BCOO\) are immutable and cannot be written"
    ):
        write_out(build(_in("jax", [0.0, 0.0, 0.0])), build(_in("jax", [1.0, 2.0, 3.0])))
