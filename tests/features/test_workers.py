"""``AutoFiniteDiff(workers=...)`` (issue #31): evaluations of f through threads, processes, a map-like callable and a
Dask cluster; results equal the serial ones bit for bit; failures name the evaluation; nothing hangs."""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import diffinterface as di
from diffinterface.backends.finitediff import workers as workers_module

METHODS = ("central", "forward", "complex")


def smooth(x):
    return np.sin(x).sum() * np.cos(x[0]) + (x[1:] * x[:-1]).sum() ** 2


def vector(x):
    return np.sin(x) * x[0] + np.cumsum(x) ** 2


def exits_past_five(x):
    """A simulation whose process dies (no exception, no cleanup) at some inputs."""
    if x[0] > 5:
        os._exit(3)
    return (x**2).sum()


@pytest.fixture(scope="module")
def threads():
    with ThreadPoolExecutor(4) as pool:
        yield pool


X = np.linspace(0.2, 1.1, 5)
TANGENTS = (np.ones(5), np.arange(5.0))


def results(backend, method_tag):
    """Every operator's results at X, prepared once each."""
    out = {}
    for name, f, extra in [
        ("gradient", smooth, ()),
        ("value_and_gradient", smooth, ()),
        ("jacobian", vector, ()),
        ("value_and_jacobian", vector, ()),
        ("hessian", smooth, ()),
        ("value_gradient_and_hessian", smooth, ()),
        ("hvp", smooth, (TANGENTS,)),
        ("gradient_and_hvp", smooth, (TANGENTS,)),
        ("pushforward", vector, (TANGENTS,)),
    ]:
        operator = name.split("_and_")[-1]
        prep = getattr(di, "prepare_" + operator)(f, backend, X, *extra)
        out[name] = getattr(di, name)(f, backend, X, *extra, prep=prep)
    out["derivative"] = di.derivative(np.sin, backend, 0.3)
    out["second_derivative"] = di.second_derivative(np.sin, backend, 0.3)
    return out


def assert_identical(a, b, where=""):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), where
        for u, v in zip(a, b):
            assert_identical(u, v, where)
        return
    assert type(a) is type(b), where
    assert np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b), where


# -- the selector --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["4", 2.0, True, [1, 2], 0, -2])
def test_workers_that_are_none_of_the_kinds_are_refused_naming_workers(value):
    with pytest.raises(
        (TypeError, ValueError),
        match=r"AutoFiniteDiff\(workers=...\) expected None.*a positive "
        r"int.*Executor.*dask.distributed.Client.*map-like.*got ",
    ):
        di.AutoFiniteDiff(workers=value)


def test_the_adaptive_method_takes_no_workers_and_says_why():
    with pytest.raises(
        ValueError, match=r"workers=.*method='adaptive', which picks each point from f's values"
    ):
        di.AutoFiniteDiff(method="adaptive", workers=2)


def test_workers_are_keyword_only_compared_by_identity_and_left_out_of_the_repr_when_none(threads):
    assert (
        repr(di.AutoFiniteDiff())
        == "AutoFiniteDiff(method='central', rel_step=None, abs_step=None)"
    )
    assert repr(di.AutoFiniteDiff(workers=3)).endswith(", workers=3)")
    assert di.AutoFiniteDiff(workers=threads) == di.AutoFiniteDiff(workers=threads)
    with ThreadPoolExecutor(1) as other:
        assert di.AutoFiniteDiff(workers=threads) != di.AutoFiniteDiff(workers=other)
    assert (
        len(
            {
                di.AutoFiniteDiff(workers=threads),
                di.AutoFiniteDiff(workers=threads),
                di.AutoFiniteDiff(),
            }
        )
        == 2
    )
    with pytest.raises(TypeError, match="too many positional"):
        di.AutoFiniteDiff("central", None, None, 4)


