"""``Frozen``: the base of the package's small immutable value classes (selectors, registry and table rows).

A subclass declares its fields as annotated class attributes, as a
``@dataclass(frozen=True)`` would, and gets the same behaviour: a constructor
taking the fields positionally or by keyword with their defaults,
``__post_init__`` run after it, a repr like ``AutoJAX(mode=None, jit=True)``,
equality and hashing by the field values (``eq=False``: by identity), and
assignment raising :class:`FrozenInstanceError`.

    >>> from typing import Optional
    >>> class Point(Frozen):
    ...     x: float
    ...     label: Optional[str] = None
    >>> Point(1.0), Point(1.0) == Point(x=1.0), len({Point(1.0), Point(1.0, "a")})
    (Point(x=1.0, label=None), True, 2)
    >>> Point(1.0).x = 2.0
    Traceback (most recent call last):
    ...
    diffinterface.frozen.FrozenInstanceError: cannot assign to field 'x'

Why not ``dataclasses``: a dataclass compiles its methods' source with
``exec`` when its class is defined, a cost every process importing
diffinterface paid once per class (a noticeable part of a cold start; see
``benchmarks/README.md``); here no source is compiled: the methods are shared, each class
records its fields and gets a constructor closing over them. The fields live
in the instance's ``__dict__``, in order, which equality and hashing read.
"""

from __future__ import annotations

import inspect
import typing
from typing import TYPE_CHECKING, Any, ClassVar, Optional

if TYPE_CHECKING:  # typing has it from Python 3.11 on; mypy reads typing_extensions' stub
    from typing_extensions import dataclass_transform
else:
    dataclass_transform = getattr(typing, "dataclass_transform", lambda **options: lambda cls: cls)

_MISSING = inspect.Parameter.empty


class FrozenInstanceError(AttributeError):
    """Raised on an assignment to (or deletion of) a field of a :class:`Frozen` value."""


def _field_names(cls) -> tuple:
    """The fields, base classes' first: every annotated class attribute (``ClassVar`` ones excepted)."""
    names: dict = {}
    for klass in reversed(cls.__mro__):
        for name, annotation in vars(klass).get("__annotations__", {}).items():
            if "ClassVar" not in str(annotation):
                names[name] = None
    return tuple(names)


def _constructor(cls, names: tuple, signature: inspect.Signature):
    """``cls.__init__``: the fields set from the arguments, then ``__post_init__``; its
    ``__signature__`` (what ``help`` and the docs show) is the fields'."""
    defaults = {
        p.name: p.default for p in signature.parameters.values() if p.default is not _MISSING
    }
    # fields with defaults come last (the signature checked it): the defaults of the trailing
    # fields a positional call leaves out
    trailing = tuple(defaults.values())
    required = len(names) - len(trailing)
    positional = sum(
        p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in signature.parameters.values()
    )
    post_init = getattr(cls, "__post_init__", None)

    def wrong_call(args, kwargs):
        try:
            signature.bind(*args, **kwargs)
        except TypeError as error:
            return TypeError(f"{cls.__name__}{signature}: {error}")
        return TypeError(f"{cls.__name__}{signature}: expected its fields")  # not reached

    def __init__(self, *args, **kwargs):
        if len(args) > positional:
            raise wrong_call(args, kwargs)
        if kwargs:
            given = len(args)
            try:
                args = args + tuple(
                    kwargs.pop(name) if name in kwargs else defaults[name] for name in names[given:]
                )
            except KeyError:
                raise wrong_call(args, kwargs) from None
            if kwargs:  # an unknown keyword, or one also given positionally
                raise wrong_call(args[:given], {**dict(zip(names[given:], args[given:])), **kwargs})
        elif len(args) != len(names):
            if not required <= len(args) <= len(names):
                raise wrong_call(args, kwargs)
            args = args + trailing[len(args) - required :]
        # the instance's __dict__ holds the fields in order: equality and hashing read it
        self.__dict__.update(zip(names, args))
        if post_init is not None:
            post_init(self)

    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    __init__.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_parameter, *signature.parameters.values()], return_annotation=None
    )
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__  # documented with its class (the docs inspect it)
    return __init__


