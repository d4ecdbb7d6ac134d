"""Measure again the sign-off results that ship with the project
(:mod:`synth.shipped`), and check that those shipped are today's.

``python -m synth.characterize --out DIR`` (``make characterize``) runs the
commands of :data:`COMMANDS` on each library with ``$KALEIDO_USED`` set and
shipping off, so that every area, timing, energy and placement result they ask
for is computed (or read from this machine's cache, which holds under a name
only what that name computes) and logged; then it copies those results into
``synth/characterized/`` under their cache names, with a manifest of what each
one is, and drops the shipped results no command used any more.

``python -m synth.characterize --check`` recomputes every shipped result's name
from today's Verilog, library and tools (it hashes, it does not sign off) and
lists those that are stale: the test suite runs the same check.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from golden.config import Config
from hw.cache import USED

from .shipped import CHARACTERIZED, KINDS, folder

__all__ = ["COMMANDS", "LIBRARIES", "MANIFEST", "manifest", "path_of", "stale", "collect", "main"]

#: What a fresh clone runs first, and so what ships: the README's first commands, the
#: 5-step and the default estimate, and the report (its FPGA table's placements included).
#: ``{out}`` is the run's folder, ``{lib}`` the library's name.
COMMANDS = (
    ("kaleido", "demo", "--out", "{out}/demo"),
    ("kaleido", "workload", "video", "--clip", "bikes", "--grid", "2,4,4", "--model", "wan2.1", "--head-dim", "32",
     "--out", "{out}/wl"),
    ("kaleido", "sim", "attention", "--q", "{out}/wl/q.npy", "--k", "{out}/wl/k.npy", "--v", "{out}/wl/v.npy",
     "--grid", "2,4,4", "--model", "wan2.1", "--out", "{out}/run"),
    ("kaleido", "timing", "--block", "engine"),
    ("kaleido", "estimate", "--model", "wan2.1", "--steps", "5", "--sample", "2", "--tile-samples", "3000",
     "--out", "{out}/estimate"),
    ("kaleido", "estimate", "--model", "wan2.1", "--out", "{out}/estimate-default"),
    # --place: the FPGA table's placements, cold (about 20 minutes an engine a seed; the same on either library).
    ("kaleido", "report", "--out", "{out}/report", "--no-rtl", "--place"),
)

#: The libraries the results ship for: the default's and the second corner's.
LIBRARIES = ("nangate45", "osu018")

#: What each shipped result is (:func:`synth.shipped.what`), by its kind and name.
MANIFEST = CHARACTERIZED / "manifest.json"

ROOT = Path(__file__).resolve().parent.parent


class _Text:
    """A trace as the key saw it: its text."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def manifest() -> dict:
    """The shipped results, ``{"kind/name": what}`` (empty where none ship)."""
    return json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {}


def path_of(what: dict) -> Path:
    """The cache path a result described by ``what`` has today: its name from
    today's Verilog, the library's content and the tools."""
    from .area import area_path
    from .fpga import placement_path
    from .kits import liberty_path
    from .power import energy_path
    from .timing import repaired_path, timing_path

    cfg = Config.from_json(what["config"])
    liberty = liberty_path(what["library"]) if what["library"] else None
    kind, block = what["kind"], what["block"]
    if kind == "area":
        return area_path(block, cfg, liberty)
    if kind == "timing":
        return (repaired_path if what.get("repaired") else timing_path)(block, cfg, liberty)
    if kind == "energy":
        return energy_path(block, cfg, liberty, what["cycles"], _Text(what["trace"]) if "trace" in what else None)
    if kind == "fpga":
        return placement_path(block, cfg, what["device"], what["seed"])
    raise ValueError(f"kind {kind!r}: one of {', '.join(KINDS)}")


def stale(entries: dict | None = None) -> list[str]:
    """The shipped results whose name today's Verilog, library or tools no longer give."""
    entries = manifest() if entries is None else entries
    return [key for key, what in entries.items() if f"{what['kind']}/{path_of(what).name}" != key]


