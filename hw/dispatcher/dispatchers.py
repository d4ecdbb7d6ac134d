"""Every dispatcher's component by name (each a :class:`hw.dispatcher.dispatch.Dispatcher`).

A component declares its golden model (``model``, a
:class:`golden.dispatchers.DispatcherModel`), whose name it is registered under
and whose slot model the engine's cycles must equal; which one a design point
has is :func:`golden.dispatchers.dispatcher_of`'s answer."""

from __future__ import annotations

from golden.dispatchers import dispatcher_of
from golden.registry import claim

from .channel_window import ChannelWindow
from .dispatch import Dispatcher
from .in_order import InOrder
from .matcher import Matcher

__all__ = ["DISPATCHERS", "register", "dispatcher_of"]

#: name -> component class, under its model's name in :data:`golden.dispatchers.DISPATCHERS`.
DISPATCHERS: dict[str, type[Dispatcher]] = {}


def register(unit: type[Dispatcher]) -> type[Dispatcher]:
    """Add component ``unit`` under its model's name (a class decorator)."""
    if not isinstance(unit, type) or not issubclass(unit, Dispatcher) or getattr(unit, "model", None) is None:
        raise ValueError(f"{getattr(unit, '__name__', unit)} must be a hw.dispatcher.dispatch.Dispatcher that declares "
                         f"its golden model")
    claim(DISPATCHERS, unit.model.name, unit, "dispatcher component")
    DISPATCHERS[unit.model.name] = unit
    return unit


for _unit in (InOrder, Matcher, ChannelWindow):
    register(_unit)
