"""The contract every layer shares and none above it owns.

- :mod:`.operator_table`: the operator families, once;
- :mod:`.problem`: ``Problem``, ``Spec``, seeded batches, the fallback registry;
- :mod:`.adapter`: the adapter contract (``Adapter``, ``Impl``);
- :mod:`.registry`: the open backend registry (``register_backend``, ``get_adapter``);
- :mod:`.preparation`: preparation objects and their checks;
- :mod:`.call`: the one prepared-call path (``prepare``, ``call``).

The core imports no operator, backend or wrapper.
"""

from .adapter import Adapter, Impl
from .call import call, check_tangents, prepare, prepared_fast_path
from .operator_table import FIRST_ORDER, OPERATORS, SECOND_ORDER, Operator
from .preparation import Preparation
from .pytree import TreePlan, flatten
from .problem import FALLBACKS, Problem, Seeded, Spec, require_scalar_output
from .registry import check_available, check_inplace, get_adapter, register_backend, registration, registrations

__all__ = [
    "Adapter", "Impl", "call", "check_tangents", "prepare", "prepared_fast_path",
    "FIRST_ORDER", "OPERATORS", "SECOND_ORDER", "Operator", "Preparation",
    "FALLBACKS", "Problem", "Seeded", "Spec", "require_scalar_output", "TreePlan", "flatten",
    "check_available", "check_inplace", "get_adapter", "register_backend", "registration", "registrations",
]
