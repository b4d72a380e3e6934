"""Which functions of the library a call runs, for tests of the route a call takes."""

from __future__ import annotations

import os
import re
import sys

import diffinterface as di

_PACKAGE = os.path.dirname(di.__file__)
# under mutmut a function runs as its original or a mutant, renamed ``x_<name>__mutmut_orig`` (a
# method ``xǁClassǁ<name>__mutmut_3``): the test names the function it means
_MUTMUT_NAME = re.compile(r"x(?:ǁ\w+ǁ|_)(\w+?)__mutmut_(?:orig|\d+)")


def functions_entered(run, *modules):
    """The names of the functions of ``modules`` (paths in the package, ``"core/check.py"``) that
    ``run()`` enters."""
    names = set()
    watched = {os.path.join(_PACKAGE, *module.split("/")) for module in modules}

    def record(frame, event, arg):
        if event == "call" and frame.f_code.co_filename in watched:
            name = frame.f_code.co_name
            mutant = _MUTMUT_NAME.fullmatch(name)
            names.add(mutant.group(1) if mutant else name)

    sys.setprofile(record)
    try:
        run()
    finally:
        sys.setprofile(None)
    return names