def _portable(text: str) -> str:
    # A result names the liberty it was measured on by its checkout's path (this one's or
    # a fresh clone's in /tmp): ship the path within the project, from its .cache/ on.
    data = json.loads(text)
    if isinstance(data.get("liberty"), str) and os.path.isabs(data["liberty"]):
        parts = Path(data["liberty"]).parts
        if ".cache" in parts:
            data["liberty"] = str(Path(*parts[parts.index(".cache"):]))
    return json.dumps(data)


def collect(logs: list[Path], prune: bool) -> dict:
    """Copy every result the ``logs`` name into ``synth/characterized/`` and write
    the manifest; with ``prune``, drop the shipped results no log names."""
    entries = {} if prune else manifest()
    sources = {}
    for log in logs:
        for line in Path(log).read_text().splitlines():
            use = json.loads(line)
            path, kind = Path(use["path"]), use["what"].get("kind")
            if kind in KINDS and path.is_file():    # asked for but never made (a run that stopped): nothing
                entries[f"{kind}/{path.name}"] = use["what"]
                sources[f"{kind}/{path.name}"] = path
    for kind in KINDS:
        folder(kind).mkdir(parents=True, exist_ok=True)
        for old in folder(kind).glob("*.json"):
            if f"{kind}/{old.name}" not in entries:
                old.unlink()
    for key, source in sources.items():
        (CHARACTERIZED / key).write_text(_portable(source.read_text()))
    _write_manifest(entries)
    return entries


def _write_manifest(entries: dict) -> None:
    MANIFEST.write_text(json.dumps(dict(sorted(entries.items())), indent=1) + "\n")


def _run(out: Path, library: str, log: Path) -> None:
    env = {**os.environ, USED: str(log), "KALEIDO_SHIPPED": "0", "KALEIDO_LIBERTY": library}
    for command in COMMANDS:
        argv = [a.format(out=out / library, lib=library) for a in command]
        argv[0] = shutil.which("kaleido") or str(Path(sys.executable).with_name("kaleido"))
        t = time.perf_counter()
        print(f"characterize: {' '.join(command[:2])} on {library}", file=sys.stderr, flush=True)
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        print(f"characterize: {' '.join(command[:2])} on {library}: {time.perf_counter() - t:.0f} s",
              file=sys.stderr, flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m synth.characterize", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="out/characterize", help="the commands' folder (default out/characterize)")
    p.add_argument("--libraries", default=",".join(LIBRARIES), help="default: " + ",".join(LIBRARIES))
    p.add_argument("--check", action="store_true", help="list the shipped results that are stale, and fail if any")
    p.add_argument("--drop-stale", action="store_true", help="drop the shipped results that are stale")
    p.add_argument("--collect", nargs="+", metavar="LOG", help="ship what these logs of $KALEIDO_USED name "
                   "(beside what ships), without running anything")
    args = p.parse_args(argv)
    if args.check or args.drop_stale:
        entries = manifest()
        bad = stale(entries)
        for key in bad:
            print(f"stale: {key}")
        print(f"{len(entries) - len(bad)} of {len(entries)} shipped results are today's")
        if args.drop_stale:
            for key in bad:
                (CHARACTERIZED / key).unlink(missing_ok=True)
            _write_manifest({k: w for k, w in entries.items() if k not in bad})
            print(f"dropped {len(bad)}")
            return 0
        return 1 if bad else 0
    if args.collect:
        n = len(collect([Path(x) for x in args.collect], prune=False))
        print(f"characterize: {n} results ship in {CHARACTERIZED}")
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logs = []
    for library in args.libraries.split(","):
        log = out / f"used-{library}.jsonl"
        log.unlink(missing_ok=True)
        _run(out, library, log)
        logs.append(log)
    n = len(collect(logs, prune=True))
    print(f"characterize: {n} results ship in {CHARACTERIZED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
