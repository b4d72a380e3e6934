"""Stand-in for TensorFlow, which the trial does not install.

pymanopt's test modules and examples import tensorflow at module level even
where a test uses another backend; this module lets them import. Any use of
it raises AttributeError (what libraries that probe for TensorFlow, such as
matplotlib, expect of a module without it), so the TensorFlow-parametrized
tests (deselected by run.py) can never pass by accident.
"""


def __getattr__(name: str) -> object:
    raise AttributeError(
        f"tensorflow.{name}: TensorFlow is not installed for the pymanopt trial "
        "(tools/client_trials/pymanopt/stubs/tensorflow stands in for it)"
    )
