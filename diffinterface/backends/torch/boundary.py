"""The boundary between the user's arrays and torch: conversions in, results out, f as torch sees it."""

from __future__ import annotations

import numpy as np
import torch

from ...families import describe
from ...errors import graph_break

_Tensor = torch.Tensor


def _torch_dtype(name):
    return getattr(torch, name)


def _numpy_to_torch(x):
    if x.__class__ is not np.ndarray:
        return _numpy_to_torch(np.asarray(x))
    if not x.flags.writeable:
        # from_numpy warns on read-only arrays; torch never writes x, but copy to stay quiet and
        # safe.
        return torch.from_numpy(x.copy())
    try:
        return torch.from_numpy(x)
    except ValueError:
        # torch has no negative strides (x[::-1], pymanopt's FixedRankEmbedded): a copy, only then
        return torch.from_numpy(x.copy())


def _primal_tensor(value):
    """``value`` (any object) unwrapped: torch.func's wrappers, then forward-mode duals, then the recording.

    Unseen by the graph-break watch (graph_watch.py): it detaches what f returns beside y (``has_aux``), not
    what y depends on.
    """
    if isinstance(value, _Tensor):
        with torch._C.DisableTorchFunction():
            functorch = torch._C._functorch
            while functorch.is_functorch_wrapped_tensor(value):
                value = functorch.get_unwrapped(value)
            dual = torch.autograd.forward_ad.unpack_dual(value)
            if (
                dual.tangent is not None
            ):  # unpacking a plain tensor gives a new object: aux keeps f's own
                value = dual.primal
            if value.requires_grad:
                value = value.detach()
    return value


def _tensor_alias(x):
    return x.detach()


def _tensor_without_graph(x):
    # Forward-mode AD on a detached alias (a view) costs more than on the tensor itself.
    return x.detach() if x.requires_grad else x


def _tensor_copy(x):
    """A plain contiguous copy outside any graph: for inference-mode tensors, which can neither
    require grad nor carry a tangent, and expanded (stride-0) ones, which forward mode cannot make dual."""
    return x.detach().clone(memory_format=torch.contiguous_format)


def _numpy_recording(x):
    return _numpy_to_torch(x).requires_grad_()


def _tensor_recording(x):
    try:
        return x.detach().requires_grad_()
    except RuntimeError:
        if not _needs_copy(x):
            raise
        return _tensor_copy(
            x
        ).requires_grad_()  # an inference-mode x where the preparation had an ordinary one


def _copy_recording(x):
    return _tensor_copy(x).requires_grad_()


def _needs_copy(t):
    """True for a tensor torch cannot differentiate at in place: made under ``torch.inference_mode()``,
    or with elements sharing memory (``expand``, stride 0)."""
    return isinstance(t, _Tensor) and (
        t.is_inference()
        or any(stride == 0 and size > 1 for stride, size in zip(t.stride(), t.shape))
    )


def _materialized(t):
    """``t`` as an ordinary tensor: torch returns a structurally zero second derivative (of
    ``abs``, say) as an immutable ZeroTensor that ``.numpy()`` and in-place writes refuse."""
    return t.clone() if t._is_zerotensor() else t


def _detached_numpy(t):
    return t.detach().numpy() if t.requires_grad else t.numpy()


def _detached(t):
    return t.detach() if t.requires_grad else t


def _same(t):
    return t


def _context_to_torch(value, tensor=_detached):
    if isinstance(value, np.ndarray):
        return _numpy_to_torch(value)
    if isinstance(value, _Tensor):
        return tensor(value)
    if isinstance(value, dict):  # a tree of contexts: its leaves as above
        return {key: _context_to_torch(leaf, tensor) for key, leaf in value.items()}
    if isinstance(value, (list, tuple)):
        leaves = [_context_to_torch(leaf, tensor) for leaf in value]
        return type(value)(leaves) if not hasattr(value, "_fields") else type(value)(*leaves)
    return value


def _contexts(ctx):
    return tuple(_context_to_torch(c) for c in ctx)


def _live_contexts(ctx):
    """The contexts as torch sees them, their tensors as given: connected to an outer graph."""
    return tuple(_context_to_torch(c, _same) for c in ctx)


