"""The open backend registry: selector type -> adapter, with each backend's facts declared once.

Built-in backends register themselves in ``diffinterface/backends/__init__.py``
and ``diffinterface/wrappers/__init__.py``; a third-party package registers its
own with :func:`register_backend` (or through the ``diffinterface.backends``
entry-point group, whose objects are called with no argument when a selector
is not found). Registering imports no framework: an adapter given as
``"module:Class"`` is imported on first use.

    >>> import diffinterface as di
    >>> from diffinterface.core.registry import registration
    >>> registration(di.AutoJAX()).extra
    'jax'
"""

from __future__ import annotations

import importlib
from _thread import allocate_lock  # threading.Lock itself, without importing threading (cold start)
from types import MappingProxyType
from typing import Callable, Mapping, Optional, Union

from ..errors import MissingBackendError
from ..frozen import Frozen
from ..selectors import AbstractBackend


class Registration(Frozen):
    """What the registry knows of one selector type."""

    selector: type
    #: ``selector -> Adapter``, or "module:Class" imported on first use
    adapter: Union[str, Callable]
    #: the pip extra that installs the framework (None: nothing to install)
    extra: Optional[str] = None
    #: test id -> selector: the configurations the conformance kit runs by default
    test_backends: Mapping = MappingProxyType({})
    #: True for backends whose derivatives are zeros by design (they check shapes, not values)
    returns_zeros: bool = False


_REGISTRATIONS: dict = {}
_ADAPTERS: dict = {}
_LOCK = allocate_lock()
_ENTRY_POINTS_LOADED = False


def register_backend(selector, adapter, *, extra=None, test_backends=None, returns_zeros=False):
    """Route a selector type to its adapter.

    Parameters
    ----------
    selector : type
        The selector class (a frozen dataclass subclassing ``di.AbstractBackend``).
    adapter : callable or str
        ``adapter(selector_instance)`` returns the adapter (a subclass of
        :class:`diffinterface.core.adapter.Adapter`); a string ``"module:Class"``
        is imported the first time a selector of this type is used.
    extra : str, optional
        The pip extra naming the framework, quoted in the ImportError when it is missing.
    test_backends : dict, optional
        Test id -> selector instance: what ``diffinterface.testing`` runs by default.
    returns_zeros : bool
        The backend returns zeros by design (the kit then checks shapes only).

    Returns
    -------
    None
        Later uses of such selectors reach the adapter; a new registration replaces an old one.

    Examples
    --------
    >>> import dataclasses, diffinterface as di
    >>> from diffinterface.backends.zero import ZeroForwardAdapter
    >>> @dataclasses.dataclass(frozen=True)
    ... class MyZeros(di.AbstractBackend):
    ...     pass
    >>> di.register_backend(MyZeros, ZeroForwardAdapter)
    >>> float(di.derivative(lambda x: x ** 2, MyZeros(), 3.0))
    0.0
    """
    if not (isinstance(selector, type) and issubclass(selector, AbstractBackend)):
        raise TypeError(
            f"selector: expected a selector class subclassing di.AbstractBackend; got {selector!r}"
        )
    if not (callable(adapter) or (isinstance(adapter, str) and ":" in adapter)):
        raise TypeError(f"adapter: expected a callable or a 'module:Class' string; got {adapter!r}")
    with _LOCK:
        _REGISTRATIONS[selector] = Registration(
            selector, adapter, extra, dict(test_backends or {}), bool(returns_zeros)
        )
        for backend in [b for b in _ADAPTERS if type(b) is selector]:
            del _ADAPTERS[backend]


def registrations():
    """Every registration, in the order they were made."""
    return tuple(_REGISTRATIONS.values())


def _load_entry_points():
    global _ENTRY_POINTS_LOADED
    _ENTRY_POINTS_LOADED = True
    from importlib.metadata import entry_points

    for point in entry_points(group="diffinterface.backends"):
        point.load()()


def registration(backend) -> Registration:
    """The registration of a selector instance; a TypeError naming the selectors when there is none."""
    entry = _REGISTRATIONS.get(type(backend))
    if entry is None and not _ENTRY_POINTS_LOADED:
        _load_entry_points()
        entry = _REGISTRATIONS.get(type(backend))
    if entry is None:
        accepted = ", ".join(f"{r.selector.__name__}()" for r in _REGISTRATIONS.values())
        raise TypeError(
            f"backend: expected a backend selector ({accepted}, or one registered with "
            f"di.register_backend); got {backend!r}"
        )
    return entry


def get_adapter(backend):
    """The adapter for a selector (built once per selector value)."""
    try:
        adapter = _ADAPTERS.get(backend)
    except TypeError:  # an unhashable object is no selector
        adapter = None
    if adapter is not None:
        return adapter
    entry = registration(backend)
    factory = entry.adapter
    if isinstance(factory, str):
        module_name, _, class_name = factory.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            hint = f"pip install 'diffinterface[{entry.extra}]'" if entry.extra else "pip install diffinterface"
            raise MissingBackendError(
                f"{type(backend).__name__} needs {error.name or module_name}, which is not installed: {hint}"
            ) from error
        factory = getattr(module, class_name)
    adapter = factory(backend)
    with _LOCK:
        _ADAPTERS[backend] = adapter
    return adapter


def check_available(backend) -> bool:
    """True when the backend can be used here: its framework (for wrappers, every wrapped one's) imports.

    Parameters
    ----------
    backend : object
        A backend selector (anything else is simply not available).

    Returns
    -------
    bool
        Never raises.

    Examples
    --------
    >>> import diffinterface as di
    >>> di.check_available(di.AutoFiniteDiff()), di.check_available("jax")
    (True, False)
    """
    try:
        get_adapter(backend)
    except Exception:  # noqa: BLE001 - a query: any failure means "not available"
        return False
    return True


def check_inplace(backend) -> bool:
    """True when the backend differentiates two-argument functions ``f(y, x)`` that write ``y``.

    Parameters
    ----------
    backend : object
        A backend selector.

    Returns
    -------
    bool
        Never raises: an unavailable backend, or anything that is no selector, cannot.

    Examples
    --------
    >>> import diffinterface as di
    >>> di.check_inplace(di.AutoTorch()), di.check_inplace(di.AutoJAX())
    (True, False)
    """
    try:
        return bool(get_adapter(backend).inplace)
    except Exception:  # noqa: BLE001 - a query: any failure means "cannot"
        return False
