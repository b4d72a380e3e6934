"""Regressions: one probe for each defect a fuzz campaign, a real client and new users found.

Each probe is a :class:`~diffinterface.testing.BadInput`: it calls the public
API the way the user did and states the contract (the right result in x's
family, shape and dtype, or an error naming the argument and the way around).
Probes run on every backend, through :func:`~diffinterface.testing.bad_inputs`
and the pytest plugin's ``di_bad_input_case`` fixture, so a third-party
backend gets them too. A probe never tests a backend by name; where a
framework can do something others cannot (``.detach()``, ``.item()``), the
probe asks the array itself.

The modules group the probes by the kind of defect:

- :mod:`.fresh_functions`: an unprepared call sees f as it is now (globals,
  closed-over arrays, model attributes), and eager backends run f eagerly;
- :mod:`.graph_breaks`: a broken or partly broken graph is an error, never a
  wrong number, through every pair of SecondOrder too;
- :mod:`.result_dtypes`: results in x's dtype on every backend;
- :mod:`.foreign_families`: contexts, tangents and functions of another
  array family are converted or refused by name;
- :mod:`.unusual_arrays`: strided, expanded, read-only and inference-mode
  arrays, in and out;
- :mod:`.unusual_functions`: structurally zero derivatives, matrix chains,
  empty outputs, criteria as losses, negative-step slices, as ordinary arrays;
- :mod:`.one_kind`: a Python float, a NumPy scalar and a 0-d array are one
  kind (pytree leaves too), a torch ``Parameter`` and a ``Tensor`` too;
- :mod:`.evaluation_points`: f is evaluated only at points the user gave (and
  the points a derivative needs), at any shape x has, 0-d included;
- :mod:`.differentiate_with_in_jax`: a ``DifferentiateWith`` inner inside
  ``jax.jit`` of every JAX transform: right derivatives whichever route
  (one gradient callback or pullbacks) it takes, and no wasted evaluation;
- :mod:`.writable_results`: numpy results are writable arrays the user owns,
  and every result can be passed back as ``out=``;
- :mod:`.array_api_rules`: each array-API function the namespace offers
  differentiates in both modes, keeps x's dtype, or raises naming itself;
- :mod:`.array_api_special_inputs`: rules at inputs where their formulas
  break (broadcast arguments, symmetric matrices, zeros, repeated indices);
- :mod:`.batched_matmul`: a float32 matmul of batch 1 has right derivatives
  where a vectorized sweep would hit a framework kernel's defect;
- :mod:`.rolled_axes`: ``roll`` along a negative axis has right derivatives
  where a vectorized sweep would roll the seeds;
- :mod:`.complex_step`: at complex-step points every array-API function of the
  namespace is its real function's continuation, or refuses by name;
- :mod:`.wrong_picks_and_messages`: AutoSelect compares each output part on its
  own scale, derivatives of tree outputs are refused, MixedMode's Hessians,
  and messages that fit the call;
- :mod:`.stale_state`: no result from state older than the call (f in worker
  processes, same-point preparations and linear operators after in-place
  changes);
- :mod:`.contexts_and_operands`: int and bool Constants prepared, numpy
  Constants of a DifferentiateWith inside other frameworks, ``@`` with a 1-d
  operand;
- :mod:`.array_object_syntax`: one-source functions written with the array
  object's own ``x.T``, ``x.mT``, ``@`` and ``+x`` at matrix inputs (to a
  vector, to a matrix, with a Constant, on stacks), or a refusal naming the
  syntax and its replacement;
- :mod:`.input_scales`: derivatives at large and tiny |x| as accurate as the
  backend's kind allows (a few roundoffs exact, a first-order rule's error
  approximate);
- :mod:`.tree_leaves`: a gradient at a pytree gives one array at two places
  its partial derivative at each, and a leaf f does not use zeros, whether the
  backend ravels the tree or differentiates its leaves as they are.
- :mod:`.writes_into_x`: an f that writes into its argument (``x += 1``,
  ``x[0] = 1.0``) gets the derivative of what it computes, or a refusal
  naming the write, and the caller's x is unchanged.
- :mod:`.complex_step_refusals`: an f whose value loses its imaginary part at
  complex-step points is refused naming f, not a wrapper of it.

The nesting probes, operators as building blocks inside each framework's own
transforms, are the kit's "nested" group (:func:`nesting_probes`,
:func:`~diffinterface.testing.nested_cases`), not part of :func:`regressions`:

- :mod:`.torch_nesting`: results stay in an outer torch graph (gradient
  penalty, MAML) and operators work under ``torch.func``'s transforms
  (per-sample gradients, ``functional_call``) and ``torch.compile``;
- :mod:`.jax_nesting`: operators and ``has_aux`` under ``jax.jit``, ``vmap`` and
  ``grad`` give JAX's answers; what needs x's values is refused naming ``jax.jit``;
- :mod:`.tensorflow_nesting`: results an outer ``tf.GradientTape`` differentiates
  (gradient penalty, MAML), operators inside ``tf.function`` and ``tf.vectorized_map``;
- :mod:`.autograd_nesting`: results an outer ``autograd.grad`` differentiates.

    >>> from diffinterface.testing.regressions import nesting_probes, regressions
    >>> all(probe.name for probe in regressions())
    True
    >>> len({probe.name for probe in nesting_probes()} & {probe.name for probe in regressions()})
    0
"""

from __future__ import annotations

from . import (
    array_api_rules,
    array_api_special_inputs,
    autograd_nesting,
    array_object_syntax,
    batched_matmul,
    complex_step,
    complex_step_refusals,
    contexts_and_operands,
    differentiate_with_in_jax,
    evaluation_points,
    foreign_families,
    fresh_functions,
    graph_breaks,
    input_scales,
    jax_nesting,
    one_kind,
    result_dtypes,
    rolled_axes,
    torch_nesting,
    stale_state,
    tensorflow_nesting,
    tree_leaves,
    unusual_arrays,
    unusual_functions,
    writable_results,
    writes_into_x,
    wrong_picks_and_messages,
)

_MODULES = (
    fresh_functions,
    graph_breaks,
    result_dtypes,
    foreign_families,
    unusual_arrays,
    unusual_functions,
    one_kind,
    evaluation_points,
    differentiate_with_in_jax,
    writable_results,
    array_api_rules,
    array_api_special_inputs,
    batched_matmul,
    rolled_axes,
    complex_step,
    wrong_picks_and_messages,
    stale_state,
    contexts_and_operands,
    array_object_syntax,
    input_scales,
    tree_leaves,
    writes_into_x,
    complex_step_refusals,
)


_NESTING_MODULES = (torch_nesting, jax_nesting, tensorflow_nesting, autograd_nesting)


def regressions():
    """Every regression probe of the kit, module by module."""
    return [probe for module in _MODULES for probe in module.probes()]


def nesting_probes():
    """The probes of operators inside their framework's own transforms, module by module."""
    return [probe for module in _NESTING_MODULES for probe in module.probes()]


__all__ = ["nesting_probes", "regressions"]