class _Boundary:
    """Conversions for one problem.

    ``to_torch(x)``: a fresh tensor sharing x's memory (a leaf we may mark
    ``requires_grad``); ``recording(x)``: that leaf, marked; ``as_tensor(a)``: ``a``
    as a tensor outside any graph (seeds, and x for forward mode); ``back(t)``: a
    result that carries no graph (a plain backward pass's output) in the user's
    family; ``back_value(t)``: any result (values, forward-mode tangents), detached
    first; ``fn(x, *ctx)``: ``f`` as a one-argument function; ``broken(x)``: the
    error for ``f`` called with the tensor x when torch finds no path from its output
    back to x (None when ``f`` is itself a derivative, whose constant outputs are true zeros);
    ``writes``: True when ``f`` writes into a buffer, a ``di.Cache`` or the two-argument ``y``
    (see :func:`writes_into_buffers`).
    """

    def __init__(self, problem):
        if problem.family == "torch":
            if any(_needs_copy(leaf) for leaf in _leaves(problem)):
                # decided from the x prepared with: prepared calls with ordinary tensors pay nothing
                self.to_torch = self.as_tensor = _tensor_copy
                self.recording = _copy_recording
            else:
                self.to_torch, self.as_tensor = _tensor_alias, _tensor_without_graph
                self.recording = _tensor_recording
            self.back, self.back_value = _same, _detached
        else:
            self.to_torch = self.as_tensor = _numpy_to_torch
            self.recording = _numpy_recording
            self.back, self.back_value = _Tensor.numpy, _detached_numpy
        f = problem.f
        self.writes = writes_into_buffers(problem)
        if problem.constant_output_is_zero:
            self.broken = None
            # f is a derivative (SecondOrder's outer differentiates the inner's): its own derivative
            # may be a ZeroTensor (that of abs), which no result may be; plain f pays nothing
            back, back_value = self.back, self.back_value
            self.back = lambda t: back(_materialized(t))
            self.back_value = lambda t: back_value(_materialized(t))
        else:
            backend = problem.adapter.backend
            self.broken = lambda x: _graph_break_at(f, backend, x)
        if problem.y is None:
            self.fn = f
        else:
            shape = tuple(problem.y.shape)
            dtype = _torch_dtype(problem.spec.dtype)

            def fn(x, *ctx):
                # torch records the writes into a fresh buffer; the user's y is filled by the core.
                buffer = torch.zeros(shape, dtype=dtype, device=x.device)
                f(buffer, x, *ctx)
                return buffer

            self.fn = fn


def _graph_break_at(f, backend, x):
    """The error for ``f`` whose output torch cannot trace back to ``x``: a GraphBreakError, or
    for an inference-mode x, which carries no tangent, a ValueError naming x and the way around."""
    if isinstance(x, _Tensor) and x.is_inference():
        return ValueError(
            f"x: expected a tensor {backend!r} can differentiate at; got an inference-mode tensor (made under "
            "torch.inference_mode()), which carries no tangent, for a preparation made at an ordinary tensor. "
            "Prepare with the inference-mode tensor itself (it is then copied on each call), or pass "
            "x.clone() made outside torch.inference_mode()."
        )
    return graph_break(f, backend, "torch")


def _leaves(problem):
    return [problem.x] if problem.tree is None else problem.tree.array_leaves(problem.x)


def writes_into_buffers(problem):
    """True when ``f`` may write into a tensor it did not create: a ``di.Cache`` or the two-argument ``y``.

    torch.func's transforms (``jvp``, ``vmap``, ``grad``) refuse such writes ("in-place
    operation that would mutate a captured Tensor", "vmap: fill_(self, ...) is not
    possible"), so these problems are differentiated, at preparation already, with
    dual numbers and ``autograd.grad``, which record in-place writes as any other
    operation. One-argument functions without a Cache keep the vectorized recipes.

        >>> import numpy as np, diffinterface as di
        >>> from diffinterface.core import Problem, get_adapter
        >>> adapter = get_adapter(di.AutoTorch())
        >>> x = np.ones(2)
        >>> writes_into_buffers(Problem(adapter, np.sin, x, None, (), None))
        False
        >>> writes_into_buffers(Problem(adapter, np.sin, x, None, (di.Cache(np.zeros(2)),), None))
        True
    """
    return problem.y is not None or any(c.kind == "Cache" for c in problem.contexts)


def _as_output(y, like):
    """``f``'s result as a tensor (a Python number or numpy scalar becomes one, on x's device)."""
    if isinstance(y, _Tensor):
        return y
    if isinstance(y, float):  # a Python float is a float64, as everywhere in diffinterface
        return torch.tensor(y, dtype=torch.float64, device=like.device)
    if isinstance(y, (int, np.ndarray, np.generic)) and not isinstance(y, bool):
        return torch.as_tensor(y, device=like.device)
    raise TypeError(f"f: expected f to return an array or a number; it returned {describe(y)}")


def _basis(shape, dtype, device):
    """The standard basis of arrays of ``shape``, stacked: shape ``(size, *shape)``."""
    n = 1
    for d in shape:
        n *= d
    return torch.eye(n, dtype=_torch_dtype(dtype), device=device).reshape((n, *shape))