# -- results -------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", ["threads", "map"])
def test_every_operator_through_workers_equals_the_serial_result_bit_for_bit(method, kind, threads):
    workers = threads if kind == "threads" else threads.map
    serial = results(di.AutoFiniteDiff(method=method), method)
    parallel = results(di.AutoFiniteDiff(method=method, workers=workers), method)
    assert serial.keys() == parallel.keys()
    for name in serial:
        assert_identical(serial[name], parallel[name], f"{method} {kind} {name}")


def test_a_process_pool_gives_the_serial_results_bit_for_bit_and_closes():
    backend = di.AutoFiniteDiff(workers=2)
    for name, f, prepare in [
        ("hessian", smooth, di.prepare_hessian),
        ("jacobian", vector, di.prepare_jacobian),
    ]:
        prep = prepare(f, backend, X)
        assert_identical(
            getattr(di, name)(f, backend, X, prep=prep),
            getattr(di, name)(f, di.AutoFiniteDiff(), X),
        )
    pools = [pool for pool in workers_module._POOLS if pool.executor is not None]
    assert pools  # the last preparation is alive
    assert di.close_workers(prep) == 1 and di.close_workers(prep) == 0
    assert_identical(
        di.jacobian(vector, backend, X, prep=prep), di.jacobian(vector, di.AutoFiniteDiff(), X)
    )
    assert di.close_workers() >= 1
    assert all(pool.executor is None for pool in pools)
    # a closed pool is started again by the next call
    assert_identical(
        di.jacobian(vector, backend, X, prep=prep), di.jacobian(vector, di.AutoFiniteDiff(), X)
    )


def test_a_preparation_shuts_its_process_pool_down_when_garbage_collected():
    before = set(workers_module._POOLS)
    prep = di.prepare_gradient(smooth, di.AutoFiniteDiff(workers=1), X)
    (pool,) = set(workers_module._POOLS) - before
    assert pool.executor is not None
    del prep
    gc.collect()
    assert pool.executor is None


def test_the_evaluations_run_at_once_and_f_at_x_once(threads):
    running, most, lock, points, armed = [0], [0], threading.Lock(), [], []
    together = threading.Barrier(
        4, timeout=10
    )  # four evaluations must be running at once to pass it

    def f(x):
        if armed:
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
                points.append(x.copy())
            together.wait()
            with lock:
                running[0] -= 1
        return (x**2).sum()

    x = np.arange(1.0, 8.0)  # 8 evaluations: two rounds of four
    backend = di.AutoFiniteDiff(method="forward", workers=threads)
    prep = di.prepare_gradient(f, backend, x)
    armed.append(True)
    _, gradient = di.value_and_gradient(f, backend, x, prep=prep)
    assert most[0] == 4
    assert sum(np.array_equal(p, x) for p in points) == 1 and len(points) == 8
    np.testing.assert_allclose(gradient, 2 * x, rtol=1e-6)


def test_a_cache_gets_its_own_copy_per_evaluation(threads):
    def f(x, scratch):
        scratch[:] = x**2
        threading.Event().wait(
            0.001
        )  # let another evaluation write meanwhile, were the buffer shared
        return (scratch * x).sum()

    buffer = np.zeros(5)
    serial = di.hessian(f, di.AutoFiniteDiff(), X, di.Cache(buffer))
    assert_identical(di.hessian(f, di.AutoFiniteDiff(workers=threads), X, di.Cache(buffer)), serial)


def test_beside_a_cache_a_constant_reaches_each_evaluation_as_given(threads):
    settings = {"scale": 3.0}
    weights = np.linspace(1.0, 2.0, 5)
    seen = []

    def f(x, options, w, scratch):
        seen.append((options, w))
        scratch[:] = x**2
        return options["scale"] * (w * scratch).sum()

    backend = di.AutoFiniteDiff(workers=threads)
    contexts = di.Constant(settings), di.Constant(weights), di.Cache(np.zeros(5))
    gradient = di.gradient(f, backend, X, *contexts)
    np.testing.assert_allclose(gradient, 6 * weights * X, rtol=1e-8)
    # only the Cache is copied for each evaluation
    assert seen and all(options is settings and w is weights for options, w in seen)


