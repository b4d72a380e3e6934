"""Conformance tests shipped with the kit, for ``pytest --pyargs diffinterface.testing``.

Run with the plugin loaded: ``pytest --pyargs diffinterface.testing -p
diffinterface.testing.pytest_plugin --di-backends=finitediff,mypkg.di:BACKEND``.
"""


def test_first_order(di_case):
    di_case.check()


def test_second_order(di_second_order_case):
    di_second_order_case.check()
