"""``AutoFiniteDiff(workers=...)``: each prepared call's evaluations of f gathered, then run through the workers at once.

Every difference recipe is written once, for evaluations one after the other
(``adapter.py``, ``second_order.py``). With workers, each operator is prepared
on a copy of the adapter whose evaluations of f go through a :class:`Tape`,
and a prepared call runs its recipe twice:

1. recording: each evaluation notes its point and returns zeros of f's output
   shape and dtype (no recipe picks a point from f's values: the adaptive
   method, which does, takes no workers);
2. the noted points go to the workers in one batch
   (:class:`~diffinterface.backends.finitediff.workers.Dispatcher`);
3. replaying: the recipe runs again and each evaluation returns the value
   computed for it, in the same order.

The replay does the serial recipe's arithmetic on the serial recipe's values,
so results equal the serial ones bit for bit, and ``f(x)`` is evaluated once
wherever the serial recipe evaluates it once (a ``value_gradient_and_hessian``
is one batch: value, gradient and Hessian points together). The arithmetic
runs twice, a cost beside an ``f`` worth sending to workers.
"""

from __future__ import annotations

import copy
import threading

import numpy as np

from ...contexts import Cache
from ...core.aux import capture_of
from .workers import Dispatcher, Shipped, crosses_processes
from ...errors import UnsupportedError

#: the operators FiniteDiffAdapter prepares itself: each goes through the workers
OPERATORS = (
    "pushforward",
    "derivative",
    "gradient",
    "jacobian",
    "hessian",
    "hvp",
    "second_derivative",
)


class Tape:
    """The evaluations of one preparation's calls: noted while recording, answered while replaying."""

    def __init__(self, problem):
        self.functions = []
        #: contexts f may write into: each evaluation gets its own copy (evaluations run at once)
        self.caches = frozenset(i for i, c in enumerate(problem.contexts) if isinstance(c, Cache))
        self.tasks = None  # a list while recording
        self.values = None
        self.position = 0

    def taped(self, evaluate, shape, dtype):
        """``evaluate(x, ctx)`` (a fresh value of f at x) as it runs under this tape."""
        index = len(self.functions)
        self.functions.append(evaluate)
        caches = self.caches

        def taped_evaluate(x, ctx):
            tasks = self.tasks
            if tasks is not None:
                if caches:
                    ctx = tuple(
                        np.array(c, copy=True) if i in caches else c for i, c in enumerate(ctx)
                    )
                tasks.append((len(tasks), index, x, ctx))
                return np.zeros(shape, dtype)
            value = self.values[self.position]
            self.position += 1
            return value

        return taped_evaluate


def _through(method, tape, dispatcher, shipped, lock):
    """``method`` (a prepared Impl's) recording its evaluations, running them at once, replaying them."""

    def run(x, *rest):
        with lock:  # one tape per preparation: calls from several threads take turns
            tape.tasks = []
            try:
                method(x, *rest)
            finally:
                tasks, tape.tasks = tape.tasks, None
            # f as it is now: pickled afresh where it crosses into processes
            tape.values, tape.position = dispatcher.evaluate(shipped.now(), tasks, x), 0
            try:
                result = method(x, *rest)
            finally:
                tape.values = None
            if tape.position != len(tasks):  # the replay must take the recorded path exactly
                raise RuntimeError(
                    f"workers: the recipe evaluated f {tape.position} times on replay, {len(tasks)} "
                    "times while recording (a recipe that picks points from f's values)"
                )
            return result

    return run


def prepare_through_workers(adapter, prepare, problem):
    """``prepare(adapter, problem)``'s Impl with its evaluations of f running through the selector's workers."""
    workers = adapter.backend.workers
    if capture_of(problem.f) is not None:
        raise UnsupportedError(
            f"has_aux=True with {adapter.backend!r}: f's aux would be computed in a worker and not come back. "
            "Call without has_aux, or use workers=None"
        )
    taped = copy.copy(adapter)
    taped.tape = tape = Tape(problem)
    impl = prepare(taped, problem)
    # f (and everything it holds) pickled now, when it must cross into processes: refused at
    # preparation; pickled again at each call (Shipped.now)
    shipped = Shipped(tape.functions, processes=crosses_processes(workers))
    dispatcher = Dispatcher(workers, owner=impl)
    lock = threading.Lock()
    for name, method in list(vars(impl).items()):
        if callable(method):
            setattr(impl, name, _through(method, tape, dispatcher, shipped, lock))
    impl.dispatcher = dispatcher  # for di.close_workers(prep)
    return impl
