"""The conformance kit over every selected backend: one test, written once.

Ids read ``backend-operator-scenario-dtype-family``; select backends with
``--di-backends=id,id`` or ``DI_BACKENDS``. A listed backend whose framework
does not import fails here (MissingBackendError), it is never skipped; a case a
backend declares it cannot run (two-argument f without in-place support) checks
that the backend refuses it with UnsupportedError and leaves y untouched.
"""


def test_first_order(di_case):
    di_case.check()


def test_second_order(di_second_order_case):
    di_second_order_case.check()


def test_pytree_x(di_pytree_case):
    di_pytree_case.check()


def test_empty_arrays(di_edge_case):
    di_edge_case.check()


def test_bad_inputs(di_bad_input_case):
    di_bad_input_case.check()


def test_batch_sizes(di_batch_case):
    di_batch_case.check()


def test_workers(di_worker_case):
    di_worker_case.check()


def test_auxiliary_outputs(di_aux_case):
    di_aux_case.check()


def test_same_point_preparations(di_same_point_case):
    di_same_point_case.check()


def test_complex_numbers(di_complex_case):
    di_complex_case.check()
