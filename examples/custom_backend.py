"""A new backend in about 30 lines, checked by the conformance kit.

Run: python examples/custom_backend.py

A backend is two small classes: a selector (a frozen dataclass: configuration
only) and an adapter that implements one primitive. This one is the complex
step, forward mode: the directional derivative of an analytic ``f`` at ``x``
along ``t`` is ``Im f(x + i h t) / h``, exact to rounding for tiny ``h``.
Everything else (gradients, Jacobians, Hessians, ``out=``, ``y=`` refusals,
preparation checks) comes from diffinterface's fallbacks, and the
conformance kit checks all of it against the contract.
"""

import dataclasses

import numpy as np

import diffinterface as di
from diffinterface.core import Adapter, Capabilities, Impl
from diffinterface.testing import default_scenarios, test_differentiation


# -- the backend: ~30 lines ----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class AutoComplexStep(di.AbstractBackend):
    """Complex-step differentiation with step ``h`` (f must be analytic and accept complex arrays)."""

    h: float = 1e-30


class ComplexStepAdapter(Adapter):
    capabilities = Capabilities(mode="forward")  # the native primitive is the pushforward

    def prepare_pushforward(self, problem):
        f, h = problem.f, self.backend.h
        dtype = problem.spec.dtype  # f's output dtype, learned once at preparation

        def pushforward(x, tangents, *ctx):
            x = np.asarray(
                x
            )  # a Python float x would become a Python complex, which no namespace takes
            return tuple(
                np.asarray(np.imag(f(x + 1j * h * np.asarray(t), *ctx)) / h, dtype=dtype)
                for t in tangents
            )

        def value_and_pushforward(x, tangents, *ctx):
            return np.asarray(f(x, *ctx)), pushforward(x, tangents, *ctx)

        return Impl(pushforward=pushforward, value_and_pushforward=value_and_pushforward)


di.register_backend(AutoComplexStep, ComplexStepAdapter)  # <- the one line that plugs it in
# ------------------------------------------------------------------------------------------------------


def main():
    x = np.array([0.5, -1.0, 2.0])
    gradient = di.gradient(lambda x: np.sum(np.sin(x) * x**2), AutoComplexStep(), x)
    print(
        "gradient of sum(sin(x) x^2):",
        gradient,
        "(analytic:",
        np.cos(x) * x**2 + 2 * x * np.sin(x),
        ")",
    )

    # The kit: every first-order scenario in float64, numpy in and out.
    scenarios = [s for s in default_scenarios() if s.dtype == "float64"]
    report = test_differentiation(
        AutoComplexStep(), scenarios, families=("numpy",), raise_on_failure=False
    )
    print(report)
    if not report.ok:
        raise SystemExit("the complex-step backend does not meet the contract")
    print(f"the complex-step backend passes all {len(report.passed)} conformance cases")


if __name__ == "__main__":
    main()
