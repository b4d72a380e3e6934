"""The contract every layer shares and none above it owns.

- :mod:`.operator_table`: the table of operator families, which each module of ``operators/`` fills (``register_operator``);
- :mod:`.problem`: ``Problem``, ``Spec``, seeded batches, the fallback registry;
- :mod:`.adapter`: the adapter contract (``Adapter``, ``Impl``);
- :mod:`.registry`: the open backend registry (``register_backend``, ``get_adapter``);
- :mod:`.signature`: the signature of a prepared call, and the report of a mismatch;
- :mod:`.preparation`: ``Preparation``, its ``Plan`` and the named record of a ``Call``;
- :mod:`.prepare`: ``prepare``: the arguments validated once, the feature transforms folded
  (:mod:`.transform`; one module each), the implementation built once (:mod:`.build`);
- :mod:`.call`: the one prepared-call path (``prepared_call``, the public functions' decorator, and ``call``, their body);
- :mod:`.pytree`, :mod:`.output_tree`: pytree inputs and outputs;
- :mod:`.empty`: empty problems, answered from shapes by each operator's rule;
- :mod:`.boundary`: errors raised inside f, explained;
- :mod:`.bridge`: what DifferentiateWith's framework bridges share.

The core imports no operator, backend or wrapper.
"""

from .adapter import Adapter, Impl, owned
from .capabilities import Capabilities
from .call import call, prepared_call
from .operator_table import OPERATORS, RULES, Operator, operators_of_order, register_operator
from .prepare import check_tangents, prepare
from .preparation import Call, Preparation
from .pytree import TreePlan, flatten
from .problem import FALLBACKS, Problem, Seeded, Spec, require_scalar_output
from .registry import (
    check_available,
    check_inplace,
    get_adapter,
    register_backend,
    registration,
    registrations,
)

__all__ = [
    "Adapter",
    "Capabilities",
    "Impl",
    "owned",
    "Call",
    "call",
    "prepared_call",
    "check_tangents",
    "prepare",
    "OPERATORS",
    "RULES",
    "Operator",
    "Preparation",
    "operators_of_order",
    "register_operator",
    "FALLBACKS",
    "Problem",
    "Seeded",
    "Spec",
    "require_scalar_output",
    "TreePlan",
    "flatten",
    "check_available",
    "check_inplace",
    "get_adapter",
    "register_backend",
    "registration",
    "registrations",
]
