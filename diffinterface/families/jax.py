"""The JAX family: JAX arrays and tracers, and ``jax.experimental.sparse.BCOO`` as its sparse type.

JAX keeps float64 only under x64: every method building a 64-bit array
switches x64 on for the current thread only, never globally. Nothing here
imports JAX until a method is called.

    >>> import numpy as np
    >>> from diffinterface.families import FAMILIES
    >>> jax_family = FAMILIES["jax"]
    >>> jax_family.from_numpy(np.ones(2), None).dtype
    dtype('float64')
"""

from __future__ import annotations

import sys

import numpy as np

from .base import Family, dtype_name
from .registry import as_numpy


def x64_call(fn, wide):
    """``fn`` called under a thread-local x64 when ``wide`` (its operands are 64-bit while x64 is off), else ``fn``."""
    if not wide:
        return fn
    import jax

    swap, restore = jax.enable_x64.swap_local, jax.enable_x64.set_local

    def call(*args):
        previous = swap(True)
        try:
            return fn(*args)
        finally:
            restore(previous)

    return call


def jax_devices(devices):
    """``devices`` as ``AutoJAX`` keeps them: a ``jax.sharding.Mesh``, or a tuple of ``jax.Device``; else an error."""
    jax = sys.modules.get("jax")  # a device or a mesh exists only once JAX was imported
    if jax is not None and isinstance(devices, jax.sharding.Mesh):
        return devices
    if (
        jax is not None
        and isinstance(devices, (list, tuple))
        and devices
        and all(isinstance(d, jax.Device) for d in devices)
    ):
        return tuple(devices)
    raise TypeError(
        "AutoJAX(devices=...) expected None (JAX's default device), a non-empty list of jax.Device (jax.devices()) "
        f"or a jax.sharding.Mesh; got {devices!r}"
    )


def _device_of(like):
    from jax.core import Tracer

    # a tracer's device is decided by the transform tracing it: it has none to ask
    if isinstance(like, Tracer) or not hasattr(like, "devices"):
        return None
    return like.devices().pop()


class JaxFamily(Family):
    """JAX arrays and tracers (immutable: no ``out=``); namespace ``jax.numpy``; sparse matrices: BCOO."""

    name = "jax"
    modules = ("jax", "jaxlib")
    namespace_module = "jax.numpy"
    precedence = 2
    metadata = "aval"
    sparse_modules = ("jax.experimental.sparse",)
    sparse_type = "JAX sparse matrices (BCOO)"
    traced_by = "jax.jit, jax.vmap or jax.grad"
    traced_value_errors = frozenset(
        (
            "TracerArrayConversionError",
            "ConcretizationTypeError",
            "TracerBoolConversionError",
            "TracerIntegerConversionError",
        )
    )
    limits = (
        (
            "the total number of repeats must be static",
            "an array of repeats (xp.repeat), whose result's shape depends on its values",
            "pass the repeats as a Python int or tuple, or use AutoJAX(jit=False), which runs f with "
            "values",
        ),
        (
            "can't apply forward-mode autodiff (jvp) to a custom_vjp function",
            "forward mode through a jax.custom_vjp function, which has reverse-mode rules only",
            'pass AutoJAX(mode="reverse"), or give the function forward rules with jax.custom_jvp',
        ),
    )

    def has_values(self, a):
        from jax.core import Tracer

        return not isinstance(a, Tracer)

    def from_numpy(self, a, like):
        import jax

        # JAX truncates float64 to float32 unless x64 is on: switch it on for this thread only.
        with jax.enable_x64(a.dtype in (np.float64, np.complex128)):
            return jax.device_put(a, like.device if hasattr(like, "device") else None)

    def from_dlpack(self, a):
        import jax

        if isinstance(a, jax.Array):
            return a
        # float64 survives only under x64; the switch is thread-local and undone on exit.
        with jax.enable_x64(dtype_name(a) in ("float64", "complex128")):
            if hasattr(a, "__dlpack__") and not isinstance(a, np.ndarray):
                return jax.dlpack.from_dlpack(
                    a.detach() if hasattr(a, "detach") else a
                )  # a torch tensor: shared
            return jax.numpy.asarray(as_numpy(a))

    def cast(self, a, dtype):
        return a.astype(dtype)

    # complex128 and float64 survive only under x64 (thread-local, undone on exit), here as in
    # from_numpy
    def real_view(self, a):
        import jax

        with jax.enable_x64(a.dtype == np.complex128):
            return jax.numpy.stack((a.real, a.imag), axis=-1)

    def complex_from_parts(self, re, im):
        import jax

        with jax.enable_x64(re.dtype == np.float64):
            return jax.lax.complex(re, im)

    def ravel(self, leaves, dtype):
        import jax

        # float64 exists in JAX only under x64: on for this thread only
        with jax.enable_x64(dtype == "float64"):
            return jax.numpy.concatenate(
                [(a if dtype_name(a) == dtype else a.astype(dtype)).reshape(-1) for a in leaves]
            )

    def stack(self, arrays, axis=0):
        import jax.numpy as jnp

        return jnp.stack(arrays, axis=axis)

    def device(self, a):
        return _device_of(a)

    def to_device(self, a, device):
        import jax

        platform, _, index = device.partition(":")
        try:
            target = jax.devices(platform)[int(index or 0)]
        except (RuntimeError, IndexError, ValueError) as error:
            raise ValueError(
                f"device: expected a JAX platform and an index JAX has, such as 'gpu', 'gpu:0' or "
                f"'cpu:1'; got {device!r} ({error})"
            ) from None
        with jax.enable_x64(dtype_name(a) in ("float64", "complex128")):
            return jax.device_put(a, target)

    # -- BCOO -------------------------------------------------------------------------------------

    def sparse_format(self, a):
        return "bcoo"

    def sparse_values(self, matrix):
        return matrix.data

    def sparse_coordinates(self, matrix):
        indices = np.asarray(matrix.indices)
        return np.asarray(matrix.data), indices[:, 0], indices[:, 1]

    def index_array(self, indices, like):
        import jax

        # JAX indexes with int32 unless x64 is on
        return jax.device_put(np.asarray(indices, dtype=np.int32), _device_of(like))

    def mapped(self, fn):
        import jax

        return jax.vmap(fn)

    def keeping_dtype(self, fn, like):
        import jax

        return x64_call(
            fn, str(like.dtype) in ("float64", "complex128") and not jax.enable_x64.get_global()
        )

    def compiled(self, fn, like):
        import jax

        # float64 values while x64 is off globally: the compiled function must run under x64 (this
        # thread only), or JAX would truncate them to float32.
        return x64_call(
            jax.jit(fn),
            str(like.dtype) in ("float64", "complex128") and not jax.enable_x64.get_global(),
        )

    def sparse_builder(self, rows, cols, shape, like):
        from jax.experimental.sparse import BCOO

        indices = self.index_array(np.stack([rows, cols], axis=1), like)
        return lambda data: BCOO(
            (data, indices), shape=shape, indices_sorted=True, unique_indices=True
        )

    def dense_builder(self, rows, cols, shape, dense_shape, like):
        import jax.numpy as jnp

        rows, cols = self.index_array(rows, like), self.index_array(cols, like)
        return lambda data: (
            jnp.zeros(shape, dtype=data.dtype).at[rows, cols].set(data).reshape(dense_shape)
        )
