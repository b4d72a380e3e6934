"""AutoTorch inside an outer derivative: results connected to the caller's torch graph, and operators that
run under ``torch.func``'s transforms.

The fast recipes (``adapter.py``, ``jacobians.py``, ``second_order.py``)
differentiate a detached alias of x with contexts detached and return results
without a graph: right for an answer, wrong as a building block. When a call
takes part in an outer derivative, the operator runs instead as
``torch.func``'s transforms of f (:mod:`.func_recipes`), which compose with an
outer ``torch.autograd`` (create_graph semantics) and with ``torch.func``'s own
``vmap``, ``grad``, ``jacrev`` and ``jacfwd`` (per-sample gradients); a
gradient under an outer ``torch.autograd`` alone is a backward pass with
``create_graph=True``, which connects the same results for less. A call
takes part in an outer derivative when

- it runs inside a ``torch.func`` transform (a functorch level is active) or is
  traced by ``torch.compile``, or
- torch's grad mode is on and x (a leaf of a pytree x), a seed or a context
  requires grad, or f closes over a tensor that requires grad.

The last is decided at preparation from the one evaluation the adapter makes
anyway (``graph_watch.py``): whether the output's graph reaches a leaf other
than x's (a model's parameters, say). Walking the graph once there, rather than
running every backward pass with ``create_graph=True``, keeps a plain call at
the cost of the fast recipe plus a few attribute reads: the flag, the grad
mode, ``x.requires_grad``. Under ``torch.no_grad()`` every call takes the fast
recipe and gets detached results, as ``torch.autograd.grad`` without
``create_graph`` would give.
"""

from __future__ import annotations

import torch

from ...core import Impl
from ...core.operator_table import OPERATORS
from .func_recipes import nested_impl

_Tensor = torch.Tensor
_current_level = torch._C._functorch.maybe_current_level
_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled


def inside_transform():
    """True inside a ``torch.func`` transform (``vmap``, ``grad``, ``jacrev``, ``jacfwd``, ``jvp``...)
    or while ``torch.compile`` traces the call (it traces ``torch.func``'s transforms, not forward-mode
    dual numbers)."""
    return _current_level() is not None or _compiling()


def _records(value):
    """True when ``value`` (a context or seed: a tensor, or a dict, list or tuple of them) requires grad."""
    if isinstance(value, _Tensor):
        return value.requires_grad
    if isinstance(value, dict):
        return any(_records(leaf) for leaf in value.values())
    if isinstance(value, (list, tuple)):
        return any(_records(leaf) for leaf in value)
    return False


def closes_over_graph(problem):
    """True when f's output, learned at preparation, reaches a tensor that requires grad beyond x's."""
    return getattr(problem.spec, "beyond_x", False)


def may_nest(problem):
    """True when a call at ``problem``'s own arguments would take part in an outer derivative."""
    if problem.family != "torch":
        return False
    if inside_transform():
        return True
    leaves = [problem.x] if problem.tree is None else problem.tree.array_leaves(problem.x)
    inputs = [problem.ctx[i] for i in _inputs_among_contexts(problem)]
    return (
        _records(leaves) or _records(inputs) or _records(problem.tangents or ())
    ) or closes_over_graph(problem)


def _inputs_among_contexts(problem):
    """Positions of the contexts that are inputs: not a ``di.Cache``, a buffer f writes into (which
    then requires grad itself)."""
    return [i for i, c in enumerate(problem.contexts) if c.kind != "Cache"]


def _nesting_test(problem, seeded):
    """``nests(x, rest) -> bool`` for one preparation's calls (``rest``: the seeds, if ``seeded``,
    then the contexts)."""
    closure = closes_over_graph(problem)
    tree = problem.tree
    if tree is not None:
        leaves_of = tree.array_leaves

        def x_records(x):
            return any(leaf.requires_grad for leaf in leaves_of(x))
    else:

        def x_records(x):
            return x.requires_grad

    first = 1 if seeded else 0  # the seeds come before the contexts
    inputs = tuple(range(first)) + tuple(first + i for i in _inputs_among_contexts(problem))
    every = inputs == tuple(range(first + len(problem.ctx)))

    def nests(x, rest):
        if _current_level() is not None or _compiling():
            return True
        if not _grad_enabled():
            return False
        if closure or x_records(x):
            return True
        if every:
            return bool(rest) and _records(rest)
        return any(_records(rest[i]) for i in inputs)

    return nests


def nestable(adapter, operator, problem, prepare):
    """The :class:`~diffinterface.core.Impl` of ``operator``: the fast one from ``prepare``, switching
    per call to the ``torch.func`` one when the call takes part in an outer derivative (see the
    module docstring). Prepared inside a transform, only the latter (the fast recipes' preparation
    marks tensors ``requires_grad``, which ``torch.func`` refuses there)."""
    if problem.family != "torch":
        return prepare(operator, problem)
    if inside_transform():
        return nested_impl(adapter, operator, problem, inside=True)
    fast = prepare(operator, problem)
    if fast is None:  # the core builds it from the primitives, which switch themselves
        return None
    nested = nested_impl(adapter, operator, problem, inside=False)
    nests = _nesting_test(problem, OPERATORS[operator].seeds is not None)
    methods = {}
    for name in OPERATORS[operator].methods:
        methods[name] = _switch(getattr(fast, name), getattr(nested, name), nests)
    for name, value in vars(fast).items():  # anything else the fast Impl carries (its batch size)
        methods.setdefault(name, value)
    return Impl(**methods)


def _switch(fast, nested, nests):
    def method(x, *rest):
        if nests(x, rest):
            return nested(x, *rest)
        return fast(x, *rest)

    return method
