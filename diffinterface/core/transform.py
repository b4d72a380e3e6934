"""The values a preparation passes through its feature transforms (:mod:`diffinterface.core.prepare`).

A feature that cuts across operators (aux outputs, pytrees, complex x, ...)
is one *transform*: a function ``rewrite(draft, setting) -> Step | None``.
It looks at the :class:`Draft` (the call as rewritten so far), returns None
when it does not apply, and otherwise a :class:`Step`: the rewritten draft
(validating only what the feature owns) and ``wrap``, which turns the
:class:`Built` preparation of the rewritten call into the one of the call it
was given. The pipeline folds the rewrites in their declared order, builds
the implementation once, from the last draft, and applies the wraps in
reverse order.

    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.core.prepare import TRANSFORMS
    >>> [t.name for t in TRANSFORMS][:3]
    ['aux_outputs', 'hand_over', 'complex_view']
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

from .preparation import Call


class Setting(NamedTuple):
    """What holds for the whole preparation: the adapter and how the preparation will be used.

    ``one_off`` marks the preparation of an unprepared call (used once);
    ``learn_output`` learns f's output at preparation even where the adapter
    would learn it from each call (``output_from_each_call``).
    """

    adapter: Any
    strict: bool
    one_off: bool = False
    learn_output: bool = False


class Draft(NamedTuple):
    """The call being prepared, as the transforms so far rewrote it, and what they learned.

    ``aux``: the :class:`~diffinterface.core.aux.AuxCapture` f evaluates
    through, for adapters computing aux natively; ``spec``: the output's
    shape and dtype once learned; ``ytree``: the plan of a pytree output;
    ``tree``: the plan of a pytree x handed to the adapter as it is;
    ``leaf_dtypes``: ``(slice, dtype)`` of each leaf of a flattened x of
    several dtypes.
    """

    call: Call
    aux: Any = None
    spec: Any = None
    ytree: Any = None
    tree: Any = None
    leaf_dtypes: Optional[tuple] = None


class Built(NamedTuple):
    """A built preparation: what a :class:`~diffinterface.core.preparation.Plan` holds.

    ``problem`` is the :class:`~diffinterface.core.problem.Problem` the
    adapter prepared (None for a preparation handed over whole);
    ``methods`` the (plain, valued) prepared methods; ``tree`` and ``ytree``
    the plans of a pytree x and output as the caller passes them.
    """

    problem: Any
    impl: Any
    spec: Any
    methods: tuple
    tree: Any = None
    ytree: Any = None


class Step(NamedTuple):
    """What a transform that applies returns: the rewritten draft and the wrap of the built result.

    ``built``, when given, is the whole preparation, made elsewhere (an
    AutoSelect hands the call over to the candidate it chose): the fold
    stops there.
    """

    draft: Draft
    wrap: Optional[Callable[[Built], Built]] = None
    built: Optional[Built] = None


#: a feature transform's rewrite: ``rewrite(draft, setting) -> Step | None``
Rewrite = Callable[[Draft, Setting], Optional[Step]]
