"""Arrays of another family than x's in a call: Constants converted, seeds refused by name.

A ``Constant`` holding an array of another family than x's and than the one
the backend computes in (a JAX array for a numpy x on AutoFiniteDiff, say)
is converted to x's family, dtype kept, before f sees it (DESIGN "Arrays"),
so that f computes in one family and its results come back in x's. Which
contexts need it is decided at preparation, from their families; only then
do the prepared methods convert those values at each call (a Constant's value
may change between calls). Values of a family that exists only inside a
traced function (autograd's boxes) are left as they are.

Tangents and cotangents must be in x's family: :func:`require_family` refuses
another one by name at preparation (a pytree seed's leaves are compared with
x's or y's by the tree plan, family included).

Not converted: a ``Cache`` (f writes into the very buffer it was given, so a
copy in another family would not do), and a Constant holding a pytree (its
leaves reach f as they are).

    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.core.foreign import require_family
    >>> require_family(np.ones(2), "numpy", "tangents[0]", "x")
"""

from __future__ import annotations

from ..contexts import Constant
from ..families import FAMILIES, describe, family_of, is_array
from .pytree import TreePlan
from .transform import Step


def require_family(seed, family, name, like_name):
    """Raise a TypeError naming ``name`` unless the array ``seed`` is of ``family`` (x's)."""
    given = family_of(seed)
    if given != family:
        raise TypeError(
            f"{name}: expected a {family} array like {like_name}; got {describe(seed)}. Convert it to "
            f"{like_name}'s family yourself (diffinterface does not guess which device or framework you meant)."
        )


def _foreign(value, family, adapter):
    if value.__class__ in (float, int) or not is_array(value):  # Python numbers reach f as they are
        return False
    own = family_of(value)
    return own != family and own != adapter.capabilities.framework and FAMILIES[own].concrete


def foreign_constants(contexts, family, adapter):
    """The positions of the ``Constant`` contexts whose array values must be converted to ``family``."""
    return tuple(
        i
        for i, c in enumerate(contexts)
        if isinstance(c, Constant) and _foreign(c.value, family, adapter)
    )


def _convert(value, family):
    return FAMILIES[family].from_dlpack(value)


def converted_contexts(contexts, positions, family):
    """``contexts`` with the Constants at ``positions`` holding their values in ``family``."""
    return tuple(
        Constant(_convert(c.value, family)) if i in positions else c for i, c in enumerate(contexts)
    )


def converting_contexts(methods, positions, seeded, family):
    """The (plain, valued) ``methods`` converting the context values at ``positions`` at each call."""
    first = 2 if seeded else 1  # the contexts follow x (and the seeds)
    at = tuple(first + i for i in positions)

    def converted(args):
        args = list(args)
        for i in at:
            args[i] = _convert(args[i], family)
        return args

    plain, valued = methods
    return (lambda *args: plain(*converted(args))), (lambda *args: valued(*converted(args)))


def foreign_contexts(draft, setting):
    """The transform of Constants of another family: f sees them in x's; each call converts them."""
    call = draft.call
    if not call.contexts:
        return None
    family = family_of(call.x) if is_array(call.x) else TreePlan(call.x).family
    positions = foreign_constants(call.contexts, family, setting.adapter)
    if not positions:
        return None
    seeded = call.op.seeds is not None

    def wrap(built):
        return built._replace(methods=converting_contexts(built.methods, positions, seeded, family))

    converted = converted_contexts(call.contexts, positions, family)
    return Step(draft._replace(call=call._replace(contexts=converted)), wrap)
