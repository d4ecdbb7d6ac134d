"""The block table on every cell library: area, clock and energy per action.

``python -m sim.experiments.corners [--liberty NAME ...] [--record corners]``
signs each block off on each library's kit (:mod:`synth.kits`) at that kit's
sign-off clock, with the same commands a user runs (``kaleido synth``,
``timing`` and ``power --liberty NAME``), and prints the table as JSON; with
``--record`` it is written into ``docs/figures.json`` for the docs. Every
figure is cached as those commands cache it, so a second run takes seconds.
A library ``make setup`` could not fetch is named and left out.
"""

from __future__ import annotations

import argparse
import json
import sys

from golden import Config
from synth.actions import actions
from synth.area import block_area
from synth.kits import KITS, LibraryError, at_signoff, liberty_path
from synth.power import energy_per_action
from synth.timing import block_timing, meets

__all__ = ["BLOCKS", "ENERGY_BLOCKS", "corner", "tables", "main"]

#: The blocks of the table, in its order; those with energy per action.
BLOCKS = ("pe", "baseline-pe", "array", "baseline-array", "matcher", "scheduler", "softmax",
          "engine", "baseline-engine")
ENERGY_BLOCKS = ("pe", "baseline-pe", "matcher", "scheduler", "softmax")


def corner(name: str, progress=None) -> dict:
    """Every block of :data:`BLOCKS` on the kit ``name``: ``{block: {area_um2,
    clock_mhz, fmax_mhz, met, energy_pj}}`` (``energy_pj`` per action, or None)."""
    lib = liberty_path(name)
    cfg = at_signoff(Config(), lib)
    out = {}
    for block in BLOCKS:
        if progress:
            progress(f"{name}: {block}")
        t = block_timing(block, cfg, lib)
        e = energy_per_action(block, cfg, lib)["energy_pj"] if block in ENERGY_BLOCKS else None
        out[block] = {"area_um2": block_area(block, cfg, lib)["area_um2"], "clock_mhz": cfg.clock_mhz,
                      "fmax_mhz": t["fmax_mhz"], "met": meets(t), "energy_pj": e}
    return out


def _energy(block: str, e: dict | None) -> str:
    if e is None:
        return "-"
    return ", ".join(f"{a} {e[a]:.3g}" for a in actions(block, Config()) if a in e)


def tables(corners: dict) -> dict:
    """The published tables: ``blocks`` (every block on every library) and
    ``ratios`` (Kaleido's PE and array against the baseline's, per library)."""
    rows = [["block", "library", "area um^2", "clock MHz", "fmax MHz", "energy per action, pJ"]]
    for block in BLOCKS:
        for name, c in corners.items():
            b = c[block]
            rows.append([block, name, f"{b['area_um2']:,.0f}", f"{b['clock_mhz']:g}",
                         f"{b['fmax_mhz']:.1f}" + ("" if b["met"] else " (missed)"), _energy(block, b["energy_pj"])])
    ratios = [["Kaleido / baseline", *corners]]
    pick = [("PE area", lambda c: c["pe"]["area_um2"] / c["baseline-pe"]["area_um2"]),
            ("array area", lambda c: c["array"]["area_um2"] / c["baseline-array"]["area_um2"]),
            ("engine area", lambda c: c["engine"]["area_um2"] / c["baseline-engine"]["area_um2"]),
            ("PE full product", lambda c: c["pe"]["energy_pj"]["full_mac"] / c["baseline-pe"]["energy_pj"]["full_mac"]),
            ("PE idle", lambda c: c["pe"]["energy_pj"]["idle"] / c["baseline-pe"]["energy_pj"]["idle"]),
            ("PE nibble product", lambda c: c["pe"]["energy_pj"]["nibble_mac"]
             / c["baseline-pe"]["energy_pj"]["full_mac"]),
            ("matcher area / baseline PE", lambda c: c["matcher"]["area_um2"] / c["baseline-pe"]["area_um2"])]
    for label, f in pick:
        ratios.append([label, *(f"{f(c):.2f}x" for c in corners.values())])
    return {"blocks": rows, "ratios": ratios}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--liberty", action="append", choices=list(KITS),
                   help="a library to sign off on (again for more; default: every one fetched)")
    p.add_argument("--record", metavar="AREA", help="also write the tables under AREA of docs/figures.json")
    args = p.parse_args(argv)
    names = args.liberty or list(KITS)
    corners = {}
    for name in names:
        try:
            liberty_path(name)
        except LibraryError as exc:
            print(f"corners: {exc}; left out", file=sys.stderr)
            continue
        corners[name] = corner(name, progress=lambda s: print(f"corners: {s}", file=sys.stderr, flush=True))
    if not corners:
        print("corners: no cell library fetched; run make setup", file=sys.stderr)
        return 2
    out = tables(corners)
    if args.record:
        from .published import area_name, record
        area_name(args.record)
        record(args.record, {}, out, command="python -m sim.experiments.corners "
               + " ".join(argv if argv is not None else sys.argv[1:]))
    print(json.dumps({"corners": corners, "tables": out}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
