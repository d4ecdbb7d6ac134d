"""What the area reader needs from a Liberty file: each cell's area, and which
cells hold state (a cell group with an ``ff`` or ``latch`` group inside)."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["cells"]

_CELL = re.compile(r"\bcell\s*\(\s*\"?([\w$]+)\"?\s*\)\s*\{")
_AREA = re.compile(r"\barea\s*:\s*([0-9.eE+-]+)")
_STATE = re.compile(r"\b(ff|latch|ff_bank|latch_bank)\s*\(")


@lru_cache(maxsize=8)
def cells(path: str) -> dict[str, tuple[float, bool]]:
    """``{cell name: (area, is_sequential)}`` of a Liberty file."""
    text = open(path, errors="replace").read()
    out = {}
    starts = [(m.start(), m.group(1)) for m in _CELL.finditer(text)]
    for i, (pos, name) in enumerate(starts):
        body = text[pos:starts[i + 1][0] if i + 1 < len(starts) else len(text)]
        area = _AREA.search(body)
        out[name] = (float(area.group(1)) if area else 0.0, bool(_STATE.search(body)))
    if not out:
        raise ValueError(f"{path}: no cells found; is it a Liberty file?")
    return out
