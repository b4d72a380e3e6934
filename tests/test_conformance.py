"""The conformance kit over every selected backend: one test, written once.

Ids read ``backend-operator-scenario-dtype-family``; select backends with
``--di-backends=id,id`` or ``DI_BACKENDS``. A listed backend whose framework
does not import fails here (MissingBackendError), it is never skipped; cases a
backend cannot run by its declared capabilities are skipped with the reason.
"""


def test_first_order(di_case):
    di_case.check()


def test_second_order(di_second_order_case):
    di_second_order_case.check()
