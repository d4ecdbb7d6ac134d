"""Packing Amaranth struct layouts to and from the flat integers a simulator sees."""

from __future__ import annotations

from amaranth import Shape
from amaranth.lib import data

__all__ = ["pack", "unpack"]


def pack(layout, values) -> int:
    """The raw bits of ``layout`` holding ``values`` (a dict, a list for an array
    layout, or an object with attributes); a nested layout's value may be any of those."""
    raw = 0
    for name, field in layout:
        v = values[name] if isinstance(values, (dict, list, tuple)) else getattr(values, name)
        if isinstance(field.shape, data.Layout) and not isinstance(v, int):
            v = pack(field.shape, v)
        raw |= (int(v) & ((1 << field.width) - 1)) << field.offset
    return raw


def unpack(layout, raw: int) -> dict:
    """Field values of ``layout`` from its raw bits, signed fields sign-extended."""
    out = {}
    for name, field in layout:
        v = (int(raw) >> field.offset) & ((1 << field.width) - 1)
        if Shape.cast(field.shape).signed and v >> (field.width - 1):
            v -= 1 << field.width
        out[name] = v
    return out
