"""Complete the static reading of ``diffinterface`` with what only exists once its modules are imported.

Three things are made at import time: the operators' docstrings (written from
the operator table by ``diffinterface/operators/_docs.py``), the shared
sections of other docstrings (a ``$name`` line in the source, filled by
``diffinterface.docstrings.shared_sections``) and the
constructor signatures of the frozen classes (selectors, contexts, sparsity
configuration: ``diffinterface.frozen.Frozen`` builds ``__init__`` from the
fields). This griffe extension imports, for each such object the static
reading leaves without a docstring or a constructor, or with a docstring
holding a ``$name`` line, only the module that defines it, and copies the
docstring or the signature over; it touches only the objects that
``diffinterface.__all__`` and ``diffinterface.scipy.__all__`` name. Importing a
module of ``diffinterface`` imports no framework (``diffinterface.scipy``
imports scipy), so building the site needs none (griffe's own inspection would
import every submodule, the backends' frameworks included).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import griffe

from diffinterface.docstrings import SECTION_LINE

_PUBLIC_PACKAGE = "diffinterface"
#: the subpackages whose ``__all__`` the reference lists too
_PUBLIC_SUBPACKAGES = ("scipy",)


def _runtime(obj: griffe.Object) -> Any:
    module = importlib.import_module(obj.module.path)
    value: Any = module
    for part in obj.path[len(obj.module.path) + 1 :].split("."):
        value = getattr(value, part)
    return value


def _constructor(cls: griffe.Class, runtime: type) -> griffe.Function:
    parameters = []
    for p in inspect.signature(runtime).parameters.values():
        annotation = (
            None
            if p.annotation is inspect.Parameter.empty
            else (
                p.annotation
                if isinstance(p.annotation, str)
                else getattr(p.annotation, "__name__", repr(p.annotation))
            )
        )
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        parameters.append(
            griffe.Parameter(
                p.name,
                annotation=annotation,
                kind=griffe.ParameterKind(p.kind.description),
                default=default,
            )
        )
    return griffe.Function(
        "__init__",
        lineno=cls.lineno,
        endlineno=cls.lineno,
        parameters=griffe.Parameters(*parameters),
        parent=cls,
    )


def _public_definitions(pkg: griffe.Module):
    """The objects that ``pkg.__all__`` names, where they are defined."""
    for name in pkg.exports or ():
        member = pkg.members.get(str(name))
        target = member.final_target if isinstance(member, griffe.Alias) else member
        # a function named like its module (operators/gradient.py's gradient) is shadowed by that module
        if target is not None and target.is_module and str(name) in target.members:
            inner = target.members[str(name)]
            target = inner.final_target if isinstance(inner, griffe.Alias) else inner
        if target is not None:
            yield target


def _complete(obj: griffe.Object) -> None:
    if obj.docstring is not None and SECTION_LINE.search(obj.docstring.value):
        obj.docstring = griffe.Docstring(inspect.getdoc(_runtime(obj)) or "", parent=obj)
    if obj.is_function and obj.docstring is None:
        text = inspect.getdoc(_runtime(obj))
        if text:
            obj.docstring = griffe.Docstring(text, parent=obj)
    elif obj.is_class and "__init__" not in obj.members:
        runtime = _runtime(obj)
        if (
            "__signature__" in vars(runtime)
            or getattr(runtime, "__init__", None) is not object.__init__
        ):
            try:
                obj.set_member("__init__", _constructor(obj, runtime))
            except (TypeError, ValueError):  # no signature to read (a builtin's)
                pass


class RuntimeDocstringsAndSignatures(griffe.Extension):
    """Copy import-time docstrings and frozen classes' signatures into griffe's static reading."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name == _PUBLIC_PACKAGE:
            for package in (pkg, *(pkg.members[name] for name in _PUBLIC_SUBPACKAGES)):
                for obj in _public_definitions(package):
                    _complete(obj)
