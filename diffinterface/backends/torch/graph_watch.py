"""The output's shape, learned at preparation, and partial graph breaks found on the way: f converting
or detaching a tensor computed from x.

torch differentiates whatever path its graph still has, so ``x[0].item() * x.sum()``
or ``(x.detach() * x).sum()`` gives a gradient that is wrong without any error:
the output still depends on x, through the other factor. The adapter's one
evaluation of ``f`` at preparation (for the output's shape) runs with x
recording gradients under :class:`_GraphBreakWatch`, a
``torch.overrides.TorchFunctionMode`` that sees every call f makes on a tensor
and notes the first that leaves the graph from a tensor of x's graph (one whose
autograd history reaches x):

- conversions to Python numbers or lists: ``.item()``, ``.tolist()``,
  ``float()``, ``int()``, ``complex()``, use as an index (``__index__``);
- ``.detach()``, ``.detach_()``, ``.data``, and ``torch.tensor(t)`` /
  ``t.new_tensor(...)`` of such a tensor (copies without history).

The evaluation then raises :class:`~diffinterface.GraphBreakError` naming what
f called. Prepared calls run f without the mode and pay nothing; unprepared
calls prepare afresh, so they are checked too.

What is not detected: ``.numpy()`` and numpy functions on x (torch itself refuses
them on a tensor that records gradients: a ``TracedArrayError``); ``bool()`` and
comparisons (a branch taken on x's value leaves the derivative of the branch
right); breaks on a path f takes only at other points than the x it was prepared
at; breaks where f does not record (under ``torch.no_grad()``, in the ``forward`` of a
``torch.autograd.Function``, which defines its own derivative) or inside code that
torch runs on f's behalf (a ``__torch_function__``
override's own calls, C++ extensions, ``di.DifferentiateWith``, ``torch.autograd.Function`` bodies);
functions of two arguments ``f(y, x)`` (not evaluated at preparation). A deliberate stop-gradient by ``.detach()`` is refused
too: pass the stopped value as ``di.Constant(value)`` after x.

    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: x[0].item() * x.sum(), di.AutoTorch(), np.ones(2))
    Traceback (most recent call last):
    ...
    diffinterface.errors.GraphBreakError: f: ... f called .item() on a tensor computed from x ...
"""

from __future__ import annotations

import sys

import torch
from torch.overrides import TorchFunctionMode

from ...core import Spec
from ...core.boundary import explain
from ...errors import DifferentiationError, GraphBreakError, graph_break
from .boundary import _Boundary, _contexts, _live_contexts

_inside_transform = torch._C._functorch.maybe_current_level

_Tensor = torch.Tensor

#: what leaves the graph, by the function torch dispatches to the mode
_BREAKS = {
    _Tensor.item: ".item()",
    _Tensor.tolist: ".tolist()",
    _Tensor.__float__: "float()",
    _Tensor.__int__: "int()",
    _Tensor.__complex__: "complex()",
    _Tensor.__index__: "int() (as an index)",
    _Tensor.detach: ".detach()",
    _Tensor.detach_: ".detach_()",
    _Tensor.data.__get__: ".data",  # type: ignore[attr-defined]
    torch.tensor: "torch.tensor()",
    _Tensor.new_tensor: ".new_tensor()",
}


#: code of functions that take tensors out of the graph and give the derivative themselves
#: (``di.DifferentiateWith`` under torch): what they call is no break
_OWN_DERIVATIVES: set = set()


def defines_its_derivative(function):
    """Mark ``function`` as one that gives the derivative of what it computes (a decorator)."""
    _OWN_DERIVATIVES.add(function.__code__)
    return function


def _inside_own_derivative():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code in _OWN_DERIVATIVES:
            return True
        frame = frame.f_back
    return False


def _reaches(tensor, leaves):
    """True when ``tensor`` is one of ``leaves`` or its autograd history reaches one of them."""
    if any(tensor is leaf for leaf in leaves):
        return True
    stack, seen = [tensor.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)  # an AccumulateGrad node: a leaf of the graph
        if variable is not None and any(variable is leaf for leaf in leaves):
            return True
        stack.extend(parent for parent, _ in node.next_functions)
    return False


def _graph_tensors(value):
    """The tensors recording gradients in ``value`` (an argument: a tensor, or a list or tuple of them)."""
    if isinstance(value, _Tensor):
        return [value] if value.requires_grad else []
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _graph_tensors(item)]
    return []


class _GraphBreakWatch(TorchFunctionMode):
    """Notes (``found``) the first call that takes a tensor of ``leaves``' graph out of it."""

    def __init__(self, leaves):
        super().__init__()
        self.leaves = leaves
        self.found = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if (
            self.found is None and torch.is_grad_enabled()
        ):  # not the body of an autograd.Function, say
            try:
                what = _BREAKS.get(func)
            except TypeError:  # an unhashable callable: none of the above
                what = None
            # the tensor taken out: the data of new_tensor(self, data), the first argument of the
            # others
            taken = args[1:2] if func is _Tensor.new_tensor else args[:1]
            if (
                what is not None
                and taken
                and any(_reaches(t, self.leaves) for t in _graph_tensors(taken[0]))
                and not _inside_own_derivative()
            ):
                self.found = what
        return func(*args, **(kwargs or {}))


