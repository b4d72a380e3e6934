"""The argument checks of the backend selectors (``selectors.py``): each names the selector, the
argument, what it expects and what it was given."""

from __future__ import annotations

MODES = (None, "forward", "reverse")


def check_mode(selector, mode):
    if mode not in MODES:
        raise ValueError(
            f"{type(selector).__name__}(mode=...) expected one of None, 'forward', "
            f"'reverse'; got {mode!r}"
        )


def check_flag(selector, name):
    """``selector.<name>`` is True or False."""
    value = getattr(selector, name)
    if not isinstance(value, bool):
        raise TypeError(
            f"{type(selector).__name__}({name}=...) expected True or False; got {value!r}"
        )


def check_step(selector, name):
    """``selector.<name>`` (a finite-difference step) is None or a positive finite number."""
    value = getattr(selector, name)
    if value is None:
        return
    owner = type(selector).__name__
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{owner}({name}=...) expected a positive number or None; got {value!r}")
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError(
            f"{owner}({name}=...) expected a positive finite number or None; got {value!r}"
        )


def refusing_a_mode(constructor):
    """Frozen's constructor, after refusing a mode (or anything positional) with the way around."""

    def __init__(self, *args, **kwargs):
        unknown = [
            *map(repr, args),
            *(f"{k}={v!r}" for k, v in kwargs.items() if k not in ("batch_size", "memory_budget")),
        ]
        if unknown:
            first = f"{next(iter(kwargs))}=..." if kwargs and not args else "..."
            raise TypeError(
                f"AutoAutograd({first}): AutoAutograd takes only batch_size= and memory_budget=; got "
                f"{', '.join(unknown)}. It picks forward or reverse mode per operator itself; for a mode of your "
                "choice, use AutoJAX(mode=...) or AutoTorch(mode=...), or SecondOrder(...) for second order"
            )
        constructor(self, **kwargs)

    __init__.__signature__ = constructor.__signature__
    __init__.__qualname__, __init__.__module__ = constructor.__qualname__, constructor.__module__
    return __init__
