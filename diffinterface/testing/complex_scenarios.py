"""The kit's cases for complex x, one per backend and scenario: every backend follows one convention.

The convention (:mod:`diffinterface.core.complex_convention`): for a real f
of complex x, ``gradient`` is ``∂f/∂Re(x) + i ∂f/∂Im(x)`` (so ``x - lr * g``
descends); for a holomorphic f, ``jacobian``, ``derivative`` and
``pushforward`` are the complex derivative ``J``, ``pullback(u)`` is ``Jᴴ u``.
The scenarios:

- ``real_loss``: ``sum(real(z*z) + abs(z)**2)`` has the gradient ``4 Re(z)``,
  complex dtype kept (complex128 and complex64), prepared and not, at a numpy x
  and at one of the backend's framework's own arrays; 50 steps
  of ``z - 0.05 g`` drive it to about 0; ``hvp(t)`` is ``4 Re(t)``; prepared with
  a context mixing a number and a string, called with others;
- ``holomorphic``: ``sin(z) * z``: Jacobian, pushforward, pullback, the
  gradient of ``Re <u, f(z)>`` equal to the pullback of ``u``; derivative and
  second derivative at a complex scalar;
- ``mixed_tree``: x a dict of a complex and a real leaf: gradient,
  pushforward, jacobian and pullback leaf by leaf, each leaf in its own dtype; a
  prepared gradient with a context mixing a number and a string;
- ``refusals``: a real tangent for a complex x, a complex cotangent for a
  real output, ``hessian``, and a ``jacobian`` of a real-valued f are refused
  by errors naming the argument.

A backend that declares it cannot differentiate complex x
(``capabilities.complex_x_refusal`` of its adapter, as the complex step does) must refuse
every scenario with ``UnsupportedError`` naming x. A backend returning zeros
by design is checked for dtypes and shapes only.

    >>> import diffinterface as di
    >>> from diffinterface.testing.complex_scenarios import complex_cases
    >>> [c.id for c in complex_cases({"fd": di.AutoFiniteDiff()})]
    ['fd-complex-real_loss', 'fd-complex-holomorphic', 'fd-complex-mixed_tree', 'fd-complex-refusals']
    >>> complex_cases({"fd": di.AutoFiniteDiff()})[0].check().status
    'passed'
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core import get_adapter
from ..core.complex_convention import complex_x_refusal
from ..errors import UnsupportedError
from ..families import array_namespace, as_numpy, dtype_name
from .cases import ProbeCase
from .families import CONVERTIBLE_FAMILIES, convert

Z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])
T = np.array([0.5 - 1j, 2 + 0.3j, -1 + 1j])
U = np.array([1 + 1j, -0.5 + 2j, 0.25 - 0.75j])


def real_loss(z):
    xp = array_namespace(z)
    return xp.sum(xp.real(z * z) + xp.abs(z) ** 2)


def holomorphic(z):
    xp = array_namespace(z)
    return xp.sin(z) * z


def _tree_loss(x):
    xp = array_namespace(x["b"])
    return xp.sum(xp.abs(x["w"]) ** 2 * x["b"]) + xp.sum(x["b"] ** 2)


def _configured_loss(x, config):
    """``config["scale"]`` times :func:`real_loss` (or :func:`_tree_loss`), or its negative where
    ``config["sign"]`` is "-": a context mixing a number and a string."""
    loss = _tree_loss(x) if isinstance(x, dict) else real_loss(x)
    return config["scale"] * (loss if config["sign"] == "+" else -loss)


def _tree_map(x):
    return x["w"] * x["b"]


def _own_family(backend):
    """The family of the backend's framework where it computes in it and it is not numpy, else None."""
    capabilities = get_adapter(backend).capabilities
    own = capabilities.framework
    if own == "numpy" or own not in capabilities.families or own not in CONVERTIBLE_FAMILIES:
        return None
    return own


def _dtypes_held(family):
    """The complex dtypes among complex128 and complex64 that ``family`` has arrays of (MLX: complex64)."""
    if family is None:
        return ()
    held = []
    for dtype in ("complex128", "complex64"):
        try:
            convert(np.zeros(1, dtype), family)
        except TypeError:  # the family's own refusal of the dtype, naming it
            continue
        held.append(dtype)
    return tuple(held)


