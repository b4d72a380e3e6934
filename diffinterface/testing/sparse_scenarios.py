"""The kit's sparse scenarios: Jacobians and Hessians whose true structure is written by hand.

Each :class:`SparseScenario` is a function written against the array API, a
point, and the entries of its derivative that can be nonzero;
:mod:`diffinterface.testing.sparse` checks ``AutoSparse(backend)`` on them.

    >>> [s.name for s in sparse_scenarios("hessian")]
    ['hessian-banded', 'hessian-block_diagonal', 'hessian-arrow', 'hessian-random']
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from ..families import array_namespace


@dataclasses.dataclass(frozen=True, eq=False)
class SparseScenario:
    """A jacobian or hessian of ``f`` at ``x`` (numpy float64) whose true structure is ``structure``.

    ``structure`` is a boolean ``(m, n)`` array over flattened indices: True
    where the derivative can be nonzero at some point.
    """

    operator: str
    f: Callable
    x: Any
    structure: Any
    name: str
    #: the most products a star bicoloring (``MixedMode``) may take, when the scenario bounds it
    max_bidirectional_colors: int | None = None

    def __repr__(self):
        return f"<SparseScenario {self.name}>"


def _n(k=12):
    return np.linspace(0.3, 1.4, k)


# -- Jacobians -----------------------------------------------------------------------------------


def _banded():
    """y_i = x_i**2 * x_{i-1} - sin(x_{i+1}): three bands."""

    def f(x):
        xp = array_namespace(x)
        return x[1:-1] ** 2 * x[:-2] - xp.sin(x[2:])

    x = _n()
    m = x.size - 2
    structure = np.zeros((m, x.size), dtype=bool)
    for i in range(m):
        structure[i, i : i + 3] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-banded")


_BLOCK = np.array([[1.0, -2.0, 0.5], [0.3, 1.0, 2.0], [-1.0, 0.7, 1.0]])


def _block_diagonal():
    """Blocks of 3: y_b = sin(M @ x_b)."""

    def f(x):
        xp = array_namespace(x)
        blocks = xp.reshape(x, (-1, 3))
        return xp.reshape(xp.sin(blocks @ xp.asarray(_BLOCK.T)), (-1,))

    x = _n()
    structure = np.kron(np.eye(x.size // 3, dtype=bool), np.ones((3, 3), dtype=bool))
    return SparseScenario("jacobian", f, x, structure, "jacobian-block_diagonal")


def _concat(xp, parts):
    concatenate = getattr(xp, "concatenate", None) or xp.concat
    return concatenate(parts)


def _arrow():
    """y = [x_1..x_{n-1} times x_0, sum(x**2)]: a dense first column and a dense last row."""

    def f(x):
        xp = array_namespace(x)
        return _concat(xp, (x[1:] * x[0], xp.reshape(xp.sum(x**2), (1,))))

    x = _n()
    n = x.size
    structure = np.zeros((n, n), dtype=bool)
    structure[np.arange(n - 1), np.arange(1, n)] = True
    structure[:, 0] = True
    structure[-1, :] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-arrow")


_RANDOM = np.random.default_rng(7)
_RANDOM_I = _RANDOM.integers(0, 12, size=(10, 2))


def _arrowhead():
    """y_0 = sum(sin(x)), y_i = x_i**2 + x_0 * x_i: a dense row, a dense column and the diagonal
    (one-sided colorings need one color per column or row; a star bicoloring needs three)."""

    def f(x):
        xp = array_namespace(x)
        return _concat(xp, (xp.reshape(xp.sum(xp.sin(x)), (1,)), x[1:] ** 2 + x[0] * x[1:]))

    x = _n()
    n = x.size
    structure = np.eye(n, dtype=bool)
    structure[0, :] = structure[:, 0] = True
    return SparseScenario(
        "jacobian", f, x, structure, "jacobian-arrowhead", max_bidirectional_colors=4
    )


def _random():
    """y_k = x_i * exp(x_j) for random pairs (i, j): a random pattern."""
    first, second = _RANDOM_I[:, 0], _RANDOM_I[:, 1]

    def f(x):
        xp = array_namespace(x)
        # xp.take, not x[first]: integer-array indexing is not in every family (TensorFlow's
        # tensors)
        return xp.take(x, xp.asarray(first)) * xp.exp(xp.take(x, xp.asarray(second)))

    x = _n()
    structure = np.zeros((len(first), x.size), dtype=bool)
    structure[np.arange(len(first)), first] = True
    structure[np.arange(len(first)), second] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-random")


def _dense_row():
    """y = [sum(x**3), x_1 * x_0, ..., x_{n-1} * x_{n-2}]: one dense row over a band."""

    def f(x):
        xp = array_namespace(x)
        return _concat(xp, (xp.reshape(xp.sum(x**3), (1,)), x[1:] * x[:-1]))

    x = _n()
    n = x.size
    structure = np.zeros((n, n), dtype=bool)
    structure[0] = True
    structure[np.arange(1, n), np.arange(n - 1)] = True
    structure[np.arange(1, n), np.arange(1, n)] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-dense_row")


def _dense_column():
    """y = x * x_0 + x**2: the diagonal and one dense column."""

    def f(x):
        return x * x[0] + x**2

    x = _n()
    structure = np.eye(x.size, dtype=bool)
    structure[:, 0] = True
    return SparseScenario("jacobian", f, x, structure, "jacobian-dense_column")


# -- Hessians ------------------------------------------------------------------------------------


def _chain():
    """The chain energy sum(phi1(x_{i+1} - x_i) + phi2(x_{i+2} - x_i)): a pentadiagonal Hessian."""

    def f(x):
        xp = array_namespace(x)
        r1, r2 = x[1:] - x[:-1], x[2:] - x[:-2]
        return xp.sum(r1**2 + r1**4 + xp.exp(-r1)) + xp.sum(-0.1 * r2**3)

    x = _n()
    n = x.size
    i, j = np.indices((n, n))
    return SparseScenario("hessian", f, x, np.abs(i - j) <= 2, "hessian-banded")


def _block_hessian():
    """sum over blocks of 3 of (x_b . M x_b)**2: a block-diagonal Hessian."""

    def f(x):
        xp = array_namespace(x)
        blocks = xp.reshape(x, (-1, 3))
        return xp.sum(xp.sum(blocks * (blocks @ xp.asarray(_BLOCK.T)), axis=1) ** 2)

    x = _n()
    structure = np.kron(np.eye(x.size // 3, dtype=bool), np.ones((3, 3), dtype=bool))
    return SparseScenario("hessian", f, x, structure, "hessian-block_diagonal")


def _arrow_hessian():
    """x_0 * sum(x_1.. **2) + sum(cos(x)): a dense first row and column over the diagonal."""

    def f(x):
        xp = array_namespace(x)
        return x[0] * xp.sum(x[1:] ** 2) + xp.sum(xp.cos(x))

    x = _n()
    structure = np.eye(x.size, dtype=bool)
    structure[0, :] = structure[:, 0] = True
    return SparseScenario("hessian", f, x, structure, "hessian-arrow")


def _random_hessian():
    """sum of sin(x_i * x_j) over random pairs: a random symmetric pattern."""
    first, second = _RANDOM_I[:, 0], _RANDOM_I[:, 1]

    def f(x):
        xp = array_namespace(x)
        return xp.sum(xp.sin(xp.take(x, xp.asarray(first)) * xp.take(x, xp.asarray(second))))

    x = _n()
    structure = np.zeros((x.size, x.size), dtype=bool)
    for i, j in zip(first, second):
        structure[i, i] = structure[j, j] = structure[i, j] = structure[j, i] = True
    return SparseScenario("hessian", f, x, structure, "hessian-random")


def sparse_scenarios(operators=None):
    """The sparse scenarios (all, or those of ``operators``: "jacobian", "hessian")."""
    scenarios = [
        _banded(),
        _block_diagonal(),
        _arrow(),
        _random(),
        _dense_row(),
        _dense_column(),
        _arrowhead(),
        _chain(),
        _block_hessian(),
        _arrow_hessian(),
        _random_hessian(),
    ]
    return [s for s in scenarios if operators is None or s.operator in operators]