# -- wrappers and scipy --------------------------------------------------------------------------


def test_autosparse_colors_and_second_order_outer_points_go_through_the_workers(threads):
    calls = []

    def banded(x):
        calls.append(threading.get_ident())
        return x[1:] ** 2 - x[:-1] + di.array_namespace(x).sin(x[1:])

    x = np.linspace(0.1, 2, 12)
    sparse, serial = (
        di.AutoSparse(di.AutoFiniteDiff(workers=threads)),
        di.AutoSparse(di.AutoFiniteDiff()),
    )
    assert np.array_equal(
        di.jacobian(banded, sparse, x).toarray(), di.jacobian(banded, serial, x).toarray()
    )
    assert len(set(calls)) > 1  # several threads evaluated f
    scalar = lambda x: (banded(x) ** 2).sum()
    assert np.array_equal(
        di.hessian(scalar, sparse, x).toarray(), di.hessian(scalar, serial, x).toarray()
    )
    import autograd  # noqa: F401 - a missing framework fails

    pair = di.SecondOrder(di.AutoFiniteDiff(workers=threads), di.AutoAutograd())
    same_serially = di.SecondOrder(di.AutoFiniteDiff(workers=map), di.AutoAutograd())
    assert_identical(di.hvp(smooth, pair, X, TANGENTS), di.hvp(smooth, same_serially, X, TANGENTS))


def test_scipy_minimize_runs_through_a_backend_with_workers(threads):
    from scipy.optimize import minimize

    from diffinterface.scipy import objective

    rosenbrock = lambda x: ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()
    x0 = np.full(4, -0.5)
    found = {}
    for label, backend in [
        ("serial", di.AutoFiniteDiff()),
        ("threads", di.AutoFiniteDiff(workers=threads)),
    ]:
        problem = objective(rosenbrock, backend, x0)
        found[label] = minimize(problem.fun, problem.x0, jac=problem.jac, method="BFGS").x
    assert np.array_equal(found["serial"], found["threads"])
    np.testing.assert_allclose(found["threads"], np.ones(4), atol=1e-4)


# -- failures ------------------------------------------------------------------------------------


def test_an_exception_in_one_evaluation_surfaces_chained_naming_it_before_the_others_finish(
    threads,
):
    release = threading.Event()
    finished = []

    def f(x):
        if x[2] != 1.0:
            raise ValueError("the solver diverged")
        if np.all(x == 1.0):  # x itself, evaluated once at preparation too
            return (x**2).sum()
        release.wait(30)  # the other evaluations are still running when the error must surface
        finished.append(1)
        return (x**2).sum()

    x = np.ones(4)
    try:
        with pytest.raises(
            di.WorkerError,
            match=r"f raised in a worker at evaluation 4 of 5 \(x moved at entry 2 by "
            r"\+[0-9.e-]+\): ValueError: the solver diverged",
        ) as caught:
            di.gradient(f, di.AutoFiniteDiff(method="forward", workers=threads), x, prep=None)
        assert not finished
    finally:
        release.set()
    assert isinstance(caught.value.__cause__, ValueError)
    assert any("raised in a worker" in note for note in caught.value.__cause__.__notes__)
    assert isinstance(caught.value, di.DifferentiationError)


def test_a_worker_process_that_dies_gives_an_error_and_the_next_call_a_fresh_pool():
    backend = di.AutoFiniteDiff(workers=2)
    prep = di.prepare_gradient(exits_past_five, backend, np.ones(3))
    with pytest.raises(
        di.WorkerError,
        match=r"evaluation \d of 6 \(x .*\) did not come back: BrokenProcessPool.*"
        r"A worker process that exits",
    ):
        di.gradient(exits_past_five, backend, np.full(3, 9.0), prep=prep)
    np.testing.assert_allclose(
        di.gradient(exits_past_five, backend, np.ones(3), prep=prep), 2 * np.ones(3), rtol=1e-8
    )