class _Found:
    """Notes a sentence when ``got`` (any family) differs from ``wanted`` or has another dtype."""

    def __init__(self, found, values_known, rtol=1e-5, atol=1e-6):
        self.found, self.values_known, self.rtol, self.atol = found, values_known, rtol, atol

    def close(self, what, got, wanted, dtype=None):
        dtype = dtype or np.asarray(wanted).dtype.name
        if dtype_name(got) != dtype:
            self.found.append(f"{what}: dtype {dtype_name(got)}, expected {dtype}")
        got = as_numpy(got)
        if got.shape != np.shape(wanted):
            self.found.append(f"{what}: shape {got.shape}, expected {np.shape(wanted)}")
        elif self.values_known and not np.allclose(got, wanted, rtol=self.rtol, atol=self.atol):
            self.found.append(f"{what}: {got}, expected {np.asarray(wanted)}")

    def raises(self, what, call, error, *words):
        try:
            call()
        except error as raised:
            message = str(raised)
            missing = [w for w in words if w not in message]
            if missing:
                self.found.append(
                    f"{what}: the {error.__name__} does not name {missing}: {message}"
                )
            return
        except Exception as raised:  # noqa: BLE001 - reported
            self.found.append(
                f"{what}: {type(raised).__name__} ({raised}), expected {error.__name__}"
            )
            return
        self.found.append(f"{what}: no error, expected {error.__name__}")


