"""What a PE passes on to its neighbour: a reference model of its forwarding registers.

A PE registers the bundle it receives and passes it on, but an operand or a
flag moves only in a cycle whose slot carries its step (the slot's steps are
the row's and the column's together; :data:`hw.core.pe.ROW_FORWARDED`,
:data:`hw.core.pe.COL_FORWARDED`); otherwise its register holds what it last moved.
The control fields move every cycle.
"""

from __future__ import annotations

from dataclasses import asdict, fields, is_dataclass

__all__ = ["Forwarded"]


class Forwarded:
    """The forwarded copy of a bundle, cycle by cycle.

    Parameters
    ----------
    table : tuple of ((field names), steps bits)
        Which fields move with which of the bundle's ``steps``.
    initial : dataclass instance or dict
        The bundle before the first cycle (its control fields are what a reset leaves).
    """

    def __init__(self, table, initial):
        self.table = table
        self.held = asdict(initial) if is_dataclass(initial) else dict(initial)

    def tick(self, bundle, slot: int) -> dict:
        """Register ``bundle`` (a dataclass or a dict) in a slot with steps ``slot``;
        return every field as passed on after the edge."""
        new = ({f.name: getattr(bundle, f.name) for f in fields(bundle)} if is_dataclass(bundle)
               else dict(bundle))
        gated = {f: bits for names, bits in self.table for f in names}
        for name, value in new.items():
            if name not in gated or slot & gated[name]:
                self.held[name] = int(value)
        return dict(self.held)
