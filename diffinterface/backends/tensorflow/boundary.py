"""The boundary between the user's arrays and TensorFlow: conversions in, results out, tracing once.

Everything a prepared call needs is decided here at preparation: how x, the
seeds and the contexts become tensors, how results go back to x's family, and
whether the numeric work is a ``tf.function`` traced now, for the prepared
shapes and dtypes (``jit=True``), or eager TensorFlow.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np
import tensorflow as tf

from ...contexts import Cache
from ...core import Spec, require_scalar_output
from ...core.boundary import framework_limit
from ...core.dtypes import require_real_output
from ...errors import TracedArrayError, UnsupportedError, graph_break, traced_array
from ...families import describe, family_of, is_array
from . import array_object
from .aux import traced_aux
from .numpy_rules import OFF, promoting, promotion_mode


def _never_autograph_converted(package):
    """Leave ``package``'s own code out of autograph's rewrite, as TensorFlow leaves its own.

    Inside a user's ``tf.function``, autograph rewrites each function the traced
    code calls. diffinterface's operators are not the user's code: rewritten,
    they would only warn that a syntax autograph lacks cannot be converted, and
    f is traced by the operators as written in any case (``autograph=False``).
    TensorFlow has no public way to say this of a package, only of a function.
    """
    from tensorflow.python.autograph.core import config, config_lib

    rules = config.CONVERSION_RULES
    if not any(isinstance(r, config_lib.DoNotConvert) and r._prefix == package for r in rules):
        config.CONVERSION_RULES = rules + (config_lib.DoNotConvert(package),)


_never_autograph_converted(__name__.split(".")[0])


class ForwardThroughBridgeError(UnsupportedError):
    """A DifferentiateWith function met inside a forward-mode recipe (see :data:`FORWARD_MODE`)."""


class ValuesNeededError(UnsupportedError):
    """A DifferentiateWith function first met in the value-free trace of :meth:`Boundary.check_no_value_taken_out`:
    it would prepare its inner operators at an invented point (zeros), so the check leaves it to the eager call."""


#: True while :meth:`Boundary.check_no_value_taken_out` traces f without values
CHECKING_WITHOUT_VALUES: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "tensorflow_value_check", default=False
)
#: True while a forward-mode recipe (a ForwardAccumulator) runs f: a DifferentiateWith function
#: inside refuses, since TensorFlow's forward mode does not see the bridge's custom gradients (it
#: would give zeros)
FORWARD_MODE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "tensorflow_forward_mode", default=False
)


@contextlib.contextmanager
def forward_mode():
    """Marks a forward-mode recipe running f (:data:`FORWARD_MODE`)."""
    token = FORWARD_MODE.set(True)
    try:
        yield
    finally:
        FORWARD_MODE.reset(token)


#: the arguments a traced function takes by shape and dtype alone (new values reuse the trace)
_ARRAYS = (tf.Tensor, tf.Variable, np.ndarray)


def _promoted(fn):
    """``fn`` (a ``tf.function``) called under :func:`promoting`: a call that traces it again (a new
    value of a number context, or a NumPy scalar where the trace had a Python number) traces f under
    the rules of the first trace."""

    def call(*args):
        with promoting():
            return fn(*args)

    return call


def _inline_in_graphs(traced, core):
    """``traced`` for an eager call; ``core`` traced inline into an enclosing graph (a user's
    ``tf.function``, ``tf.vectorized_map``), as TensorFlow inlines a nested ``tf.function``: ``pfor``
    cannot vectorize a call of a traced function that runs a ``pfor`` of its own (a forward sweep)."""

    def call(*args):
        if tf.executing_eagerly():
            return traced(*args)
        with promoting():
            return core(*args)

    return call


def as_output(y, like):
    """f's value ``y`` as a tensor: a Python or numpy number (f ignoring x) in the dtype of ``like`` (x, or a
    ``tf.DType``); else a TypeError naming f."""
    if isinstance(y, tf.Tensor):
        return y
    if isinstance(y, tf.Variable):
        return tf.convert_to_tensor(y)
    if isinstance(y, (float, int)) and not isinstance(y, bool):
        return tf.constant(y, dtype=like if isinstance(like, tf.DType) else like.dtype)
    if is_array(y) and family_of(y) == "numpy":
        return tf.convert_to_tensor(y)
    raise TypeError(f"f: expected f to return an array or a number; it returned {describe(y)}")


def connected(result, like, broken):
    """``result`` of ``tape.gradient`` / ``acc.jvp``; None there means f's output is cut off from x.

    ``broken`` (a callable making the GraphBreakError) is None where a
    constant output truly differentiates to zero (SecondOrder's outer, an empty output).
    """
    if isinstance(
        result, tf.IndexedSlices
    ):  # a gradient through tf.gather: x's shape, as a dense tensor
        return tf.convert_to_tensor(result)
    if result is not None:
        return result
    if broken is None or like.shape.num_elements() == 0:
        return tf.zeros_like(like)
    raise broken()


def eager_map(fn, seeds):
    """``tf.vectorized_map``'s result by one eager call of ``fn`` per seed: what eager TensorFlow does (f runs
    on values, so it may branch on them; ``vectorized_map`` would trace it without values)."""
    results = [fn(seeds[i]) for i in range(seeds.shape[0])]
    return tf.nest.map_structure(lambda *parts: tf.stack(parts), *results)


#: operations running graphs of their own (loops, branches, calls), whose tensors
#: ``graph.get_operations()`` omits
_NESTED_GRAPHS = frozenset(
    {
        "While",
        "StatelessWhile",
        "If",
        "StatelessIf",
        "Case",
        "StatelessCase",
        "PartitionedCall",
        "StatefulPartitionedCall",
    }
)


def _all_float64(graph):
    """True when every floating or complex tensor of ``graph`` and of the graphs it runs (a batched sweep's loop) is
    float64; False too where a nested graph cannot be read (TensorFlow keeps them in ``FuncGraph._functions``)."""
    nested = False
    for operation in graph.get_operations():
        nested = nested or operation.type in _NESTED_GRAPHS
        for tensor in operation.outputs:
            dtype = tensor.dtype
            if (dtype.is_floating or dtype.is_complex) and dtype != tf.float64:
                return False
    if not nested:
        return True
    functions = getattr(graph, "_functions", None)
    return functions is not None and all(
        hasattr(function, "graph") and _all_float64(function.graph)
        for function in functions.values()
    )


def _of_leaves(f, unflatten):
    """``f(x, *ctx)`` at a pytree x as a function of x's list of leaves."""

    def of_leaves(leaves, *ctx):
        return f(unflatten(leaves), *ctx)

    return of_leaves


def _unchanged(y):
    return y


class Boundary:
    """The conversions and the compilation of one preparation (see the module docstring)."""

    def __init__(self, adapter, problem, scalar=None):
        self.problem = problem
        #: the operator that needs a scalar f (gradient, hvp, hessian), for the check of the output
        #: learned by tracing
        self.scalar = scalar
        self.f = problem.f
        self.backend = adapter.backend
        self.dtype = tf.as_dtype(problem.x_dtype)
        self.numpy = problem.family == "numpy"
        self.broken = (
            None
            if problem.constant_output_is_zero
            else (lambda: graph_break(problem.f, adapter.backend, "TensorFlow"))
        )
        self.jit = adapter.backend.jit and not problem.one_off
        self.x_in = self._x_converter(problem)
        #: tensors in, tensors out: the methods call the traced function directly
        self.passes_through = not self.numpy and not isinstance(problem.x, tf.Variable)
        #: maps a function over a batch of seeds: vectorized when traced, one eager call per seed
        #: otherwise
        self.vmap = tf.vectorized_map if self.jit else eager_map
        #: with has_aux, a traced function returns aux's tensors too (aux.py); eager calls leave aux
        #: to the core
        self.aux = traced_aux(problem) if self.jit else None
        if not self.jit:
            self.check_no_value_taken_out(adapter)

    def _x_converter(self, problem):
        dtype = self.dtype
        if self.numpy:
            return lambda x: tf.convert_to_tensor(x, dtype=dtype)
        if isinstance(problem.x, tf.Variable):
            return tf.convert_to_tensor
        return lambda x: x

    def seed_in(self, seed):
        """A numpy seed as it is (tf.function traces arrays by shape and dtype); a Python number as a tensor of
        x's dtype (tf.function would trace again for each new number)."""
        return tf.constant(seed, dtype=self.dtype) if isinstance(seed, (float, int)) else seed

    def out(self, result):
        return result.numpy() if self.numpy else result

    def compiled(self, core, *example):
        """``core`` (tensors in and out) as a ``tf.function`` traced now for ``example``'s signature (jit), else
        ``core`` run eagerly; both under :func:`promoting` (the graph keeps the promotions it traced)."""
        if not self.jit:

            def eager(*args):
                with promoting():
                    return core(*args)

            return eager
        # autograph off: f is traced as written (a Python branch on x's values is refused, below),
        # and tracing stays as cheap as TensorFlow allows; a fixed signature where it can be (no
        # contexts): tf.function binds variadic arguments more slowly
        if self.aux is not None:
            core = self.aux.returning(core)
        fixed = {1: lambda a: core(a), 2: lambda a, b: core(a, b)}.get(len(example), core)
        fn = tf.function(fixed, autograph=False, reduce_retracing=False)
        concrete = self._traced_without_promotion(fn, example)
        if concrete is None:
            fn = tf.function(
                fixed, autograph=False, reduce_retracing=False
            )  # the first keeps its trace
        try:
            if concrete is None:
                with promoting():
                    concrete = fn.get_concrete_function(*example)
        except TypeError as error:
            if "as a Python `bool`" not in str(error):
                raise
            raise self.branch_error(error) from error
        # the traced function itself where every argument is an array: calling it skips
        # tf.function's look-up of the trace by its arguments (a third of a small call); an argument
        # that is a Python object (a number context) is part of the trace, and a new value must
        # trace again
        traced = (
            concrete
            if all(isinstance(a, _ARRAYS) for a in tf.nest.flatten(example))
            else _promoted(fn)
        )
        traced = _inline_in_graphs(traced, core)
        return traced if self.aux is None else self.aux.unpacking(traced)

    def _traced_without_promotion(self, fn, example):
        """``fn``'s trace under TensorFlow's own dtype rules where they give what :func:`promoting` gives, else None.

        Tracing under "all" promotion costs a few percent more. TensorFlow's own
        rules differ from it where a value is converted to a narrower dtype than
        its own (``x32 * np.float64(2)`` runs in float32 there), and they refuse
        mixed tensors. Neither can happen unseen in a graph whose floating tensors
        are all float64: a conversion to float64 narrows no float, and a mixed
        operation raises (the trace is then made again under "all", as it is for
        any other x, or under a user's own promotion mode).
        """
        if self.dtype != tf.float64 or promotion_mode() != OFF:
            return None
        spec = self.problem._spec
        try:
            with array_object.held():  # the array API's x.T and @ are no dtype rule
                concrete = fn.get_concrete_function(*example)
        except Exception:  # noqa: BLE001 - traced again under "all", which raises f's own errors
            concrete = None
        if concrete is not None and _all_float64(concrete.graph):
            return concrete
        self.problem._spec = spec  # learned under the other rules
        return None

    def handing_over(self, impl):
        """``impl``, whose methods hand each call's aux to the core where the traced function returns it."""
        return impl if self.aux is None else self.aux.handing_over(impl)

    def branch_error(self, error):
        message = traced_array(
            self.f, self.backend, "TensorFlow tensor traced by tf.function", error
        )
        return TracedArrayError(
            f"{message} Where f branches on x's values (if x[0] > 0: ...), tf.function cannot trace it: use "
            "AutoTensorFlow(jit=False), which differentiates eagerly, or write the branch with xp.where or "
            "tf.cond"
        )

    def check_no_value_taken_out(self, adapter):
        """Raise where f turns x's values into Python numbers (``float(x[0])``, ``.numpy()``), for eager calls.

        Eager TensorFlow differentiates through the rest of f and silently drops
        what such a number depended on; a trace without values finds it. A
        branch on x's values is allowed eagerly (that trace cannot take it), as
        are f's own errors (the eager evaluation raises them).
        """
        f = self.bound(learning=True)
        spec = tf.TensorSpec(self.problem.x_shape, self.dtype)
        ctx, tree = self.problem.ctx, self.problem.tree
        if tree is not None:  # a pytree x: its leaves, each in its own dtype
            spec = [tf.TensorSpec(s, d) for s, d in zip(tree.shapes, tree.dtypes)]
            f = _of_leaves(f, tree.unflatten)
        token = CHECKING_WITHOUT_VALUES.set(True)
        try:
            with promoting():
                tf.function(lambda x: f(x, *ctx), autograph=False).get_concrete_function(spec)
        except (
            ValuesNeededError
        ):  # a DifferentiateWith inside, not met yet: prepared at the eager call's values
            return
        except UnsupportedError:  # f writing into a di.Cache: named as such
            raise
        except Exception as error:  # f's own errors are left to the eager evaluation
            limit = framework_limit(error, adapter, {"tensorflow"}, self.f)
            if (
                limit is not None
            ):  # TensorFlow's own refusal (its @ falls back to numpy, which then fails)
                raise limit from error
            if adapter.is_traced_array_error(error) and "as a Python `bool`" not in str(error):
                raise traced_array(self.f, self.backend, "TensorFlow tensor", error) from error
        finally:
            CHECKING_WITHOUT_VALUES.reset(token)

    def example(self, with_seeds=False):
        """The prepared arguments as tensors, for tracing: ``(x, [seeds,] *ctx)``."""
        problem = self.problem
        args = [self.x_in(problem.x)]
        if with_seeds:
            # one seed itself, several as a tuple: tf.function traces numpy arrays and tensors alike
            # (new values reuse the trace)
            seeds = tuple(map(self.seed_in, problem.tangents))
            args.append(seeds[0] if len(seeds) == 1 else seeds)
        # contexts pass as they are: tf.function traces numpy arrays as tensors (a new value reuses
        # the trace)
        return (*args, *problem.ctx)

    def recorded(self):
        """f as the recipes of this preparation call it: :meth:`bound`; in a traced preparation it also learns the
        output (:meth:`learned_output`) and, with has_aux, keeps the aux (aux.py). Traced, f runs only while
        tracing, so this costs the prepared calls nothing."""
        if not self.jit:
            return self.bound()
        return self.bound(learning=True, f=None if self.aux is None else self.aux.evaluating())

    def learned_output(self, y):
        """``y``, f's output met while tracing; its shape and dtype become the problem's output spec where
        none is known yet, checked as the core checks a spec it learns (real) and, for ``scalar``, a scalar."""
        problem = self.problem
        if problem._spec is not None or not y.shape.is_fully_defined():
            return y
        spec = Spec(tuple(y.shape), y.dtype.name)
        require_real_output(spec, problem.x_dtype, self.f)
        problem._spec = spec
        if self.scalar is not None:
            require_scalar_output(problem, self.scalar)
        return y

    def bound(self, learning=False, f=None):
        """``f(x, *ctx)`` returning a tensor (numbers turned into x's dtype); with a ``di.Cache``, f's failure
        to write into it is raised as the UnsupportedError naming the Cache. With ``learning``, the output
        goes through :meth:`learned_output` (for evaluations while tracing only)."""
        f = f or self.f
        learned = self.learned_output if learning and self.problem._spec is None else _unchanged
        caches = [i for i, c in enumerate(self.problem.contexts) if isinstance(c, Cache)]
        # a number f returns takes x's dtype; a pytree x's promoted one
        dtype = self.dtype if self.problem.tree is not None else None
        if not caches:
            if learned is _unchanged:

                def evaluated(x, *ctx):
                    return as_output(f(x, *ctx), x if dtype is None else dtype)
            else:

                def evaluated(x, *ctx):
                    return learned(as_output(f(x, *ctx), x if dtype is None else dtype))

            return evaluated
        backend = self.backend

        def writing_into_cache(x, *ctx):
            try:
                y = as_output(f(x, *ctx), x if dtype is None else dtype)
            except (TypeError, ValueError, NotImplementedError, AttributeError) as error:
                raise UnsupportedError(
                    f"contexts[{caches[0]}]: f raised {type(error).__name__} while {backend!r} differentiated it "
                    "with a di.Cache: TensorFlow cannot write into a buffer (its tensors are immutable, and what f "
                    "computes from x is a tensor, not numbers). Return the value from f instead, pass what f only "
                    "reads as di.Constant, or use a backend that writes into buffers "
                    f"(di.check_inplace(backend) is True). ({error})"
                ) from error
            return learned(y)

        return writing_into_cache
