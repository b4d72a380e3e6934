"""The base of wrapper adapters: every operator is the wrapped adapter's unless the wrapper overrides it.

``SecondOrderAdapter`` (its inner backend) and ``SparseAdapter`` (its dense
backend) are backends made of a backend: they take the wrapped adapter's
mode, in-place support, batch size and array families, hand it the problem
(with ``adapter=`` replaced) for the output's shape and for every operator of
the table, and override only the operators they build themselves.

    >>> import diffinterface as di
    >>> from diffinterface.core import get_adapter
    >>> adapter = get_adapter(di.SecondOrder(di.AutoFiniteDiff(), di.AutoFiniteDiff()))
    >>> adapter.delegate is adapter.inner, adapter.capabilities.mode
    (True, 'forward')
"""

from __future__ import annotations

from ..core import Adapter, Capabilities


class DelegatingAdapter(Adapter):
    """An adapter that passes each operator's preparation to ``delegate`` (the wrapped backend's adapter).

    Parameters
    ----------
    backend : selector
        The wrapper's selector.
    delegate : Adapter
        The adapter of the wrapped backend.
    """

    def __init__(self, backend, delegate):
        super().__init__(backend)
        self.delegate = delegate
        self.capabilities = delegate_capabilities(type(self).capabilities, delegate.capabilities)

    def parts(self):
        return (self, *self.delegate.parts())

    def delegated(self, problem):
        """``problem`` as the wrapped adapter's."""
        return problem.replace(adapter=self.delegate)

    def choose_mode(self, operator, problem):
        return self.delegate.choose_mode(operator, problem)

    def output_spec(self, problem):
        return self.delegate.output_spec(self.delegated(problem))

    def prepare_evaluation(self, problem):
        return self.delegate.prepare_evaluation(self.delegated(problem))

    def prepare(self, operator, problem):
        """``operator`` as this wrapper prepares it (its own ``prepare_<operator>``), else the wrapped
        backend's."""
        if operator in self.preparations:
            return super().prepare(operator, problem)
        return self.delegated(problem).impl(operator)


def delegate_capabilities(own: Capabilities, delegate: Capabilities) -> Capabilities:
    """``own`` (a wrapper's declared facts) with the wrapped adapter's mode, in-place support, batch
    bound and array families."""
    return own.replace(
        mode=delegate.mode,
        inplace=delegate.inplace,
        max_batch=delegate.max_batch,
        families=delegate.families,
    )