def test_an_f_that_cannot_reach_a_process_is_refused_at_preparation_naming_workers():
    lock = threading.Lock()

    def holds_a_lock(x):
        with lock:
            return (x**2).sum()

    with pytest.raises(
        di.WorkerError, match=r"workers: f \(or a context\) cannot be sent to another process.*lock"
    ):
        di.prepare_gradient(holds_a_lock, di.AutoFiniteDiff(workers=1), X)


def test_aux_outputs_are_refused_with_workers(threads):
    with pytest.raises(
        di.UnsupportedError,
        match=r"has_aux=True with AutoFiniteDiff\(.*workers=.*Call without has_aux, or use "
        r"workers=None$",
    ):
        di.gradient(
            lambda x: ((x**2).sum(), x[0]), di.AutoFiniteDiff(workers=threads), X, has_aux=True
        )


def test_a_recipe_whose_replay_evaluates_f_another_number_of_times_is_refused(threads):
    # every recipe of AutoFiniteDiff picks its points from x alone; one that picked them from f's
    # values would replay another path than it recorded, and must not return a result
    from diffinterface.backends.finitediff.through_workers import Tape, _through
    from diffinterface.backends.finitediff.workers import Dispatcher, Shipped

    class Problem:
        contexts = ()

    tape = Tape(Problem())
    evaluate = tape.taped(lambda point, ctx: float(point), (), np.float64)

    def recipe(x):
        total = evaluate(x, ())
        if total == 0:  # recorded at 0, replayed at f(x) = x
            total += evaluate(x + 1, ())
        return total

    shipped = Shipped(tape.functions, processes=False)
    run = _through(recipe, tape, Dispatcher(threads, owner=None), shipped, threading.Lock())
    assert run(0.0) == 1.0  # two evaluations both times
    with pytest.raises(
        RuntimeError,
        match=r"^workers: the recipe evaluated f 1 times on replay, 2 times while recording \(a "
        r"recipe that picks points from f's values\)$",
    ):
        run(1.0)


def test_import_diffinterface_imports_no_pool_and_no_dask():
    import subprocess
    import sys

    code = (
        "import sys, diffinterface; print(sorted(m for m in ('concurrent.futures', 'multiprocessing', 'dask', "
        "'distributed', 'cloudpickle') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=os.path.dirname(os.path.dirname(di.__file__)),
    )
    assert out.stdout.strip() == "[]"


def test_a_failed_evaluation_is_named_by_the_entries_x_moved_at():
    describe = workers_module._describe
    base = np.zeros((2, 3))

    def moved(*entries):
        point = base.copy().reshape(-1)
        point[list(entries)] = 0.5
        return point.reshape(base.shape)

    assert describe(base, base) == "x itself"
    assert describe(moved(4), base) == "x moved at entry 4 by +0.5"
    assert describe(moved(1, 2, 3, 5), base) == (
        "x moved at entries 1 by +0.5, 2 by +0.5, 3 by +0.5, 5 by +0.5"
    )
    assert describe(moved(0, 1, 2, 3, 4), base) == (
        "x moved at entries 0 by +0.5, 1 by +0.5, 2 by +0.5, 3 by +0.5 and 1 more"
    )
    assert describe(base + 0.5, base).endswith("3 by +0.5 and 2 more")
    assert describe(np.zeros(4), base) == "a point"  # another shape than x's