#: how many distinct values of one class are kept for reuse (see :class:`_FrozenType`)
_KEPT_PER_CLASS = 256
#: the first item of the key of a call with one keyword argument (no positional argument starts with
#: it)
_ONE_KEYWORD = object()
#: between the positional arguments and the keyword items of any other key
_KEYWORDS = object()


class _FrozenType(type):
    """The metaclass of :class:`Frozen`: a call with arguments seen before returns the value built then.

    A selector is often written inline in each call (``di.gradient(f, di.AutoJAX(), x, prep=prep)``):
    reusing the value makes that construction a dictionary look-up, after the first, and makes
    equal selectors the same object, which the prepared path compares by identity first. The key
    holds the arguments' types too, so ``AutoJAX(jit=1)`` is validated (and refused) even after
    ``AutoJAX(jit=True)``: ``1 == True`` would otherwise find that value. Unhashable arguments,
    classes with ``eq=False`` (identity semantics) and classes past ``_KEPT_PER_CLASS`` distinct
    values are built afresh each time; so are values holding an argument of another type (an
    Executor, a dask Client, a device), which the cache would otherwise keep alive.
    """

    def __call__(cls, *args, **kwargs):
        kept = cls._frozen_kept
        if kept is None:
            return super().__call__(*args, **kwargs)
        # a marker before the keyword items: a positional argument that is a (name, value) pair
        # never makes the key of a keyword
        if kwargs:
            if (
                not args and len(kwargs) == 1
            ):  # the common inline form, AutoJAX(mode="forward"): no iterators
                (item,) = kwargs.items()
                key = (_ONE_KEYWORD, item, item[1].__class__)
            else:
                key = (
                    *args,
                    _KEYWORDS,
                    *kwargs.items(),
                    *map(type, args),
                    *map(type, kwargs.values()),
                )
        elif args:
            key = (*args, *map(type, args))
        else:
            key = ()
        try:
            value = kept.get(key)
        except TypeError:  # an unhashable argument: nothing to look up
            value = None
            kept = None
        if value is None:
            if (args or kwargs) and not cls.__frozen_fields__:
                raise _no_arguments(cls, args, kwargs)
            value = super().__call__(*args, **kwargs)
            if (
                kept is not None
                and len(kept) < _KEPT_PER_CLASS
                and _plain((*args, *kwargs.values()))
            ):
                kept[key] = value
        return value


#: argument types a kept value may hold: an object such as an Executor or a dask Client given as an
#: argument is not kept alive by the cache (its value is built afresh each time)
_PLAIN = (type(None), bool, int, float, str, tuple, frozenset)


def _plain(arguments):
    """True when every argument is of a plain type, tuples and frozen values (selectors) of them too."""
    for a in arguments:
        if isinstance(type(a), _FrozenType):
            if not _plain(getattr(a, name) for name in a.__frozen_fields__):
                return False
        elif not isinstance(a, _PLAIN) or (isinstance(a, (tuple, frozenset)) and not _plain(a)):
            return False
    return True


def _no_arguments(cls, args, kwargs):
    """The TypeError for arguments given to a class without fields: what was given, and the class's advice."""
    given = ", ".join([*map(repr, args), *(f"{name}={value!r}" for name, value in kwargs.items())])
    first = f"{next(iter(kwargs))}=..." if kwargs and not args else "..."
    advice = getattr(cls, "__frozen_no_arguments__", "")
    return TypeError(
        f"{cls.__name__}({first}): {cls.__name__} takes no arguments; got {given}"
        + (f". {advice}" if advice else "")
    )


