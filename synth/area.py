"""The area table: every block through one Yosys flow, in parallel, cached.

Results are cached under ``.cache/synth/`` by the hash of the block's Verilog
and the liberty file's content, so an unchanged block is never synthesized
twice. The table follows the paper's Table 2 split: PE arrays (Kaleido's
against the baseline's) and the dispatcher (one scheduler, one matcher per
array it feeds).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from golden.config import Config
from hw import blocks
from hw.cache import cached_json
from hw.dispatcher.matcher import Matcher
from hw.dispatcher.scheduler import Scheduler

from .flow import cache_key, synthesize
from .kits import kit
from .liberty import cells as liberty_cells
from .shipped import folder, what
from .timing import block_timing

__all__ = ["block_area", "area_path", "area_table", "table_markdown"]

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "synth"


def area_path(name: str, cfg: Config, liberty: str | None) -> Path:
    """Where block ``name``'s area at ``cfg`` on ``liberty`` is cached (its name: what it depends on)."""
    text = blocks.verilog(name, cfg)
    return CACHE / f"{name}-{cache_key(text, liberty, cfg.clock_mhz if liberty else None)}.json"


def block_area(name: str, cfg: Config, liberty: str | None) -> dict:
    """Area figures of one block (from the cache when its Verilog is unchanged, or
    shipped with the project, :mod:`synth.shipped`); with a liberty, the delay
    cells of its hold repair counted in (``hold_repair``: None where hold was met)."""
    text = blocks.verilog(name, cfg)
    area = cached_json(area_path(name, cfg, liberty),
                       lambda: {**synthesize(text, blocks.top_name(name), liberty, cfg.clock_mhz), "block": name},
                       folder("area"), what("area", name, cfg, liberty))
    if liberty is None or cfg.clock_mhz is None:
        return {**area, "hold_repair": None}
    # The delay cells a hold repair puts in are area like the rest (synth.hold).
    fix = block_timing(name, cfg, liberty)["hold_repair"]
    if fix is None:
        return {**area, "hold_repair": None}
    return {**area, "area_um2": area["area_um2"] + fix["area_um2"], "cells": area["cells"] + fix["cells"],
            "hold_repair": {"cells": fix["cells"], "cell": fix["cell"], "area_um2": fix["area_um2"]}}


def _job(args):
    name, cfg_json, liberty = args
    return block_area(name, Config.from_json(cfg_json), liberty)


def area_table(cfg: Config, liberty: str | None, jobs: int = 2, progress=None) -> dict:
    """Every block's area, synthesized ``jobs`` at a time, and the Table 2 split."""
    names = list(blocks.UNITS)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = {}
        for name, res in zip(names, pool.map(_job, [(n, cfg.to_json(), liberty) for n in names])):
            results[name] = res
            if progress:
                progress(name)
    metric = "area_um2" if liberty else "transistors"
    a = {n: r[metric] for n, r in results.items()}
    arrays = cfg.clusters                      # the scheduler's clusters each feed one array
    split = {
        "metric": metric,
        "arrays_fed": arrays,
        "pe_overhead": a["pe"] / a["baseline-pe"] - 1,
        "array_overhead": a["array"] / a["baseline-array"] - 1,
        "pe_arrays": arrays * a["array"],
        "baseline_pe_arrays": arrays * a["baseline-array"],
        "dispatcher": a["scheduler"] + arrays * a["matcher"],
    }
    split["dispatcher_over_arrays"] = split["dispatcher"] / split["pe_arrays"]
    # One scheduler and a matcher per array, over those arrays: the paper counts 8 per dispatcher.
    split["dispatcher_share"] = {str(n): (a["scheduler"] + n * a["matcher"]) / (n * a["array"])
                                 for n in DISPATCH_ARRAYS}
    if liberty:
        split["sram"] = _sram_split(results, a, cfg, liberty)
    return {"blocks": results, "split": split, "liberty": liberty,
            "config": json.loads(cfg.to_json())}


#: Arrays one dispatcher feeds in the shares reported: the scheduler's clusters, and the paper's 8.
DISPATCH_ARRAYS = (4, 8)

