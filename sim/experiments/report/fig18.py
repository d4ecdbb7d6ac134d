"""Fig. 18b: energy, and throughput per area and per watt, at one chip clock; and
every block's timing and energy per action (cycle model, synthesis, OpenSTA)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from golden import Config
from golden.cycle_model import baseline_cycles, kaleido_cycles
from golden.pe_kinds import ACCUMULATORS
from hw import blocks
from sim.experiments.report.base import pyplot, quantized, save, sweep
from sim.rtl.energy import run_energy
from synth.actions import ACTIONS
from synth.area import block_area
from synth.flow import default_liberty
from synth.power import energy_per_action
from synth.timing import block_timing

from .. import THRESHOLDS
from .figure import Figure

__all__ = ["point", "power_point", "timing_point", "plot", "markdown"]


def point(args):
    cfg_json, F, P, workload = args

    cfg = Config.from_json(cfg_json).with_(full_bits=F, partial_bits=P)
    lib = default_liberty()
    ops = quantized(cfg, workload)
    q, k = ops["q"][0], ops["k"][0]
    out = {"F": F, "P": P}
    runs = {"baseline": (cfg, "baseline", baseline_cycles(cfg.tokens, cfg.tokens, cfg))}
    for acc in ACCUMULATORS:
        for variant in ("pe", "full"):
            at = cfg.with_(accumulators=acc, variant=variant)
            runs[_fig18_key(variant, acc)] = (at, "kaleido", kaleido_cycles(q, k, at))
    for name, (at, design, c) in runs.items():
        r = run_energy(at, q, k, design, c.cycles, report=c if design == "kaleido" else None)
        array = "array" if design == "kaleido" else "baseline-array"
        out[name] = {"cycles": c.cycles, "energy_pj": r["energy_pj"], "dispatcher_pj": r["dispatcher_pj"],
                     "time_us": r["time_us"], "clock_mhz": r["clock_mhz"], "slowest_block": r["slowest_block"],
                     "array_um2": block_area(array, at, lib)["area_um2"]}
    return out


def _fig18_key(variant: str, accumulators: int) -> str:
    """A Kaleido run's name in a Fig. 18b point: ``pe``, ``full`` (the paper's PE), ``pe/4``, ``full/4``."""
    return variant if accumulators == ACCUMULATORS[0] else f"{variant}/{accumulators}"


def power_point(args):
    name, cfg_json = args
    e = energy_per_action(name, Config.from_json(cfg_json), default_liberty())
    # A block that misses the clock is measured at its own (synth.power.settling_period): the table says which.
    return name, {"energy_pj": e["energy_pj"], "measured_at_mhz": e["measured_at_mhz"]}


def timing_point(args):
    name, cfg_json = args
    return name, block_timing(name, Config.from_json(cfg_json), default_liberty())


def _fig18_ratios(p: dict, variant: str) -> dict:
    """Kaleido ``variant`` against the baseline at one threshold point of Fig. 18b."""
    k, b = p[variant], p["baseline"]
    return {"energy": k["energy_pj"] / b["energy_pj"], "speedup_cycles": b["cycles"] / k["cycles"],
            "speedup_time": b["time_us"] / k["time_us"],
            "per_area": (b["time_us"] * b["array_um2"]) / (k["time_us"] * k["array_um2"]),
            "per_watt": b["energy_pj"] / k["energy_pj"]}


def _fig18_label(key: str) -> str:
    variant, _, acc = key.partition("/")
    return f"{variant}, {acc or ACCUMULATORS[0]} acc"


def plot(out: Path, pts: list) -> None:
    plt = pyplot()

    labels = [f"({p['F']},{p['P']})" for p in pts]
    x = np.arange(len(pts))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    runs = [_fig18_key(v, n) for n in ACCUMULATORS for v in ("pe", "full")]
    width = 0.8 / len(runs)
    for i, v in enumerate(runs):
        ax1.bar(x + (i - (len(runs) - 1) / 2) * width, [_fig18_ratios(p, v)["energy"] for p in pts], width,
                label=f"Kaleido {_fig18_label(v)}")
    ax1.axhline(1.0, color="k", lw=0.8, ls="--", label="baseline")
    ax1.set_xticks(x, labels)
    ax1.set_xlabel("(F, P)")
    ax1.set_ylabel("energy / baseline energy")
    ax1.set_ylim(0, max(1.2, max(_fig18_ratios(p, v)["energy"] for p in pts for v in runs) * 1.1))
    ax1.set_title("Fig. 18b analog: energy of one Q K^T")
    ax1.legend(fontsize=7)
    fulls = [_fig18_key("full", n) for n in ACCUMULATORS]
    for key, style, label in (("speedup_time", "o", "speed (time)"), ("per_area", "s", "throughput / area"),
                              ("per_watt", "^", "throughput / watt")):
        for v, line in zip(fulls, ("-", ":")):
            ax2.plot(labels, [_fig18_ratios(p, v)[key] for p in pts], style + line,
                     label=f"{label}, {_fig18_label(v)}")
    ax2.axhline(1.0, color="k", lw=0.8, ls="--")
    ax2.set_ylim(0, max(1.2, max(_fig18_ratios(p, v)[k] for p in pts for v in fulls
                                 for k in ("speedup_time", "per_area", "per_watt")) * 1.1))
    ax2.set_xlabel("(F, P)")
    ax2.set_ylabel("Kaleido full / baseline")
    ax2.set_title("at each design's own fmax")
    ax2.legend(fontsize=8)
    save(fig, out / "fig18_energy.png")


def markdown(d: dict) -> list[str]:
    t = d["timing"]
    lines = [
        "## Clock: every block at one chip clock (timing-driven mapping, OpenSTA)",
        "",
        "The area design point; each block mapped for the chip clock (abc -D with a driving cell and an "
        "output load), with a clock tree, timed at it with propagated clocks; "
        f"{d.get('library', 'osu018')} cells, a stated wire per net, reset paths excluded; energy from timed "
        "gate-level activity.",
        "",
        "| block | area | clock | slack | critical path | fmax | energy per cycle (gate level) | energy measured at "
        "| from | to |",
        "|---|---:|---:|---:|---:|---:|---|---:|---|---|",
    ]
    areas, power = d.get("area", {}).get("blocks", {}), d.get("power", {})
    for name, r in t.items():
        area = areas.get(name, {}).get("area_um2")
        p = power.get(name, {})
        energy = ", ".join(f"{a} {e:.1f} pJ" for a, e in p.get("energy_pj", {}).items())
        at = f"{p['measured_at_mhz']:.1f} MHz" if p else ""
        lines.append(f"| {name} | {'' if area is None else f'{area:,.0f} um^2'} | {r['clock_mhz']:g} MHz | "
                     f"{r['slack_ns']:+.2f} ns | {r['critical_path_ns']:.2f} ns | {r['fmax_mhz']:.1f} MHz | "
                     f"{energy} | {at} | `{r['startpoint']}` | `{r['endpoint']}` |")
    missed = [n for n, r in t.items() if r["slack_ns"] < 0]
    if missed:
        lines += ["", f"Missing the chip clock: {', '.join(missed)}. A design runs at the clock its slowest "
                      "block meets, never at the target; the times below say which block set each."]
    lines += [
        "",
        "## Fig. 18b: energy, and throughput per area and per watt (cycle model, synthesis, OpenSTA)",
        "",
        "![fig18](fig18_energy.png)",
        "",
        "One `Q K^T` at the cycle-model design point; each design at the chip clock, or at the clock "
        "its slowest block (array, scheduler, matcher) meets if one misses it; energy = "
        "actions x energy per action (`kaleido power`) + leakage x time, for the PE array and, in "
        "`full`, the dispatcher (its scheduler shared by the arrays it feeds, its matcher per array, "
        "both clocked all run, busy energy measured on random data). "
        "Throughput per area counts the PE array's area; per watt is work per energy.",
        "",
        "| (F,P) | accumulators | energy pe / base | energy full / base | speedup (cycles) | "
        "speedup (time) | throughput/area | throughput/watt |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in d["fig18"]:
        for n in ACCUMULATORS:
            if _fig18_key("full", n) not in p:
                continue
            pe, full = _fig18_ratios(p, _fig18_key("pe", n)), _fig18_ratios(p, _fig18_key("full", n))
            lines.append(f"| ({p['F']},{p['P']}) | {n} | {pe['energy']:.3f} | {full['energy']:.3f} | "
                         f"{full['speedup_cycles']:.3f} | {full['speedup_time']:.3f} | "
                         f"{full['per_area']:.3f} | {full['per_watt']:.3f} |")
    at = next((p for p in d["fig18"] if (p["F"], p["P"]) == (5, 3)), d["fig18"][0])
    names = {"speedup_time": "time", "per_area": "throughput per area", "per_watt": "throughput per watt"}
    lines.append("")
    for n in ACCUMULATORS:
        key = _fig18_key("full", n)
        if key not in at:
            continue
        r = _fig18_ratios(at, key)
        wins = [names[k] for k in names if r[k] > 1]
        loses = [names[k] for k in names if r[k] <= 1]
        lines += [
            f"Ours at ({at['F']},{at['P']}), {n} accumulators: Kaleido (full) takes {r['energy']:.2f}x the "
            f"baseline's energy and {r['speedup_cycles']:.2f}x fewer cycles, but runs at "
            f"{at[key]['clock_mhz']:.0f} MHz (set by its "
            f"{at[key]['slowest_block'] or 'blocks, which meet the chip clock'}) "
            f"against {at['baseline']['clock_mhz']:.0f} MHz, so it takes "
            f"{1 / r['speedup_time']:.2f}x the baseline's time; throughput per area {r['per_area']:.2f}x, per "
            f"watt {r['per_watt']:.2f}x. Kaleido wins on {', '.join(wins) if wins else 'none of these'}; it "
            f"loses on {', '.join(loses) if loses else 'none'}.",
            "",
        ]
    share = at["full"]["dispatcher_pj"] / at["full"]["energy_pj"]
    lines += [
        "Where the energy goes: every Kaleido PE pays about twice the baseline PE's clock energy every "
        "cycle (more flip-flops), a hand-over and a drain per pass, and a nibble product costs nearly "
        "what a full one does (`kaleido power`: most of a product's energy is in the operand registers "
        f"and the accumulators, not the multiplier); the dispatcher is {100 * share:.0f} % of `full`'s "
        "energy here (its flip-flop queue and tables clock every cycle). The products it skips save "
        "less than all that. "
        "Paper: 16x energy efficiency over the GPU baseline (a different baseline: not a plain "
        "array of the same PEs).",
        "",
    ]
    return lines


def measured(study) -> bool:
    """Timing and energy need a liberty file and OpenSTA, and the report to want them."""
    return bool(study.energy and study.liberty and shutil.which("sta"))


def compute_timing(study) -> dict:
    return dict(sweep(timing_point, [(n, study.sizes["area"].to_json()) for n in blocks.UNITS], "timing",
                      study.jobs))


def compute_power(study) -> dict:
    return dict(sweep(power_point, [(n, study.sizes["area"].to_json()) for n in blocks.UNITS if n in ACTIONS],
                      "energy per action", study.jobs))


def compute(study) -> list:
    points = [(study.mid.to_json(), F, P, study.workload) for F, P in THRESHOLDS]
    # The first point synthesizes and measures the blocks; the rest read them from the cache.
    return [point(points[0])] + sweep(point, points[1:], "fig 18 energy", study.jobs)


TIMING = Figure("timing", compute_timing, wanted=measured)
POWER = Figure("power", compute_power, wanted=measured)
FIGURE = Figure("fig18", compute, 11, lambda out, data: plot(out, data["fig18"]), markdown, measured)