def test_a_worker_process_loads_each_shipped_set_once_and_keeps_the_latest_eight(monkeypatch):
    monkeypatch.setattr(workers_module, "_LOADED", {})
    first = workers_module.Shipped((lambda x, ctx: x + 1,), processes=True)
    token, payload = first.payload()
    loaded = workers_module._loaded(token, payload)
    assert loaded[0](1.0, ()) == 2.0 and workers_module._loaded(token, payload) is loaded
    # two sets unpickled in one process: each copy evaluates its own functions
    second = workers_module.Shipped((lambda x, ctx: x * 10,), processes=True)
    copies = [pickle.loads(pickle.dumps(s)) for s in (first, second)]
    assert [c((0, 0, 3.0, ())) for c in copies] == [4.0, 30.0]
    assert copies[0].functions is loaded
    others = [
        workers_module.Shipped((lambda x, ctx, k=k: x + k,), processes=True).payload()
        for k in range(7)
    ]
    for other in others:
        workers_module._loaded(*other)
    # the oldest set is dropped for the ninth
    assert list(workers_module._LOADED) == [second.payload()[0]] + [t for t, _ in others]


def test_an_f_that_cannot_be_pickled_is_refused_with_the_way_around(monkeypatch):
    lock = threading.Lock()
    functions = (lambda x, ctx: lock,)
    with pytest.raises(
        di.WorkerError,
        match=r"^workers: f \(or a context\) cannot be sent to another process: .*lock.*\. Where "
        r"f holds what cannot be pickled \(a lock, an open file, a compiled extension object\), "
        r"use threads \(a concurrent.futures.ThreadPoolExecutor\)$",
    ):
        workers_module.Shipped(functions, processes=True)
    monkeypatch.setitem(sys.modules, "cloudpickle", None)  # plain pickle: no lambda travels
    with pytest.raises(
        di.WorkerError,
        match=r"^workers: f \(or a context\) cannot be sent to another process: .*\. Where f "
        r"holds what cannot be pickled \(a lock, an open file, a compiled extension object\), "
        r"define f at module level, or install cloudpickle \(pip install cloudpickle\)$",
    ):
        workers_module.Shipped((lambda x, ctx: x,), processes=True)


def test_only_process_pools_and_clusters_count_as_crossing_processes():
    from concurrent.futures import ProcessPoolExecutor

    import distributed

    crosses = workers_module.crosses_processes
    with ProcessPoolExecutor(1) as processes:  # no process starts before a submit
        assert crosses(processes)
    # a Client's type is all that is read: one never connected is enough
    assert crosses(2) and crosses(distributed.Client.__new__(distributed.Client))
    with ThreadPoolExecutor(1) as threads:
        assert not crosses(threads)
    assert not crosses(map) and not crosses(threads.map)


class Unpicklable(Exception):
    def __init__(self, text):
        super().__init__(text)
        self.lock = threading.Lock()


def test_f_raising_through_a_map_like_callable_is_named_with_its_traceback(threads):
    def f(x):
        if x[1] != 1.0:
            raise Unpicklable("the mesh tangled")
        return (x**2).sum()

    with pytest.raises(
        di.WorkerError,
        match=r"^f raised in a worker at evaluation 3 of 4 \(x moved at entry 1 by \+[0-9.e-]+\): "
        r"RuntimeError: Unpicklable: the mesh tangled\. The same f evaluated serially "
        r"\(workers=None\) raises it too, with its traceback$",
    ) as caught:
        di.gradient(f, di.AutoFiniteDiff(method="forward", workers=threads.map), np.ones(3))
    # an exception that cannot be pickled comes back as its text, with the worker's traceback
    cause = caught.value.__cause__
    assert type(cause) is RuntimeError and str(cause) == "Unpicklable: the mesh tangled"
    (note,) = cause.__notes__
    assert note.startswith("raised in a worker:\nTraceback") and "the mesh tangled" in note


def test_a_map_like_callable_that_fails_itself_is_named(threads):
    def broken_map(func, tasks):
        raise ConnectionError("scheduler gone")

    with pytest.raises(
        di.WorkerError,
        match=r"^workers: the map-like callable .*broken_map.* raised ConnectionError while "
        r"evaluating f at 4 points: scheduler gone$",
    ) as caught:
        di.gradient(lambda x: (x**2).sum(), di.AutoFiniteDiff("forward", workers=broken_map), X[:3])
    assert isinstance(caught.value.__cause__, ConnectionError)


