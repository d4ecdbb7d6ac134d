"""The published figures: one versioned file, ``docs/figures.json``, written by
the commands that measure them and read by README.md and docs/*.md.

A command given ``--record AREA`` (``kaleido estimate``, ``kaleido explore``,
``python -m sim.experiments.bench head``; ``kaleido report --publish`` records
its own) writes its headline figures under ``AREA``, as the text a reader
sees, with the command line, the commit and the date. A document quotes a
figure through a marker, and never types it::

    Kaleido's chip is <!-- fig chip.speedup -->1.013x<!-- /fig --> as fast

and a whole table through a block whose rows come from the file::

    <!-- table head.bikes -->
    | ... |
    <!-- /table -->

:func:`render` rewrites every marker from the file (``make docs``, and the
end of ``make report``); :func:`drift` lists the markers whose text differs,
which the test suite holds empty.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

__all__ = ["FIGURES", "DOCS", "load", "record", "render", "drift", "render_docs", "area_name", "owner",
           "check_record", "this_command"]

ROOT = Path(__file__).resolve().parents[2]
#: The one source of every figure the docs quote.
FIGURES = ROOT / "docs" / "figures.json"
#: The documents that quote them.
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "CHANGELOG.md"]

_FIG = re.compile(r"<!-- fig ([\w.-]+) -->(.*?)<!-- /fig -->", re.S)
_TABLE = re.compile(r"<!-- table ([\w.-]+) -->\n(.*?)<!-- /table -->", re.S)
_AREA = re.compile(r"^[a-z][\w-]*(\.[\w-]+)*$")


def area_name(text: str) -> str:
    """``text`` if it names an area (``chip``, ``head.bikes``), else ValueError."""
    if not _AREA.match(text or ""):
        raise ValueError(f"--record {text!r}: an area is a lowercase name, dotted parts allowed (chip, head.bikes)")
    return text


def owner(command: str) -> str:
    """Which command's figures a command line records: ``kaleido estimate``,
    ``kaleido explore --strengths``, ``python -m sim.experiments.bench head``."""
    words = shlex.split(command)
    if words[:2] == ["python", "-m"]:
        module, rest = words[2:3], words[3:]
        return " ".join(["python -m", *module, *([rest[0]] if rest and not rest[0].startswith("-") else [])])
    name = " ".join(words[:2])
    return f"{name} --strengths" if name == "kaleido explore" and "--strengths" in words else name


def this_command() -> str:
    """This process's command line, as :func:`record` writes it (``python -m
    MODULE ...`` for a module run as a script: its argv names the file alone)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if Path(sys.argv[0]).name == "kaleido":
        head = ["kaleido"]
    elif spec is not None and spec.name:
        head = ["python", "-m", spec.name.removesuffix(".__main__")]
    else:
        head = ["python"]
    return shlex.join([*head, *sys.argv[1:]])


def check_record(area: str, command: str, path: Path = FIGURES) -> str:
    """``area`` if ``command`` may record there: a new area, or one the same command
    (:func:`owner`) wrote; else ValueError. A record never clobbers another
    command's figures (the docs quote them by name). Checked before any work."""
    area_name(area)
    held = load(path).get(area)
    if held and owner(held["command"]) != owner(command):
        raise ValueError(f"--record {area}: that area holds `{owner(held['command'])}`'s figures, which the docs "
                         f"quote; record `{owner(command)}`'s under another area")
    return area


def load(path: Path = FIGURES) -> dict:
    """The figures file as a dict (empty if there is none yet)."""
    return json.loads(Path(path).read_text()) if Path(path).exists() else {}


def _commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() or "unknown"


def record(area: str, figures: dict[str, str], tables: dict[str, list[list[str]]] | None = None,
           command: str | None = None, path: Path = FIGURES) -> None:
    """Write ``figures`` (name -> the text a reader sees) and ``tables`` (name ->
    rows, the first the header) under ``area``, replacing what it held (when the same
    command wrote it, :func:`check_record`), with the command line (default: this
    process's), the commit and the date."""
    command = command or this_command()
    check_record(area, command, path)
    data = load(path)
    data[area] = {
        "command": command,
        "commit": _commit(),
        "date": datetime.date.today().isoformat(),
        "figures": {k: str(v) for k, v in figures.items()},
        "tables": {k: [[str(c) for c in row] for row in rows] for k, rows in (tables or {}).items()},
    }
    tmp = Path(path).with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def _lookup(data: dict, key: str, kind: str):
    area, _, name = key.rpartition(".")
    try:
        return data[area][kind][name]
    except KeyError:
        raise KeyError(f"{key}: no such {kind[:-1]} in {FIGURES.name}") from None


def _table(rows: list[list[str]]) -> str:
    head, *body = rows
    align = ["---" if not any(_numeric(r[i]) for r in body) else "---:" for i in range(len(head))]
    lines = [head, align, *body]
    return "".join("| " + " | ".join(cells) + " |\n" for cells in lines)


def _numeric(cell: str) -> bool:
    return bool(re.match(r"^[*~(]*[-+]?[\d,.]+", cell))


def render(text: str, data: dict) -> str:
    """``text`` with every marker's content made from ``data``."""
    text = _TABLE.sub(lambda m: f"<!-- table {m[1]} -->\n{_table(_lookup(data, m[1], 'tables'))}<!-- /table -->",
                      text)
    return _FIG.sub(lambda m: f"<!-- fig {m[1]} -->{_lookup(data, m[1], 'figures')}<!-- /fig -->", text)


def drift(text: str, data: dict) -> list[tuple[str, str, str]]:
    """``(marker, found, from the file)`` of every marker whose text differs."""
    out = []
    for m in _TABLE.finditer(text):
        want = _table(_lookup(data, m[1], "tables"))
        if m[2] != want:
            out.append((m[1], m[2], want))
    for m in _FIG.finditer(text):
        want = _lookup(data, m[1], "figures")
        if m[2] != want:
            out.append((m[1], m[2], want))
    return out


def render_docs(paths=None, data: dict | None = None) -> list[Path]:
    """Rewrite every document's markers from the figures file; return those that changed."""
    data = load() if data is None else data
    changed = []
    for path in paths or DOCS:
        if not path.exists():
            continue
        text = path.read_text()
        new = render(text, data)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


def main() -> int:
    try:
        changed = render_docs()
    except KeyError as exc:
        print(f"figures: {exc.args[0]}", file=sys.stderr)
        return 2
    for path in changed:
        print(f"figures: rewrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
