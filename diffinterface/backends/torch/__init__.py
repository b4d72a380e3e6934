"""AutoTorch: PyTorch's ``torch.autograd`` (reverse and forward) and ``torch.func`` (vmap).

    >>> import numpy as np, diffinterface as di
    >>> backend = di.AutoTorch()
    >>> f = lambda x: (x ** 2).sum()
    >>> prep = di.prepare_gradient(f, backend, np.array([1.0, 2.0]))
    >>> di.gradient(f, backend, np.array([1.0, 2.0]), prep=prep)
    array([2., 4.])

Both primitives are native. Each operator uses the recipe that measured
fastest on CPU (the figures are in ``benchmarks/README.md``), within the mode
the selector asks for:

=================  ============================================  ==========================================
operator           ``mode=None`` / ``mode="reverse"``            ``mode="forward"``
=================  ============================================  ==========================================
pullback           ``autograd.grad``; a batch of cotangents in   the Jacobian by ``vmap(jvp)`` over the
                   one backward pass under ``torch.func.vmap``   input basis, times the cotangents
pushforward        ``None``: dual numbers (one tangent),         dual numbers (one tangent),
                   ``vmap(jvp)`` (a batch). ``"reverse"``: the   ``vmap(jvp)`` (a batch)
                   Jacobian by batched ``autograd.grad`` over
                   the output basis, times the tangents
gradient           ``autograd.grad``                             ``autograd.functional.jacobian``'s
                                                                 vectorized forward strategy up to 16
                                                                 inputs, else (and ``value_and_``)
                                                                 ``vmap(jvp)``
jacobian           batched ``autograd.grad`` over the output     as gradient
                   basis (``None``: forward as in the next
                   column when the output is 4x the input)
derivative         ``autograd.grad``, batched over the output    dual numbers
                   basis (``None``: dual numbers above 100
                   outputs)
hessian            double backward: ``autograd.grad(create_graph=True)``, then one batched
                   ``autograd.grad`` over the basis (every mode)
hvp                double backward, batched over the tangents (every mode)
second_derivative  double backward (batched over the output basis for array outputs)
=================  ============================================  ==========================================

``mode=None`` differentiates scalar functions and Jacobians in reverse mode
because torch's forward mode is much slower than a backward pass on them.
Batches of seeds are one vectorized call (``torch.func.vmap`` over a backward
pass or over ``jvp``), never a Python loop: every prepared call evaluates ``f`` once.

A single backward pass on plain tensors (the gradient of a scalar function, a
pullback with one cotangent) calls the engine behind ``autograd.grad``
(``torch.autograd.graph._engine_run_backward``) with the arguments
``autograd.grad`` would pass it: that skips ``autograd.grad``'s argument
handling, a large part of a small gradient's call.
Tensor subclasses, active ``__torch_function__`` modes and torch versions without
that function go through ``autograd.grad`` itself.

``AutoTorch(compile=True)`` (experimental) compiles ``torch.func.grad_and_value(f)``
with ``torch.compile`` at preparation, for ``gradient`` and
``value_and_gradient`` in ``mode=None`` / ``"reverse"`` (other operators run
eagerly). Compiling takes seconds to minutes (on CPU a C++ toolchain is
required) and pays off on large vectorized functions.

Arrays: numpy in, numpy out (``torch.from_numpy``, no copy; a read-only
array, and one with negative strides such as ``a[::-1]``, which torch cannot
represent, is copied once per call: x, tangents, contexts and pytree leaves);
tensors in, tensors out on the same device and
dtype (float32 stays float32, float64 float64). The user's tensors are never
modified: ``x.grad`` stays ``None`` and ``requires_grad`` flags are unchanged.
numpy arrays among the contexts become tensors sharing memory, the leaves of a
dict, list or tuple context too. Parameters that ``f`` closes over accumulate
no ``.grad`` either (``autograd.grad`` never accumulates). A call whose x,
seeds, contexts or closed-over tensors require grad (grad mode on), or that
runs inside a ``torch.func`` transform, returns results connected to the
caller's graph, computed by ``torch.func``'s transforms (:mod:`.nesting`); any
other call differentiates a detached alias of ``x`` with the recipes above and
returns results without a graph.
An x made under ``torch.inference_mode()`` (which can neither record nor carry a
tangent) or expanded (stride 0, which forward mode cannot make dual) is
differentiated at a plain copy, decided at preparation from the x prepared with;
a preparation made at an ordinary tensor copies an inference-mode x in reverse
mode and refuses it by name in forward mode. Results are ordinary tensors: a
structurally zero second derivative (``abs(x - 1)``), which torch gives as an
immutable ZeroTensor, is copied into an ordinary one.

Output shape: learned at preparation by evaluating ``f`` once, with x
recording gradients, under the watch of :mod:`.graph_watch`; prepared calls
never evaluate it for the shape.

Graph breaks: an output torch cannot trace back to x raises
:class:`~diffinterface.GraphBreakError` when a derivative is computed (and at
preparation under a ``SecondOrder`` pair of torch modes, whose ``torch.func``
transforms would give zeros there). A
partial break, where the output still depends on x through another path
(``x[0].item() * x.sum()``, ``(x.detach() * x).sum()``), is found at preparation
(and in unprepared calls, which prepare afresh): ``.item()``, ``.tolist()``,
``float()``, ``int()``, ``complex()``, ``.detach()``, ``.data`` or ``torch.tensor()`` of a
tensor computed from x, while recording, raise a GraphBreakError naming the
call. Not seen: a break on a path f takes only at other points than the one it
was prepared at; ``bool()`` and branches on x's values (the derivative of the
branch taken is right); breaks under ``torch.no_grad()`` or inside a
``torch.autograd.Function``, a C++ extension or a ``__torch_function__``
override's own calls; two-argument functions ``f(y, x)``, which are not evaluated
at preparation. ``.numpy()`` and numpy functions on x are refused by torch
itself (a :class:`~diffinterface.TracedArrayError`). A deliberate stop-gradient
by ``.detach()`` is refused too: pass that value as ``di.Constant(value)``. Meta-device
tensors would skip that evaluation, but torch's meta kernels import
``torch._dynamo`` on first use (slower than ``import torch`` itself), so only ``compile=True`` loads it. Two-argument functions ``f(y, x)`` take the shape from
``y``, are not evaluated at preparation, and are differentiated through a
fresh zero buffer per call (torch records the writes); the user's ``y`` is
written only by the core, with the value.

``has_aux=True``: the aux of the one evaluation at x, from the recording or
the dual number f ran on; under ``vmap(jvp)``, whose wrapped tensors show no
values, from ``torch.func.jvp(..., has_aux=True)`` (:mod:`.aux`). Same-point
preparations (:mod:`.same_point`) keep f's graph (for hvp the gradient's) and
run one backward pass through it per call: plain for one seed, batched for
several.

The first forward-mode call in a process makes torch itself warn that
``torch.jit.script`` is deprecated (it loads its forward-AD decompositions);
that warning is torch's, not this adapter's.
"""

from .modules import module_function

__all__ = ["TorchAdapter", "module_function"]


def __getattr__(name):
    # the adapter imports torch: only when it is asked for (di.module_function is exported from
    # here, and `import diffinterface` imports no framework)
    if name == "TorchAdapter":
        from .adapter import TorchAdapter

        return TorchAdapter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