def failing_executor(error):
    """An Executor whose evaluations all fail with ``error`` (not f's: the pool's own)."""
    from concurrent.futures import Executor, Future

    class Failing(Executor):
        def submit(self, fn, *args, **kwargs):
            future = Future()
            future.set_exception(error)
            return future

    return Failing()


@pytest.mark.parametrize("error_type", ["OSError", "BrokenProcessPool"])
def test_an_evaluation_that_does_not_come_back_is_named_with_the_pools_error(error_type):
    from concurrent.futures.process import BrokenProcessPool

    error = OSError("lost") if error_type == "OSError" else BrokenProcessPool("lost")
    backend = di.AutoFiniteDiff(method="forward", workers=failing_executor(error))
    with pytest.raises(
        di.WorkerError,
        match=rf"^workers: evaluation 1 of 3 \(x itself\) did not come back: {error_type}: lost\. "
        r"A worker process that exits \(os\._exit, a crash, running out of memory\) ends the "
        r"batch$",
    ) as caught:
        di.gradient(lambda x: (x**2).sum(), backend, X[:2])
    assert caught.value.__cause__ is error


def test_shipped_functions_travel_by_value_when_pickle_cannot():
    shipped = workers_module.Shipped((lambda x, ctx: x + 1,), processes=True)
    copy = pickle.loads(pickle.dumps(shipped))
    assert copy((0, 0, 1.0, ())) == 2.0


def test_every_shipped_batch_has_its_own_token_even_where_python_reuses_an_address():
    # a worker keeps loaded functions by token; a token taken from id() came back for the next batch once the
    # previous one died, and the worker evaluated the dead batch's f
    tokens = {
        workers_module.Shipped((lambda x, ctx, k=k: x + k,), processes=True).payload()[0]
        for k in range(50)
    }
    assert len(tokens) == 50


def test_a_process_pool_evaluates_each_new_f_not_one_it_loaded_before():
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # one pool for every call (workers=2 would start a pool per preparation): its processes meet each batch
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver")) as pool:
        backend = di.AutoFiniteDiff(workers=pool)
        for k in range(1, 13):
            np.testing.assert_allclose(
                di.gradient(lambda x, k=k: k * (x**2).sum(), backend, X),
                2 * k * X,
                rtol=1e-6,
                err_msg=f"f number {k}",
            )


def changing_losses():
    """``(what, loss, change)``: ``scale * sum(x**2)`` whose scale ``change`` sets: a global, a closure cell,
    an attribute."""
    state = {"scale": 1.0}
    scale = 1.0

    class Model:
        scale = 1.0

        def loss(self, x):
            return self.scale * (x**2).sum()

    def set_cell(value):
        nonlocal scale
        scale = value

    model = Model()
    return (
        ("a global", lambda x: state["scale"] * (x**2).sum(), lambda v: state.update(scale=v)),
        ("a closure cell", lambda x: scale * (x**2).sum(), set_cell),
        ("an attribute", model.loss, lambda v: setattr(model, "scale", v)),
    )


def assert_sees_changes(workers):
    """Prepared gradients through ``workers`` follow f's state from call to call (issue #48)."""
    backend = di.AutoFiniteDiff(workers=workers)
    for what, loss, change in changing_losses():
        prep = di.prepare_gradient(loss, backend, X)
        for scale in (1.0, 3.0, 1.0, 2.0):
            change(scale)
            np.testing.assert_allclose(
                di.gradient(loss, backend, X, prep=prep), 2 * scale * X, rtol=1e-6, err_msg=what
            )


def test_a_prepared_call_through_processes_evaluates_f_as_it_is_at_the_call():
    assert_sees_changes(1)
    di.close_workers()


