"""What the scipy adaptors share: checks of their arguments and scipy's iterates as f's arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

import diffinterface as di

#: the docstring sections the adaptors share (``diffinterface.docstrings.shared_sections``)
SECTIONS = {
    "built_by": (
        ":func:`{factory}` checks its arguments and builds this object; call that\n"
        "rather than the constructor.\n"
        "\n"
        "Parameters\n"
        "----------\n"
        "f : callable\n"
        "    {f_doc}\n"
        "backend : AbstractBackend\n"
        "    The selector that {backend_does}.\n"
        "x0 : numpy.ndarray\n"
        "    The starting point, already checked (real floating, not empty); its\n"
        "    shape and dtype are what ``f`` receives.\n"
        "contexts : tuple of Constant or Cache\n"
        "    Extra arguments of ``f``, passed on every call.\n"
        "\n"
        "Attributes\n"
        "----------\n"
        "x0 : numpy.ndarray\n"
        "    The starting point, flat (what {caller} expects as its ``x0``)."
    ),
    "argument_errors": (
        "Raises\n"
        "------\n"
        "TypeError\n"
        "    ``f`` not callable, ``backend`` not a selector, ``{point}`` not real floating{also}.\n"
        "ValueError\n"
        "    ``{point}`` empty; later, {iterate} with a different number of values."
    ),
    "operator_parameters": (
        "Parameters\n"
        "----------\n"
        "f : callable\n"
        "    ``f(x, *contexts) -> y``, {output}.\n"
        "backend : selector\n"
        "    The backend that differentiates ``f``{twice}.\n"
        "x : array\n"
        "    The point; the products are taken there (same-point preparations).\n"
        "contexts : tuple\n"
        "    The extra arguments of ``f``.\n"
        "\n"
        "Attributes\n"
        "----------\n"
        "{attribute} : numpy.ndarray\n"
        "    {attribute_doc}\n"
        "x : array\n"
        "    The point, as given."
    ),
}

#: the dtypes scipy's iterates may be cast to without losing the meaning of the problem
REAL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def check_function(f: Any, name: str = "f") -> None:
    if not callable(f):
        raise TypeError(f"{name}: expected a callable; got {type(f).__name__}")


def check_backend(backend: Any) -> None:
    if not isinstance(backend, di.AbstractBackend):
        raise TypeError(
            f"backend: expected a backend selector such as di.AutoJAX(); got {type(backend).__name__}"
        )


def starting_point(x0: Any, name: str) -> np.ndarray:
    """A numpy copy of the starting point, refusing values scipy could not iterate on as given."""
    if not isinstance(x0, (np.ndarray, np.generic, float, list, tuple)) or isinstance(x0, bool):
        raise TypeError(
            f"{name}: expected a numpy array, a float or a list of floats (scipy iterates on numpy "
            f"arrays); got {type(x0).__name__}"
        )
    a = np.array(x0, copy=True)
    if a.dtype not in REAL_DTYPES:
        raise TypeError(
            f"{name}: expected real floating values (float32 or float64: the dtype f is called with); "
            f"got {a.dtype}; pass np.asarray({name}, dtype=np.float64)"
        )
    if a.size == 0:
        raise ValueError(
            f"{name}: expected at least one value; got an empty array of shape {a.shape}"
        )
    return a


class Point:
    """Converts scipy's flat iterates to arrays shaped and typed like the starting point."""

    def __init__(self, start: np.ndarray, name: str):
        self.shape = start.shape
        self.dtype = start.dtype
        self.size = start.size
        self.name = name

    def __call__(self, value: Any, name: str | None = None) -> np.ndarray:
        # scipy's iterate already as f takes it (a flat float64 start): the very array, with no
        # NumPy call, which would slow the framework's call that follows (measured on JAX's CPU
        # dispatch; benchmarks/bench_newton_cg.py)
        if (
            value.__class__ is np.ndarray
            and value.dtype is self.dtype
            and value.shape == self.shape
        ):
            return value
        name = name or self.name
        a = np.asarray(value)
        if a.size != self.size:
            raise ValueError(
                f"{name}: expected {self.size} values (the starting point has shape {self.shape}); "
                f"got shape {a.shape}"
            )
        if a.dtype.kind not in "fiu":
            raise TypeError(f"{name}: expected real numbers; got dtype {a.dtype}")
        # The same numpy type, dtype and shape on every call: strict preparations compare them.
        return a.astype(self.dtype, copy=False).reshape(self.shape)


def flat(a: Any) -> np.ndarray:
    """``a`` as the flat numpy array scipy expects: a flat numpy array itself (a result, the
    caller's own), anything else converted and flattened."""
    if a.__class__ is np.ndarray and a.ndim == 1:
        return a
    return np.asarray(a).reshape(-1)


class LastPoint:
    """Remembers results at the last point, keyed on a copy of its bytes (scipy may reuse its arrays).

    The bytes, not the values, are compared: the same bits are the same point (a NaN is the NaN it
    was; a -0.0 where 0.0 was is computed again), and comparing bytes costs less per call than a
    NumPy comparison and reduction, which scipy's many ``hessp`` calls at one iterate pay each time.
    """

    def __init__(self) -> None:
        self.key: tuple | None = None
        self.results: Any = None

    def get(self, x: Any) -> Any:
        key = self.key
        if key is None:
            return None
        a = np.asarray(x)
        if (a.shape, a.dtype) == key[:2] and a.tobytes() == key[2]:
            return self.results
        return None

    def put(self, x: Any, results: Any) -> Any:
        a = np.asarray(x)
        self.key = (a.shape, a.dtype, a.tobytes())
        self.results = results
        return results