#: Area of one SRAM bit at 180 nm, periphery included, assumed for the dispatcher's storage:
#: a 180 nm 6T cell is about 4-5 um^2; doubled for decoders, sense amplifiers and wiring.
SRAM_UM2_PER_BIT = 10.0
SRAM_NODE_NM = 180


def sram_um2_per_bit(node_nm: int) -> float:
    """The assumed SRAM bit at ``node_nm``: the 180 nm figure scaled by the square of the
    feature size (0.625 um^2 at 45 nm, where a 6T cell is about 0.3-0.5 um^2 alone)."""
    return SRAM_UM2_PER_BIT * (node_nm / SRAM_NODE_NM) ** 2


def _sram_split(results: dict, a: dict, cfg: Config, liberty: str) -> dict:
    """The dispatcher with its queue and need tables as SRAM bits instead of flip-flops.

    Each storage bit's flip-flop (the library's most used sequential cell in the
    block) comes out and ``SRAM_UM2_PER_BIT`` goes in; the read multiplexers stay,
    so the figure is conservative.
    """
    lib = liberty_cells(os.path.abspath(liberty))
    node = kit(liberty).node_nm
    per_bit = sram_um2_per_bit(node)

    def with_sram(name, bits):
        seq = {t: n for t, n in results[name]["cell_types"].items() if lib.get(t, (0, False))[1]}
        flop = max(seq, key=seq.get)
        return a[name] - bits * lib[flop][0] + bits * per_bit
    sched = with_sram("scheduler", Scheduler.storage_bits(cfg))
    match = with_sram("matcher", Matcher.storage_bits(cfg))
    return {"um2_per_bit": per_bit, "node_nm": node, "scheduler": sched, "matcher": match,
            "share": {str(n): (sched + n * match) / (n * a["array"]) for n in DISPATCH_ARRAYS}}


def table_markdown(table: dict) -> str:
    """The area table as Markdown."""
    metric = table["split"]["metric"]
    unit = "um^2" if metric == "area_um2" else "transistors (estimate, no liberty)"
    lines = [f"| block | {unit} | sequential um^2 | cells |", "|---|---:|---:|---:|"]
    for name, r in table["blocks"].items():
        seq = r.get("sequential_area_um2")
        lines.append(f"| {name} | {r[metric]:,.0f} | {'' if seq is None else f'{seq:,.0f}'} | {r['cells']:,} |")
    s = table["split"]
    lines += [
        "",
        f"| Table 2 split ({s['arrays_fed']} arrays) | {unit} |", "|---|---:|",
        f"| PE arrays (Kaleido) | {s['pe_arrays']:,.0f} |",
        f"| PE arrays (baseline) | {s['baseline_pe_arrays']:,.0f} |",
        f"| dispatcher (1 scheduler + {s['arrays_fed']} matchers) | {s['dispatcher']:,.0f} |",
        f"| PE overhead vs baseline PE | {100 * s['pe_overhead']:.1f} % |",
        f"| array overhead vs baseline array | {100 * s['array_overhead']:.1f} % |",
        f"| dispatcher / PE arrays | {100 * s['dispatcher_over_arrays']:.1f} % |",
    ]
    for n, share in s["dispatcher_share"].items():
        lines.append(f"| dispatcher (1 scheduler + {n} matchers) / {n} PE arrays | {100 * share:.1f} % |")
    if "sram" in s:
        sr = s["sram"]
        lines += ["", f"With the scheduler's queue and the matchers' need tables as SRAM at "
                      f"{sr['um2_per_bit']:g} um^2 per bit (an assumption: a {SRAM_NODE_NM} nm 6T cell with "
                      f"its periphery, {SRAM_UM2_PER_BIT:g} um^2, scaled by the square of the feature size to "
                      f"{sr.get('node_nm', SRAM_NODE_NM)} nm; read multiplexers kept): "
                      f"scheduler {sr['scheduler']:,.0f} um^2, "
                      f"matcher {sr['matcher']:,.0f} um^2; dispatcher share "
                      + ", ".join(f"{100 * v:.1f} % at {n} arrays" for n, v in sr["share"].items()) + "."]
    return "\n".join(lines)