def test_an_unchanged_f_is_pickled_to_the_same_bytes_and_a_changed_one_to_others():
    # a worker process names what it loaded by the bytes' hash: an unchanged f is loaded once
    weights = np.ones(3)
    shipped = workers_module.Shipped((lambda x, ctx: weights @ x,), processes=True)
    token = shipped.payload()[0]
    assert shipped.now().payload()[0] == token and shipped.now() is not shipped
    weights[0] = 2.0
    assert shipped.now().payload()[0] != token


# -- a Dask cluster ------------------------------------------------------------------------------


@contextlib.contextmanager
def local_cluster(n_workers, processes):
    """A client of a local Dask cluster of ``n_workers`` one-thread workers (this is a 2-core machine)."""
    import distributed

    with (
        distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=processes, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def client():
    with local_cluster(2, processes=True) as client:
        yield client


def loaded_functions():
    """In a worker process: how many shipped sets of functions it loaded."""
    from diffinterface.backends.finitediff import workers

    return len(workers._LOADED)


def test_gradient_and_jacobian_on_a_dask_cluster_equal_the_serial_ones_bit_for_bit(client):
    backend, serial = di.AutoFiniteDiff(workers=client), di.AutoFiniteDiff()
    prep = di.prepare_gradient(smooth, backend, X)
    assert_identical(
        di.value_and_gradient(smooth, backend, X, prep=prep),
        di.value_and_gradient(smooth, serial, X),
    )
    prep = di.prepare_jacobian(vector, backend, X)
    assert_identical(di.jacobian(vector, backend, X, prep=prep), di.jacobian(vector, serial, X))
    loaded = client.run(loaded_functions)
    # the workers evaluated f (which of the two took tasks is the scheduler's choice)
    assert len(loaded) == 2 and sum(loaded.values()) >= 1


def test_an_exception_on_the_cluster_names_the_evaluation(client):
    def fails_at_entry_three(x):
        if x[3] != X[3]:
            raise ArithmeticError("no convergence")
        return (x**2).sum()

    # +e_3 and -e_3 both fail: the first to come back is named
    with pytest.raises(
        di.WorkerError,
        match=r"evaluation [78] of 10 \(x moved at entry 3 by .*ArithmeticError: no "
        r"convergence",
    ) as caught:
        di.gradient(fails_at_entry_three, di.AutoFiniteDiff(workers=client), X)
    assert isinstance(caught.value.__cause__, ArithmeticError)


def test_the_cluster_evaluates_each_new_f_not_one_it_loaded_before(client):
    backend = di.AutoFiniteDiff(workers=client)
    for k in range(1, 13):
        np.testing.assert_allclose(
            di.gradient(lambda x, k=k: k * (x**2).sum(), backend, X),
            2 * k * X,
            rtol=1e-6,
            err_msg=f"f number {k}",
        )


def test_scipy_minimize_drives_a_simulator_on_the_cluster(client):
    from scipy.optimize import minimize

    from diffinterface.scipy import objective

    x0 = np.full(3, 0.5)
    problem = objective(smooth, di.AutoFiniteDiff(workers=client), x0)
    serial = objective(smooth, di.AutoFiniteDiff(), x0)
    bounds = [(0.0, 1.5)] * 3
    found = minimize(problem.fun, problem.x0, jac=problem.jac, method="L-BFGS-B", bounds=bounds)
    expected = minimize(serial.fun, serial.x0, jac=serial.jac, method="L-BFGS-B", bounds=bounds)
    assert found.success and np.array_equal(found.x, expected.x) and found.nit == expected.nit


def test_the_cluster_evaluates_f_as_it_is_at_each_prepared_call(client):
    assert_sees_changes(client)


def test_an_in_process_cluster_evaluates_f_as_it_is_at_each_prepared_call():
    with local_cluster(1, processes=False) as client:
        assert_sees_changes(client)
