"""The namespace of torch tensors: array-api-compat's torch, with symmetric-matrix routines that read the symmetric part.

``torch.linalg.cholesky``, ``eigh`` and ``eigvalsh`` read one triangle of
their argument. torch's reverse-mode rules for them return the symmetric
gradient, but its forward-mode rules use the whole tangent, so along a
non-symmetric tangent a pushforward and a pullback of the same function
disagree (and a Jacobian depends on which mode its shape picks). Here the
three read the symmetric part ``(x + x.mT) / 2``, as ``jax.numpy.linalg``
does: for a symmetric x the value is torch's, bit for bit, and both modes
give the same derivative on every backend. ``asarray`` of a tensor passes its
``requires_grad`` on, which torch otherwise warns about. Everything else is
array-api-compat's torch namespace itself.

    >>> import torch
    >>> from diffinterface.families import torch_namespace as xp
    >>> a = torch.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=torch.float64)
    >>> bool(torch.equal(xp.linalg.cholesky(a), torch.linalg.cholesky(a)))
    True
"""

from __future__ import annotations

import types

import array_api_compat.torch as _compat
import array_api_compat.torch.linalg as _compat_linalg
from torch import Tensor as _Tensor


def _symmetric_part(x):
    return (x + x.mT) / 2


def _cholesky(x, /, *, upper=False):
    return _compat_linalg.cholesky(_symmetric_part(x), upper=upper)


def _eigh(x, /):
    return _compat_linalg.eigh(_symmetric_part(x))


def _eigvalsh(x, /):
    return _compat_linalg.eigvalsh(_symmetric_part(x))


def asarray(obj, /, *, dtype=None, device=None, copy=None, **kwargs):
    """array-api-compat's ``asarray``, with a tensor's ``requires_grad`` passed on explicitly.

    Left unspecified, torch warns on every tensor that records gradients
    (``torch.asarray: unspecified requires_grad``) that its default now
    follows the tensor's: that is the array API's meaning (the result stays in
    x's graph), so it is said here, and a user's own warnings stay visible.
    """
    if isinstance(obj, _Tensor) and "requires_grad" not in kwargs:
        kwargs["requires_grad"] = obj.requires_grad
    return _compat.asarray(obj, dtype=dtype, device=device, copy=copy, **kwargs)


linalg = types.ModuleType(__name__ + ".linalg", _compat_linalg.__doc__)
linalg.__dict__.update(
    {name: value for name, value in vars(_compat_linalg).items() if not name.startswith("__")}
)
linalg.__dict__.update(
    cholesky=_cholesky, eigh=_eigh, eigvalsh=_eigvalsh, __all__=list(_compat_linalg.__all__)
)

__all__ = list(_compat.__all__)


def __getattr__(name):
    # the rest of the namespace is array-api-compat's; a name read once is kept here, so that
    # later reads are plain module attributes (functions call ``xp.sin`` on every evaluation)
    value = getattr(_compat, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
