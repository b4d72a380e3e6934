"""The open backend registry: selector type -> adapter, with each backend's facts declared once.

Built-in backends register themselves in ``diffinterface/backends/__init__.py``
and ``diffinterface/wrappers/__init__.py``; a third-party package registers its
own with :func:`register_backend` (or through the ``diffinterface.backends``
entry-point group, whose objects are called with no argument when a selector
is not found). Registering imports no framework: an adapter given as
``"module:Class"`` is imported on first use, and so are a framework's
DifferentiateWith rules (``differentiate_with="module:attr"``), which
:func:`framework_bridge` finds by the framework's name.

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
    #: the framework (array family) whose computations the adapter traces, known without importing
    #: it
    framework: Optional[str] = None
    #: that framework's DifferentiateWith rules (a
    #: :class:`~diffinterface.core.bridge.FrameworkBridge`),
    #: or "module:attr" imported on first use
    differentiate_with: Union[str, object, None] = None


_REGISTRATIONS: dict = {}
_ADAPTERS: dict = {}
#: framework name -> its DifferentiateWith rules (None: no registration provides them), filled on
#: first use
_BRIDGES: dict = {}
_LOCK = allocate_lock()
_ENTRY_POINTS_LOADED = False


def register_backend(
    selector,
    adapter,
    *,
    extra=None,
    test_backends=None,
    returns_zeros=False,
    framework=None,
    differentiate_with=None,
):
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
    framework : str, optional
        The array family whose computations the adapter traces (its ``Adapter.capabilities.framework``).
    differentiate_with : object or str, optional
        The framework's DifferentiateWith rules: a
        :class:`~diffinterface.core.bridge.FrameworkBridge` (or ``"module:attr"``
        naming one), through which a ``DifferentiateWith`` function called on
        that framework's arrays hands its derivatives to the framework, and
        through which arrays cross into and out of it. Requires ``framework``.

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
    if differentiate_with is not None and not isinstance(framework, str):
        raise TypeError(
            f"framework: differentiate_with rules need the name of the framework they serve; got {framework!r}"
        )
    with _LOCK:
        _REGISTRATIONS[selector] = Registration(
            selector,
            adapter,
            extra,
            dict(test_backends or {}),
            bool(returns_zeros),
            framework,
            differentiate_with,
        )
        for backend in [b for b in _ADAPTERS if type(b) is selector]:
            del _ADAPTERS[backend]
        _BRIDGES.clear()


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


def _imported(entry, value, needed_by):
    """``value`` itself, or the object a ``"module:attr"`` string names (a MissingBackendError naming the extra)."""
    if not isinstance(value, str):
        return value
    module_name, _, attribute = value.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        hint = (
            f"pip install 'diffinterface[{entry.extra}]'"
            if entry.extra
            else "pip install diffinterface"
        )
        raise MissingBackendError(
            f"{needed_by} needs {error.name or module_name}, which is not installed: {hint}"
        ) from error
    return getattr(module, attribute)


def get_adapter(backend):
    """The adapter for a selector (built once per selector value)."""
    try:
        adapter = _ADAPTERS.get(backend)
    except TypeError:  # an unhashable object is no selector
        adapter = None
    if adapter is not None:
        return adapter
    entry = registration(backend)
    adapter = _imported(entry, entry.adapter, type(backend).__name__)(backend)
    with _LOCK:
        _ADAPTERS[backend] = adapter
    return adapter


def framework_bridge(framework):
    """The DifferentiateWith rules registered for ``framework`` (an array family's name), or None.

    A ``DifferentiateWith`` function called on that framework's arrays hands
    its derivatives over through them, and arrays of that family cross into and
    out of a bridge through them (:mod:`diffinterface.core.bridge`). Imported on
    first use; the last registration that provides them wins.

    Examples
    --------
    >>> from diffinterface.core.registry import framework_bridge
    >>> type(framework_bridge("jax")).__name__, framework_bridge("unknown")
    ('JAXBridge', None)
    """
    try:
        return _BRIDGES[framework]
    except KeyError:
        pass
    entries = [
        r
        for r in _REGISTRATIONS.values()
        if r.framework == framework and r.differentiate_with is not None
    ]
    bridge = (
        _imported(entries[-1], entries[-1].differentiate_with, f"{framework} arrays")
        if entries
        else None
    )
    with _LOCK:
        _BRIDGES[framework] = bridge
    return bridge


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
        return bool(get_adapter(backend).capabilities.inplace)
    except Exception:  # noqa: BLE001 - a query: any failure means "cannot"
        return False
