"""A prepared call goes down the layers once: the public function, the one check, the adapter's method.

The route is read at run time: the Python frames of diffinterface's own modules
that a prepared call enters, in order (a profiler hook records each call).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing.backends import BACKENDS

_ROOT = os.path.dirname(di.__file__)


def _route(run):
    """The diffinterface modules whose functions ``run()`` enters, in order (repeats in a row merged)."""
    modules = []

    def record(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(_ROOT):
            module = os.path.relpath(frame.f_code.co_filename, _ROOT).replace(os.sep, "/")
            if not modules or modules[-1] != module:
                modules.append(module)

    sys.setprofile(record)
    try:
        run()
    finally:
        sys.setprofile(None)
    return modules


def _layer(module):
    return module.split("/")[0]


_CALLS = {
    "gradient": (di.prepare_gradient, di.gradient, ()),
    "jacobian": (di.prepare_jacobian, di.jacobian, ()),
    "hvp": (di.prepare_hvp, di.hvp, ((np.linspace(1.0, 2.0, 5),),)),
}


@pytest.mark.parametrize("operator", list(_CALLS))
@pytest.mark.parametrize("backend", list(BACKENDS.values()), ids=list(BACKENDS))
def test_a_prepared_call_at_an_array_goes_down_without_coming_back(backend, operator):
    prepare, run, seeds = _CALLS[operator]
    f = (
        (lambda x: x[1:] * x[:-1])
        if operator == "jacobian"
        else (lambda x: di.array_namespace(x).sum(x**3))
    )
    x = np.linspace(0.5, 1.5, 5)
    prep = prepare(f, backend, x, *seeds)
    run(f, backend, x, *seeds, prep=prep)  # first calls may still compile or learn
    route = _route(lambda: run(f, backend, x, *seeds, prep=prep))
    # the public function's frame is core/call.py's (prepared_call): no operators/ frame, and the check first
    assert route[0] == "core/call.py", route
    layers = [_layer(m) for m in route]
    assert "operators" not in layers and "wrappers" not in layers, route
    # once in the backend, nothing climbs back up into the core
    first_backend = next((i for i, layer in enumerate(layers) if layer == "backends"), len(layers))
    assert "core" not in layers[first_backend:], route
    # and no core module is entered twice
    core = route[:first_backend]
    assert len(core) == len(set(core)), route