@dataclass_transform(frozen_default=True)
class Frozen(metaclass=_FrozenType):
    """Base class of an immutable value with declared fields (see the module's docstring).

    Examples
    --------
    >>> class Pair(Frozen):
    ...     first: int
    ...     second: int = 0
    >>> import inspect
    >>> Pair(1), Pair(1, second=2) == Pair(1, 2), inspect.signature(Pair)
    (Pair(first=1, second=0), True, <Signature (first: 'int', second: 'int' = 0) -> None>)
    """

    __slots__ = ()
    #: the fields, in order (set for each subclass)
    __frozen_fields__: ClassVar[tuple] = ()
    #: field -> default, for those that have one
    __frozen_defaults__: ClassVar[dict] = {}
    #: the values built so far, by their arguments (None: each call builds one; see _FrozenType)
    _frozen_kept: ClassVar[Optional[dict]] = None

    def __init_subclass__(cls, *, eq: bool = True, **options: Any) -> None:
        super().__init_subclass__(**options)
        names = _field_names(cls)
        defaults = {}
        parameters = []
        for name in names:
            default = next((vars(k)[name] for k in cls.__mro__ if name in vars(k)), _MISSING)
            if default is not _MISSING:
                defaults[name] = default
            annotation = next(
                (
                    vars(k)["__annotations__"][name]
                    for k in cls.__mro__
                    if name in vars(k).get("__annotations__", {})
                ),
                _MISSING,
            )
            # fields a class lists in __frozen_keyword_only__ (added later to a class whose
            # positional arguments callers already rely on) are given by keyword only, as after a
            # dataclass's KW_ONLY
            kind = (
                inspect.Parameter.KEYWORD_ONLY
                if name in getattr(cls, "__frozen_keyword_only__", ())
                else inspect.Parameter.POSITIONAL_OR_KEYWORD
            )
            parameters.append(inspect.Parameter(name, kind, default=default, annotation=annotation))
        cls.__frozen_fields__ = names
        cls.__frozen_defaults__ = defaults
        setattr(cls, "__match_args__", names)  # noqa: B010 - positional patterns, as a dataclass's
        # a field without a default after one with a default is a TypeError here, as in a dataclass
        signature = inspect.Signature(parameters)
        if "__init__" in vars(cls):  # a class that builds its fields itself (from other arguments)
            pass
        elif names or hasattr(
            cls, "__post_init__"
        ):  # else object's __init__: no argument, and faster
            setattr(cls, "__init__", _constructor(cls, names, signature))  # noqa: B010
        if not eq:
            cls.__eq__ = object.__eq__  # type: ignore[method-assign]
            cls.__hash__ = object.__hash__  # type: ignore[method-assign]
        # values of this class, by the arguments that built them (see _FrozenType); none for
        # identity-compared classes, whose equal values must stay distinct objects
        cls._frozen_kept = {} if cls.__eq__ is Frozen.__eq__ else None
        # what help() and the docs show for the class: its fields, not the metaclass's (*args,
        # **kwargs)
        cls.__signature__ = signature.replace(return_annotation=None)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__.values()))

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


def changed_fields(value) -> list:
    """``(name, value)`` of each field of ``value`` that differs from its default (all, without one).

    ``value`` is a :class:`Frozen` or a dataclass instance (third-party selectors are often
    dataclasses); anything else has no fields.

    Examples
    --------
    >>> import diffinterface as di
    >>> changed_fields(di.AutoJAX(mode="forward"))
    [('mode', 'forward')]
    """
    if isinstance(value, Frozen):
        defaults = value.__frozen_defaults__
        pairs = [(name, getattr(value, name)) for name in value.__frozen_fields__]
        return [(name, v) for name, v in pairs if name not in defaults or v != defaults[name]]
    import dataclasses  # only for dataclass values, never on a plain gradient's path

    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return []
    return [
        (field.name, getattr(value, field.name))
        for field in dataclasses.fields(value)
        if field.default is dataclasses.MISSING or getattr(value, field.name) != field.default
    ]
