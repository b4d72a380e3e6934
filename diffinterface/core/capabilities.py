"""What an adapter declares about itself, once: one frozen :class:`Capabilities` value.

Each adapter class states its facts in one place,
``capabilities = Capabilities(mode="both", families=("numpy", "jax"), ...)``,
and every layer reads them as ``adapter.capabilities.<field>``. An adapter
whose facts depend on its selector (finite differences with the complex
step, a wrapper taking its dense backend's) sets ``self.capabilities`` in its
``__init__``, usually ``type(self).capabilities.replace(...)``.

    >>> caps = Capabilities(mode="both", families=("numpy", "torch"), inplace=True)
    >>> caps.mode, caps.inplace, caps.replace(mode="forward").mode, caps.max_batch
    ('both', True, 'forward', None)
"""

from __future__ import annotations

from typing import Literal, Optional

from ..families import NUMBERS
from ..frozen import Frozen

#: which primitives are native: pushforwards, pullbacks, or both
Mode = Literal["forward", "reverse", "both"]


class Capabilities(Frozen):
    """The declared facts of one adapter (every field keyword-only, each with its default)."""

    __frozen_keyword_only__ = (
        "mode",
        "square_jacobian_mode",
        "families",
        "framework",
        "traced_array_name",
        "inplace",
        "writes_cache",
        "complex_x_refusal",
        "complex_step",
        "numpy_results_are_arrays",
        "max_batch",
        "bounds_sweeps",
        "pytrees",
        "own_empty_results",
        "output_from_each_call",
        "aux_evaluated_again",
        "traces_without_values",
        "traces_unprepared_calls",
        "prepares_calls",
        "batches_gradients",
        "batches_points",
        "approximate",
        "needs_values",
        "float64_accuracy",
        "traceable_families",
        "cheap_same_point",
    )

    #: which primitives are native ("forward": pushforward, "reverse": pullback, or "both")
    mode: Mode = "forward"
    #: with ``mode="both"``: the mode of a Jacobian whose x and output have as many elements, when
    #: the selector names none and shapes do not decide (measured per framework in
    #: ``benchmarks/bench_sizes.py``)
    square_jacobian_mode: Literal["forward", "reverse"] = "forward"
    #: the array families accepted for ``x``
    families: tuple[str, ...] = (NUMBERS,)
    #: the framework whose computations this adapter traces ("jax", "torch", "autograd",
    #: "tensorflow"), or None when it only evaluates functions at concrete arrays
    framework: Optional[str] = None
    #: what ``f`` receives as x while the framework traces it, for error messages ("JAX tracer")
    traced_array_name: str = "traced array"
    #: True when the framework can differentiate two-argument ``f(y, x)`` that writes ``y``
    inplace: bool = False
    #: False when ``f`` cannot write what it computes into a ``di.Cache`` of x's dtype (the complex
    #: step evaluates f at complex points, whose imaginary parts a real Cache would drop)
    writes_cache: bool = True
    #: None when the adapter differentiates a complex x (through its real view,
    #: core/complex_convention.py); else why not, for the error
    complex_x_refusal: Optional[str] = None
    #: True when ``f`` is evaluated at complex points ``x + i h t`` of a real x (the complex step),
    #: where it must be the analytic continuation of the real f (families/complex_step.py)
    complex_step: bool = False
    #: True when every numpy result is an ``np.ndarray``, 0-d ones included; False (the safe
    #: default) lets the core turn NumPy scalars and floats into 0-d arrays where results can be 0-d
    numpy_results_are_arrays: bool = False
    #: the largest batch of tangents one primitive call takes (None: any)
    max_batch: Optional[int] = None
    #: True when the adapter runs its sweeps in batches of the selector's ``batch_size`` itself;
    #: False: the core cuts the seeds it hands a primitive into such batches
    bounds_sweeps: bool = False
    #: operators whose ``prepare_<name>`` takes a pytree ``x`` as it is (``problem.tree`` is its
    #: flattening plan); for every other operator the core hands the adapter a flat array
    pytrees: frozenset[str] = frozenset()
    #: operators whose empty problems (``x`` or ``f(x)`` of size 0) the adapter answers itself,
    #: for results that are not dense arrays; the core answers every other one (core/empty.py)
    own_empty_results: frozenset[str] = frozenset()
    #: operators whose preparation never evaluates ``f``: the output is learned from each call's
    #: own forward pass, so an unprepared call evaluates f once, as the native recipe does
    output_from_each_call: frozenset[str] = frozenset()
    #: operators whose calls, with ``has_aux``, evaluate f once more for the aux (their recipe
    #: computes f only where no aux can leave); the kit's aux scenario allows that for these only
    aux_evaluated_again: frozenset[str] = frozenset()
    #: True when prepared functions are traced with abstract values only (compiled JAX or
    #: TensorFlow functions): f's Python side effects run at tracing, not at each call
    traces_without_values: bool = False
    #: None when an unprepared call runs f on x's values (eagerly, or traced with values); else
    #: why unprepared calls are traced without values too, as prepared ones are: a branch on x's
    #: values is then refused by name unprepared as well
    traces_unprepared_calls: Optional[str] = None
    #: True for a wrapper whose ``prepare_call(call, strict, one_off)`` returns the whole
    #: :class:`~diffinterface.core.preparation.Preparation` itself, made through other backends
    prepares_calls: bool = False
    #: True when ``prepare_batched_gradient`` computes an evaluating outer's formula around its
    #: gradients in one call (see :class:`~diffinterface.core.adapter.Adapter`)
    batches_gradients: bool = False
    #: True for an evaluating outer that hands its formula over all its points to
    #: ``problem.batched_f``
    batches_points: bool = False
    #: True when results are approximations (finite differences), not exact derivatives: the
    #: conformance kit compares them with looser tolerances (``testing/tolerances.py``)
    approximate: bool = False
    #: None when the adapter prepares (and its calls run) on traced values too, inside a
    #: framework's transforms (``jax.jit``); else ``(what it does with x's values, the way
    #: around)``, for the error a traced x gets (core/prepare.py::require_values)
    needs_values: Optional[tuple[str, str]] = None
    #: array families besides ``families`` on whose arrays, traced ones included, the adapter
    #: computes with the family's own namespace, so that it runs inside that framework's transforms
    #: (``jax.jit``) although it ``needs_values`` for the others: finite differences on JAX arrays
    traceable_families: tuple[str, ...] = ()
    #: None when float64 results are as accurate as float64 arithmetic allows; else ``(relative
    #: accuracy, why)``: the framework computes some float64 functions less accurately (the
    #: conformance kit compares float64 results within that accuracy, testing/tolerances.py)
    float64_accuracy: Optional[tuple[float, str]] = None
    #: True when a same-point preparation (``Adapter.prepare_same_point``) costs about one call of
    #: its operator (torch's recorded graph, autograd's recorded pass): a caller going from point
    #: to point, as the scipy objective's ``hessp`` goes from iterate to iterate, makes one at each
    #: point. False: one ordinary preparation serves every point better (JAX's same-point
    #: preparation compiles for its point; without a recipe it is an ordinary one, made in full)
    cheap_same_point: bool = False

    @property
    def all_families(self) -> tuple[str, ...]:
        """Every array family an ``x`` may be of: ``families`` and ``traceable_families``.

        >>> Capabilities(traceable_families=("jax",)).all_families
        ('numpy', 'jax')
        """
        return self.families + tuple(f for f in self.traceable_families if f not in self.families)

    @classmethod
    def of_framework(cls, framework: str, traced_array_name: str, **facts) -> Capabilities:
        """The facts of a framework's own adapter: both modes, x of numpy or the framework's family.

        Such an adapter traces ``f`` with the framework (its name is also its array family's) and
        runs its sweeps in batches of the selector's ``batch_size`` itself; ``facts`` add or
        override fields.

            >>> caps = Capabilities.of_framework("torch", "torch tensor", inplace=True)
            >>> caps.mode, caps.families, caps.bounds_sweeps, caps.inplace
            ('both', ('numpy', 'torch'), True, True)
        """
        return cls(
            **{
                "mode": "both",
                "families": ("numpy", framework),
                "framework": framework,
                "traced_array_name": traced_array_name,
                "bounds_sweeps": True,
                **facts,
            }
        )

    def replace(self, **changes) -> Capabilities:
        """A copy with the ``changes`` (field names) made."""
        return type(self)(**{**self.__dict__, **changes})


#: the fields, as legacy class attributes of an adapter written before ``capabilities``
FIELDS: tuple[str, ...] = Capabilities.__frozen_keyword_only__
