"""The FPGA table: both designs' PE, array and engine placed and routed on an
ECP5 (:mod:`synth.fpga`) at the FPGA variant's PE depth, and what a head takes
there at each design's clock and at one clock common to both."""

from __future__ import annotations

from golden.head_cycles import baseline_head_cycles, kaleido_head_cycles
from golden.pe import DEFAULT_PE_STAGES, FPGA_PE_STAGES
from sim.experiments.report.base import quantized

from .figure import Figure

__all__ = ["BLOCKS", "SEEDS", "DEVICE", "compute", "head_times", "markdown", "FIGURE"]

#: The blocks of the table, smallest first.
BLOCKS = ("pe", "array", "engine")

#: Placement seeds: nextpnr's fmax moves from seed to seed, so the table gives its range.
SEEDS = (1, 2, 3)

#: The part, by its LUTs (:data:`synth.fpga.DEVICES`).
DEVICE = "85k"


def wanted(study) -> bool:
    """The table needs nextpnr (``make setup`` installs it) and a report that wants sign-off figures."""
    from synth.fpga import FpgaError, nextpnr_command
    try:
        nextpnr_command()
    except FpgaError:
        return False
    return study.energy


def head_times(cycles: dict, fmax_mhz: dict) -> dict:
    """Microseconds a head takes per design, at its own clock and at the slower of the
    two (``cycles`` and ``fmax_mhz`` by design)."""
    common = min(fmax_mhz.values())
    return {d: {"cycles": c, "fmax_mhz": fmax_mhz[d], "us": c / fmax_mhz[d], "us_common": c / common}
            for d, c in cycles.items()}


def compute(study) -> dict:
    from synth.fpga import TWINS, fpga_blocks, placed

    cfg = study.sizes["area"].with_(pe_stages=FPGA_PE_STAGES)
    # The placements recorded with the project stand for placing again (the same Verilog, part,
    # seed and tools, synth.shipped). A block none is recorded for is placed only when asked
    # (--place): an engine takes about 20 minutes a seed.
    ready = [b for b in BLOCKS if study.place or all(placed(n, cfg, DEVICE, SEEDS) for n in (b, TWINS[b]))]
    table = {b: fpga_blocks(b, cfg, DEVICE, SEEDS, recorded=not study.place) for b in ready}
    out = {"device": f"LFE5U-{DEVICE.upper()}", "tools": None, "pe_stages": FPGA_PE_STAGES, "seeds": list(SEEDS),
           "head": list(study.mid.grid), "head_dim": study.mid.head_dim, "blocks": table,
           "not_placed": [b for b in BLOCKS if b not in ready]}
    if table:
        first = next(iter(table.values()))["kaleido"]
        out["device"], out["tools"] = first["device"], first["tools"]
    if "engine" not in table:
        return out
    # A head's cycles at the cycle model's design point, both PE depths: the FPGA
    # variant adds a cycle of drain to every run of the array.
    ops = quantized(study.mid, study.workload)
    q, k = ops["q"][0], ops["k"][0]
    cycles = {}
    for stages in (DEFAULT_PE_STAGES, FPGA_PE_STAGES):
        head = study.mid.with_(pe_stages=stages)
        cycles[stages] = {"kaleido": sum(kaleido_head_cycles(q, k, head).values()),
                          "baseline": sum(baseline_head_cycles(head).values())}
    # Each design at its slowest seed's clock: what every seed meets.
    fmax = {d: table["engine"][d]["fmax_mhz"][0] for d in ("kaleido", "baseline")}
    return {**out, "cycles": {str(s): c for s, c in cycles.items()},
            "head_time": head_times(cycles[FPGA_PE_STAGES], fmax)}


def _fmax(r: dict) -> str:
    lo, hi = r["fmax_mhz"]
    return f"{lo:.1f}-{hi:.1f}"


def markdown(d: dict) -> list[str]:
    f = d["fpga"]
    lines = ["## On an FPGA", "",
             f"{f['device']} ({f['tools']}), out of context, seeds {', '.join(map(str, f['seeds']))}, "
             f"the area design point at {f['pe_stages']} PE stages (the FPGA variant); fmax is nextpnr's, "
             "over the seeds.", "",
             "| block | Kaleido: LUT4 / FF / MULT18 / DP16KD / fmax (MHz) | "
             "baseline: LUT4 / FF / MULT18 / DP16KD / fmax (MHz) | LUTs, clock |",
             "|---|---|---|---|"]
    for block, r in f["blocks"].items():
        k, b = r["kaleido"], r["baseline"]
        cells = [f"{x['luts']:,} / {x['ffs']:,} / {x['mult18']} / {x['bram']} / {_fmax(x)}" for x in (k, b)]
        lines.append(f"| {block} | {cells[0]} | {cells[1]} | {k['luts'] / b['luts']:.1f}x, "
                     f"{k['fmax_mhz'][0] / b['fmax_mhz'][0]:.2f}x |")
    if f.get("not_placed"):
        lines += ["", f"Not placed in this run: {', '.join(f['not_placed'])} (no placement of today's Verilog "
                      "ships with the project; `kaleido report --place` places them, about 20 minutes an "
                      "engine a seed, and `make characterize` ships them)."]
    if "head_time" not in f:
        return lines + [""]
    grid = "x".join(map(str, f["head"]))
    lines += ["", f"A {grid} head (D = {f['head_dim']}, the cycle model's), each engine at its slowest seed's "
                  "clock, and both at the slower clock:", "",
              "| design | cycles, ASIC depth | cycles, FPGA variant | fmax (MHz) | time (us) | "
              "time at the common clock (us) |", "|---|---:|---:|---:|---:|---:|"]
    asic = f["cycles"][str(DEFAULT_PE_STAGES)]
    for design, t in f["head_time"].items():
        lines.append(f"| {design} | {asic[design]:,} | {t['cycles']:,} | {t['fmax_mhz']:.1f} | {t['us']:.1f} | "
                     f"{t['us_common']:.1f} |")
    k, b = f["head_time"]["kaleido"], f["head_time"]["baseline"]
    lines += ["", f"Kaleido takes {k['us'] / b['us']:.2f}x the baseline's time per head on the FPGA "
                  f"({b['cycles'] / k['cycles']:.2f}x fewer cycles at {k['fmax_mhz'] / b['fmax_mhz']:.2f}x the "
                  "clock).", ""]
    return lines


FIGURE = Figure("fpga", compute, 14, markdown=markdown, wanted=wanted)