@dataclasses.dataclass
class ComplexCase(ProbeCase):
    """One backend under one complex scenario (``operator`` names it); ``check()`` raises on failure."""

    backend_id: str
    backend: object
    operator: str
    zeros: bool = False
    kind = "complex"

    def _run(self, found):
        check = _Found(found, values_known=not self.zeros)
        if complex_x_refusal(get_adapter(self.backend)):
            import diffinterface as di

            check.raises(
                "gradient at a complex x",
                lambda: di.gradient(real_loss, self.backend, Z),
                UnsupportedError,
                "x:",
                "complex",
            )
            return
        getattr(self, "_" + self.operator)(check)

    def _real_loss(self, check):
        import diffinterface as di

        b = self.backend
        for z, dtype in ((Z, "complex128"), (Z.astype(np.complex64), "complex64")):
            check.rtol = 1e-5 if dtype == "complex128" else 1e-3
            check.close(
                f"gradient ({dtype})",
                di.gradient(real_loss, b, z),
                4 * z.real.astype(z.dtype),
                dtype,
            )
        own = _own_family(b)
        for dtype in _dtypes_held(own):  # the framework's own arrays: another path in some adapters
            check.rtol = 1e-5 if dtype == "complex128" else 1e-3
            z = convert(Z.astype(dtype), own)
            prep = di.prepare_gradient(real_loss, b, z)
            wanted = 4 * Z.real.astype(dtype)
            check.close(
                f"gradient (a {own} {dtype} x)", di.gradient(real_loss, b, z), wanted, dtype
            )
            got = di.gradient(real_loss, b, z, prep=prep)
            check.close(f"prepared gradient (a {own} {dtype} x)", got, wanted, dtype)
            value, got = di.value_and_gradient(real_loss, b, z, prep=prep)
            check.close(f"prepared value_and_gradient (a {own} {dtype} x)", got, wanted, dtype)
        check.rtol = 1e-5
        value, g = di.value_and_gradient(real_loss, b, Z)
        check.close("value_and_gradient's gradient", g, 4 * Z.real + 0j)
        check.close("value_and_gradient's value", value, real_loss(Z))
        prep = di.prepare_gradient(real_loss, b, Z)
        z = Z.copy()
        for _ in range(50):
            z = z - 0.05 * di.gradient(real_loss, b, z, prep=prep)
        if check.values_known and not real_loss(z) < 1e-6 * real_loss(Z):
            check.found.append(
                f"50 steps of z - 0.05 g: the loss went from {real_loss(Z)} to {real_loss(z)}, not ~0"
            )
        (pulled,) = di.pullback(
            real_loss, b, Z, (np.asarray(2.0),)
        )  # a real cotangent for a real output
        check.close("pullback of the real loss", pulled, 8 * Z.real + 0j)
        (h,) = di.hvp(real_loss, b, Z, (T,))
        check.close("hvp", h, 4 * T.real + 0j)
        config = di.Constant({"scale": 2.0, "sign": "+"})
        prep = di.prepare_gradient(_configured_loss, b, Z, config)
        for scale, sign in ((3.0, "+"), (0.5, "-")):
            other = di.Constant({"scale": scale, "sign": sign})
            value, g = di.value_and_gradient(_configured_loss, b, Z, other, prep=prep)
            factor = scale if sign == "+" else -scale
            what = f"prepared value_and_gradient with the context {{'scale': {scale}, 'sign': '{sign}'}}"
            check.close(f"{what}: gradient", g, factor * 4 * Z.real + 0j)
            check.close(f"{what}: value", value, factor * real_loss(Z))
        if not np.array_equal(Z, np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])):
            check.found.append("x was modified")

    def _holomorphic(self, check):
        import diffinterface as di

        b = self.backend
        jacobian = np.diag(np.cos(Z) * Z + np.sin(Z))
        check.close("jacobian", di.jacobian(holomorphic, b, Z), jacobian)
        (pushed,) = di.pushforward(holomorphic, b, Z, (T,))
        check.close("pushforward", pushed, jacobian @ T)
        value, (pulled,) = di.value_and_pullback(holomorphic, b, Z, (U,))
        check.close("pullback", pulled, jacobian.conj().T @ U)
        check.close("value_and_pullback's value", value, holomorphic(Z))

        def overlap(z):  # Re <u, f(z)>: its gradient is the pullback of u
            xp = array_namespace(z)
            return xp.sum(xp.real(xp.conj(xp.asarray(U)) * holomorphic(z)))

        check.close("gradient of Re <u, f(z)>", di.gradient(overlap, b, Z), jacobian.conj().T @ U)
        z = np.asarray(0.5 - 0.25j)
        check.close("derivative", di.derivative(holomorphic, b, z), np.cos(z) * z + np.sin(z))
        check.rtol, check.atol = 1e-4, 1e-5  # finite differences of second order
        check.close(
            "second_derivative",
            di.second_derivative(holomorphic, b, z),
            2 * np.cos(z) - z * np.sin(z),
        )

    def _mixed_tree(self, check):
        import diffinterface as di

        b = self.backend
        x = {"w": Z, "b": np.array([0.5, -1.0, 2.0])}
        g = di.gradient(_tree_loss, b, x)
        check.close("gradient['w']", g["w"], 2 * Z * x["b"])
        check.close("gradient['b']", g["b"], np.abs(Z) ** 2 + 2 * x["b"])
        config = di.Constant({"scale": 2.0, "sign": "+"})
        prep = di.prepare_gradient(_configured_loss, b, x, config)
        other = di.Constant({"scale": 3.0, "sign": "-"})
        g = di.gradient(_configured_loss, b, x, other, prep=prep)
        check.close(
            "prepared gradient['w'] with a context {'scale': 3.0, 'sign': '-'}",
            g["w"],
            -6 * Z * x["b"],
        )
        tangent = {"w": T, "b": np.array([1.0, 0.5, -0.25])}
        (pushed,) = di.pushforward(_tree_map, b, x, (tangent,))
        check.close("pushforward", pushed, T * x["b"] + Z * tangent["b"])
        jacobian = di.jacobian(
            _tree_map, b, x
        )  # complex, C-linear in w and (as a complex map) in b
        check.close("jacobian['w']", jacobian["w"], np.diag(x["b"]) + 0j)
        check.close("jacobian['b']", jacobian["b"], np.diag(Z))
        (pulled,) = di.pullback(_tree_map, b, x, (U,))
        check.close("pullback['w']", pulled["w"], x["b"] * U)
        check.close("pullback['b']", pulled["b"], np.real(np.conj(Z) * U))

    def _refusals(self, check):
        import diffinterface as di

        b = self.backend
        check.raises(
            "a real tangent for a complex x",
            lambda: di.pushforward(holomorphic, b, Z, (T.real,)),
            TypeError,
            "tangents[0]",
            "complex128",
        )
        check.raises(
            "a complex cotangent for a real output",
            lambda: di.pullback(real_loss, b, Z, (np.asarray(1 + 0j),)),
            TypeError,
            "cotangents[0]",
        )
        check.raises(
            "hessian at a complex x", lambda: di.hessian(real_loss, b, Z), UnsupportedError, "hvp"
        )
        check.raises(
            "jacobian of a real-valued f",
            lambda: di.jacobian(lambda z: z.real * z.imag, b, Z),
            UnsupportedError,
            "holomorphic",
        )
        check.raises(
            "gradient of a complex-valued f",
            lambda: di.gradient(lambda z: array_namespace(z).sum(z * z), b, Z),
            TypeError,
            "real-valued",
        )


#: the scenarios, in order
SCENARIOS = ("real_loss", "holomorphic", "mixed_tree", "refusals")


def complex_cases(backends, zero=()):
    """A :class:`ComplexCase` per backend (a selector, or a dict id -> selector) and scenario.

    ``zero``: ids of backends returning zeros by design (checked for dtypes and shapes only).
    """
    if not isinstance(backends, dict):
        backends = {type(backends).__name__: backends}
    return [ComplexCase(k, b, name, k in zero) for k, b in backends.items() for name in SCENARIOS]
