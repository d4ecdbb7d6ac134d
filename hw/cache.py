"""One on-disk cache for everything made from the RTL: its Verilog, and every
synthesis, timing and energy result.

A result is a file named by what it depends on (the caller's key). The first
process that needs it computes it while holding a lock on that name; another
process (an xdist worker, a second run) that needs the same result waits on the
lock and then reads the file, so nothing is computed twice and no reader sees a
half-written file (it is written beside and renamed into place).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Callable

__all__ = ["cached_json", "cached_text", "on_make"]

#: Called with a result's path just before it is computed (not when it is read from
#: the cache): the command line sets it to say what the minutes it may take are for.
on_make: Callable[[Path], None] | None = None


def cached_text(path: Path, make: Callable[[], str]) -> str:
    """The text at ``path``, made by ``make()`` once, whoever asks first."""
    path = Path(path)
    if path.exists():
        return path.read_text()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            if on_make is not None:
                on_make(path)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(make())
            os.replace(tmp, path)
    return path.read_text()


def cached_json(path: Path, make: Callable[[], dict]) -> dict:
    """The JSON object at ``path``, made by ``make()`` once, whoever asks first."""
    return json.loads(cached_text(path, lambda: json.dumps(make())))
