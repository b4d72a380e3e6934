"""Run a slow simulator's finite differences on a Dask cluster.

Run: python examples/dask_cluster.py

``AutoFiniteDiff(workers=client)`` sends the evaluations of ``f`` that one
gradient needs (two per parameter, central differences) to a Dask cluster at
once and gathers them in order, so the gradient equals the serial one bit for
bit. Here a ``LocalCluster`` of two worker processes; a ``Client`` connected
to a real cluster is used the same way. The simulator sleeps 20 ms per run to
stand for an expensive model: the serial gradient waits for each run in turn.
"""

import time

import numpy as np
from distributed import Client, LocalCluster

import diffinterface as di


def simulate(params):
    """An expensive model: 20 ms per run, a smooth scalar of 8 parameters."""
    time.sleep(0.02)
    return float(np.sum(np.sin(params) * np.arange(1, params.size + 1)))


def main():
    x = np.linspace(0.1, 0.8, 8)
    serial = di.AutoFiniteDiff()
    start = time.perf_counter()
    expected = di.gradient(simulate, serial, x)
    serial_time = time.perf_counter() - start

    cluster = LocalCluster(n_workers=2, threads_per_worker=4, dashboard_address=None)
    with cluster, Client(cluster) as client:
        backend = di.AutoFiniteDiff(workers=client)
        prep = di.prepare_gradient(simulate, backend, x)
        di.gradient(simulate, backend, x, prep=prep)  # the workers load f once
        start = time.perf_counter()
        grad = di.gradient(simulate, backend, x, prep=prep)
        cluster_time = time.perf_counter() - start
    print(f"gradient on the cluster: {np.array2string(grad, precision=6)}")
    print(
        f"16 runs of 20 ms: serial {serial_time:.2f} s, on 2 x 4 Dask workers {cluster_time:.2f} s"
    )
    if not np.array_equal(grad, expected):
        raise SystemExit("MISMATCH: the cluster's gradient differs from the serial one")
    print("the Dask cluster's gradient equals the serial one bit for bit")


if __name__ == "__main__":
    main()
