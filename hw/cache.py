"""One on-disk cache for everything made from the RTL: its Verilog, and every
synthesis, timing and energy result.

A result is a file named by what it depends on (the caller's key). The first
process that needs it computes it while holding a lock on that name; another
process (an xdist worker, a second run) that needs the same result waits on the
lock and then reads the file, so nothing is computed twice and no reader sees a
half-written file (it is written beside and renamed into place).

A result may also ship with the project (``synth/characterized/``, see
:mod:`synth.characterized`): a caller names the folder, and a result missing
from the cache is copied from there, by the same name, instead of being made.
The name is the hash of everything the result depends on, so a shipped result
is found only for the Verilog, library and tools it was measured with.
``$KALEIDO_SHIPPED=0`` turns the shipped results off (a cold run).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Callable

__all__ = ["cached_json", "cached_text", "on_make", "shipping", "USED"]

#: Called with a result's path just before it is computed (not when it is read from
#: the cache): the command line sets it to say what the minutes it may take are for.
on_make: Callable[[Path], None] | None = None

#: The environment variable naming a file where every result asked for that can be
#: shipped is logged (one JSON line: its path, its shipped folder and what it is):
#: how ``make characterize`` learns what a run used, across its worker processes.
USED = "KALEIDO_USED"


def shipping() -> bool:
    """Whether shipped results are used (``$KALEIDO_SHIPPED`` is not ``0``)."""
    return os.environ.get("KALEIDO_SHIPPED", "1") != "0"


def _log_use(path: Path, shipped: Path, what: dict) -> None:
    log = os.environ.get(USED)
    if log:
        line = json.dumps({"path": str(path), "shipped": str(shipped), "what": what}) + "\n"
        with open(log, "a") as fh:          # one write of one line: whole, beside other processes'
            fh.write(line)


def cached_text(path: Path, make: Callable[[], str], shipped: Path | None = None, what: dict | None = None) -> str:
    """The text at ``path``, made by ``make()`` once, whoever asks first; copied
    from ``shipped`` (a folder) when it holds a file of that name. ``what`` says
    what the result is (for the log of :data:`USED`)."""
    path = Path(path)
    if shipped is not None:
        _log_use(path, shipped, what or {})
    if path.exists():
        return path.read_text()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            ready = shipped is not None and shipping() and (Path(shipped) / path.name).is_file()
            if ready:
                shutil.copyfile(Path(shipped) / path.name, tmp)
            else:
                if on_make is not None:
                    on_make(path)
                tmp.write_text(make())
            os.replace(tmp, path)
    return path.read_text()


def cached_json(path: Path, make: Callable[[], dict], shipped: Path | None = None, what: dict | None = None) -> dict:
    """The JSON object at ``path``, made by ``make()`` once, whoever asks first
    (or copied from ``shipped``, :func:`cached_text`)."""
    return json.loads(cached_text(path, lambda: json.dumps(make()), shipped, what))