def watched_call(f, args, leaves, backend):
    """``f(*args)`` with ``leaves`` (tensors marked ``requires_grad``, found in ``args``) recording;
    raises the :class:`~diffinterface.GraphBreakError` for ``f`` when it took a tensor computed
    from them out of the graph (see the module docstring)."""
    watch = _GraphBreakWatch(leaves)
    try:
        with torch.enable_grad(), watch:
            y = f(*args)
    except Exception as error:
        if watch.found is None:
            raise
        raise _broken(
            f, backend, watch.found
        ) from error  # the break comes first, whatever failed after it
    if watch.found is not None:
        raise _broken(f, backend, watch.found)
    return y


def _broken(f, backend, what):
    return GraphBreakError(
        f"{graph_break(f, backend, 'torch')} Here, f called {what} on a tensor computed from x "
        "while it was differentiated, which takes that value out of torch's graph: the "
        "derivative through it would be missing."
    )


class WatchedSpec(Spec):
    """The output's :class:`~diffinterface.core.Spec`, whether it ``records`` a path back to x (False
    for an output torch cannot trace back to x: a constant, a value copied out of the graph), and
    whether its graph reaches ``beyond_x``: a tensor f closes over that requires grad (nesting.py)."""

    __slots__ = ("records", "beyond_x")

    def __init__(self, shape, dtype, records, beyond_x=False):
        super().__init__(shape, dtype)
        self.records = records
        self.beyond_x = beyond_x


def _spec_of(y, leaves):
    if isinstance(y, _Tensor):
        return WatchedSpec(
            tuple(y.shape),
            str(y.dtype).replace("torch.", ""),
            y.requires_grad,
            _reaches_beyond(y, leaves),
        )
    spec = Spec.of(y)
    return WatchedSpec(spec.shape, spec.dtype, False)


def _reaches_beyond(tensor, leaves):
    """True when ``tensor``'s autograd history reaches a leaf that requires grad other than ``leaves``."""
    if tensor.grad_fn is None:
        return tensor.requires_grad and not any(tensor is leaf for leaf in leaves)
    ids = {id(leaf) for leaf in leaves}
    stack, seen = [tensor.grad_fn], set()
    while stack:
        for parent, _ in stack.pop().next_functions:
            if parent is None or parent in seen:
                continue
            seen.add(parent)
            variable = getattr(parent, "variable", None)  # an AccumulateGrad node: a leaf
            if variable is None:
                stack.append(parent)
            elif id(variable) not in ids:
                return True
    return False


def learned_output_spec(adapter, problem):
    """The output's shape and dtype, from one evaluation of f at x, watched (see the module docstring).

    One evaluation, not a run on meta-device tensors: most meta kernels are Python functions
    that import torch._dynamo on first use, slower than importing torch itself.
    """
    if problem.y is not None:
        return Spec.of(problem.y)
    ctx, to_torch = _contexts(problem.ctx), _Boundary(problem).to_torch
    if _inside_transform() is not None:
        # torch.func refuses requires_grad_() there: f as given, unwatched (nesting.py)
        return Spec.of(problem.f(problem.x, *_live_contexts(problem.ctx)))
    if problem.tree is None:
        leaves = [to_torch(problem.x)]
        y = _evaluate(adapter, problem, leaves, lambda: (leaves[0], *ctx))
    else:
        tree = problem.tree
        leaves = [to_torch(leaf) for leaf in tree.array_leaves(problem.x)]
        y = _evaluate(adapter, problem, leaves, lambda: (tree.unflatten(leaves), *ctx))
    return Spec.of(y) if problem.constant_output_is_zero else _spec_of(y, leaves)


def refuse_a_constant_output(problem, broken):
    """Raise ``broken(None)`` at preparation when f's output, learned at x, cannot be traced back to x.

    For the first derivatives SecondOrder's outer differentiates again (``torch.func``'s
    transforms, which give zeros there): ``AutoTorch()`` raises on such an f when called.
    """
    spec = problem.spec
    if broken is not None and not getattr(spec, "records", True) and spec.size:
        raise broken(None)


def _evaluate(adapter, problem, leaves, arguments):
    """f at ``arguments()`` built from ``leaves``: watched with the leaves recording, unless f is
    itself a derivative (SecondOrder's outer differentiating the inner's: no graph to watch)."""
    if problem.constant_output_is_zero:
        with torch.no_grad():
            return problem.f(*arguments())
    leaves = [
        leaf.requires_grad_() if leaf.dtype.is_floating_point or leaf.dtype.is_complex else leaf
        for leaf in leaves
    ]
    try:
        return watched_call(problem.f, arguments(), leaves, adapter.backend)
    except Exception as error:
        # A traced-array error is explained here, by torch's adapter: a wrapper's (SecondOrder's)
        # explanation does not know that torch ran f. (A framework limit, a ValueError, is left
        # to the caller's explanation, which would explain an explained one again.)
        better = explain(error, adapter, problem.f, problem.x, problem.ctx, None)
        if not isinstance(better, DifferentiationError):
            raise
        raise better from error
