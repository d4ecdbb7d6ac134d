"""What the tools need from a Liberty file: each cell's area, which cells hold
state (a cell group with an ``ff`` or ``latch`` group inside), and an inverter
(the power flow builds constant ones from it)."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["cells", "inverter"]

_CELL = re.compile(r"\bcell\s*\(\s*\"?([\w$]+)\"?\s*\)\s*\{")
_AREA = re.compile(r"\barea\s*:\s*([0-9.eE+-]+)")
_STATE = re.compile(r"\b(ff|latch|ff_bank|latch_bank)\s*\(")
_PIN = re.compile(r"\bpin\s*\(\s*\"?(\w+)\"?\s*\)\s*\{")
_FUNCTION = re.compile(r"\bfunction\s*:\s*\"\(?\s*!\s*(\w+)\s*\)?\"")


def _bodies(text: str):
    starts = [(m.start(), m.group(1)) for m in _CELL.finditer(text)]
    for i, (pos, name) in enumerate(starts):
        yield name, text[pos:starts[i + 1][0] if i + 1 < len(starts) else len(text)]


@lru_cache(maxsize=8)
def cells(path: str) -> dict[str, tuple[float, bool]]:
    """``{cell name: (area, is_sequential)}`` of a Liberty file."""
    text = open(path, errors="replace").read()
    out = {}
    for name, body in _bodies(text):
        area = _AREA.search(body)
        out[name] = (float(area.group(1)) if area else 0.0, bool(_STATE.search(body)))
    if not out:
        raise ValueError(f"{path}: no cells found; is it a Liberty file?")
    return out


@lru_cache(maxsize=8)
def inverter(path: str) -> tuple[str, str, str]:
    """``(cell, input pin, output pin)`` of the smallest inverter in a Liberty file."""
    found = []
    for name, body in _bodies(open(path, errors="replace").read()):
        pins = [(m.group(1), m.start()) for m in _PIN.finditer(body)]
        if len(pins) != 2:
            continue
        for i, (pin, pos) in enumerate(pins):
            end = pins[i + 1][1] if i + 1 < len(pins) else len(body)
            f = _FUNCTION.search(body[pos:end])
            if f and f.group(1) == pins[1 - i][0]:
                area = _AREA.search(body)
                found.append((float(area.group(1)) if area else 0.0, name, f.group(1), pin))
    if not found:
        raise ValueError(f"{path}: no inverter cell (a pin with function !A) found")
    _, name, a, y = min(found)
    return name, a, y
