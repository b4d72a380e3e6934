"""``AutoJAX(devices=...)``: a sweep's seeds split across devices, in the one compiled computation.

A sweep (Jacobian columns or rows, Hessian rows, batched pushforwards,
pullbacks and hvps, AutoSparse's colors) stacks its seeds along a leading
axis and maps one product over it (``transforms._mapped``). With devices,
that axis is constrained to be sharded over them
(``lax.with_sharding_constraint``, before and after the vmapped product):
XLA's partitioner then runs each device's share of the seeds on that device,
in the computation ``jax.jit`` compiled at preparation, and the stacked
products come out sharded the same way. Seeds that do not divide evenly are
padded with zero seeds, whose products are dropped. Where the selector also
bounds the batch (``batch_size`` or ``memory_budget``), each batch (rounded
up to a multiple of the devices) is split across them and the batches run
one after the other (``lax.map``).

The devices are a sequence of ``jax.Device`` (a one-axis mesh is made of
them) or a ``jax.sharding.Mesh``, whose every axis then splits the seeds.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec


class ShardedSweep:
    """How a sweep maps its product over the seeds: split across ``sharding``'s devices, in batches of
    ``batch`` seeds (None: all at once; else rounded up to a multiple of the devices, so each batch splits
    evenly). Given where ``transforms`` takes a batch size."""

    def __init__(self, sharding, batch):
        self.sharding = sharding
        self.devices = len(sharding.device_set)
        self.batch = None if batch is None else -(-batch // self.devices) * self.devices

    def _constrained(self, tree):
        return jax.tree_util.tree_map(
            lambda a: lax.with_sharding_constraint(a, self.sharding), tree
        )

    def _split(self, fn, seeds):
        """``vmap(fn)(seeds)`` with the seeds, padded with zeros to a multiple of the devices, split across them."""
        n = seeds.shape[0]
        padding = -n % self.devices
        if padding:
            seeds = jnp.concatenate([seeds, jnp.zeros((padding, *seeds.shape[1:]), seeds.dtype)])
        products = self._constrained(jax.vmap(fn)(self._constrained(seeds)))
        return jax.tree_util.tree_map(lambda a: a[:n], products) if padding else products

    def map(self, fn, stacked):
        """``vmap(fn)(stacked)``, the leading axis of its input and output split across the devices."""
        n, batch = stacked.shape[0], self.batch
        if batch is None or batch >= n:
            return self._split(fn, stacked)
        full = n // batch * batch
        head = lax.map(
            lambda seeds: self._split(fn, seeds),
            stacked[:full].reshape((n // batch, batch, *stacked.shape[1:])),
        )
        head = jax.tree_util.tree_map(lambda a: a.reshape((full, *a.shape[2:])), head)
        if full == n:
            return head
        tail = self._split(fn, stacked[full:])
        return jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), head, tail)


def seed_sharding(devices):
    """The sharding that splits a leading (seed) axis over ``devices`` (a Mesh: over all its axes)."""
    mesh = (
        devices if isinstance(devices, Mesh) else Mesh(np.array(devices, dtype=object), ("seeds",))
    )
    return NamedSharding(mesh, PartitionSpec(tuple(mesh.axis_names)))


def sharded_sweep(devices, batch):
    """The :class:`ShardedSweep` of a selector's ``devices`` and a batch bound (None: whole)."""
    return ShardedSweep(seed_sharding(devices), batch)
