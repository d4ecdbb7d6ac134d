"""One name, one registration: the rule every registry of the project keeps
(PE kinds, dispatchers' models and their components).

A name taken by one class is refused to another, a built-in one's or a user's,
so that two plugins naming the same kind cannot leave golden, the cycle models
and a cached RTL each with a different one. The same class registered again
(a worker process that rebuilds a user's class, or a module imported twice) is
the same entry and is taken."""

from __future__ import annotations

from .variants import VARIANTS

__all__ = ["claim"]


def _where(entry) -> str:
    return f"{getattr(entry, '__module__', '?')}.{getattr(entry, '__qualname__', entry)}"


def claim(table: dict, name: str, entry, what: str) -> None:
    """Raise ValueError, in one line, when ``name`` in ``table`` is another class's
    than ``entry`` (``what``: the kind of entry, for the message)."""
    if name in VARIANTS:
        raise ValueError(f"{what} {name!r} is a dispatcher variant's name (--variant {name}); give "
                         f"{_where(entry)} another")
    held = table.get(name)
    if held is None or held is entry or _where(held) == _where(entry):
        return
    built_in = held.__module__.split(".")[0] in ("golden", "hw")
    whose = "a built-in" if built_in else f"{_where(held)}'s"
    raise ValueError(f"{what} {name!r} is {whose} name; a name is registered once: give {_where(entry)} another")
