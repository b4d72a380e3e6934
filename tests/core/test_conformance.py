"""The conformance kit over every selected backend: one test per group of cases, written once.

The tests are made from the kit's one list of groups
(``diffinterface.testing.pytest_plugin.GROUPS``), the list ``pytest --pyargs
diffinterface.testing`` runs too (``diffinterface/testing/test_kit_conformance.py``),
so the two cannot drift: ``test_first_order``, ``test_second_order``, ``test_pytree_x``,
``test_empty_arrays``, ``test_bad_inputs``, ``test_inside_framework_transforms``, ``test_batch_sizes``, ``test_workers``,
``test_auxiliary_outputs``, ``test_same_point_preparations``, ``test_complex_numbers``.

Ids read ``backend-operator-scenario-dtype-family``; select backends with
``--di-backends=id,id`` or ``DI_BACKENDS``. A listed backend whose framework
does not import fails here (MissingBackendError), it is never skipped; a case a
backend declares it cannot run (two-argument f without in-place support) checks
that the backend refuses it with UnsupportedError and leaves y untouched.
"""

from diffinterface.testing.pytest_plugin import conformance_tests

globals().update(conformance_tests(__name__))
