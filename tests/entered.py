"""Which functions of the library a call runs, for tests of the route a call takes."""

from __future__ import annotations

import os
import sys

import diffinterface as di

_PACKAGE = os.path.dirname(di.__file__)


def functions_entered(run, *modules):
    """The names of the functions of ``modules`` (paths in the package, ``"core/check.py"``) that
    ``run()`` enters."""
    names = set()
    watched = {os.path.join(_PACKAGE, *module.split("/")) for module in modules}

    def record(frame, event, arg):
        if event == "call" and frame.f_code.co_filename in watched:
            names.add(frame.f_code.co_name)

    sys.setprofile(record)
    try:
        run()
    finally:
        sys.setprofile(None)
    return names
