"""``kaleido report`` / ``make report``: the paper's figures, reproduced from our
own golden model, cycle model, RTL simulation and synthesis.

Every sweep point is independent, so the sweeps run over processes with a
progress bar; everything is seeded, so a report is deterministic for a seed.
Writes ``DIR/report.md``, ``DIR/report.json`` and one PNG per figure.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from golden import Config, expected_scores, int_gemm, pair_reuse, quantize, run_attention
from golden.attention import attention_output, mask_skip, quality, topk_output
from golden.config import GROUPS
from golden.pe import ACCUMULATORS
from golden.reuse_stats import AXES
from golden.cycle_model import (VARIANTS, baseline_cycles, baseline_tile_slots, kaleido_cycles,
                                kaleido_tables, kaleido_tile_slots, split_cycles)
from golden.video import CLIPS

from hw import blocks

from .experiments import FIGURE_DISPATCHERS, THRESHOLDS
from .simulate import pick_simulator, simulate
from .workload_cmd import DEFAULT_CLIP, make_workload

SKIP_SWEEP = [(2, 0), (3, 1), (4, 2), (5, 3), (6, 4), (7, 5)]
ARRAY_SIZES = [2, 4, 8, 16]
TOTAL_PES = 256
NOISE_SWEEP = [0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0]


def _quantized(cfg, workload):
    w = make_workload(cfg, workload)
    return {n: quantize(w[n]) for n in "qkv"}


def _output(cfg, ops, q, k, v):
    (_, sq), (_, sk), (_, sv) = ops["q"], ops["k"], ops["v"]
    scale = sq * sk / math.sqrt(cfg.head_dim)
    return attention_output(int_gemm(q, k), v, scale) * sv


# -- Fig. 7: reuse direction per channel group ---------------------------------------------

def fig7_point(args):
    cfg_json, group, axis, workload = args
    cfg = Config.from_json(cfg_json)
    ops = _quantized(cfg, workload)
    q, k, v = (ops[n][0] for n in "qkv")
    exact = _output(cfg, ops, q, k, v)
    d = {group: AXES.index(axis)}
    qa, ka, va = (pair_reuse(x, cfg, directions=d, groups=(group,)).approx for x in (q, k, v))
    return group, axis, quality(exact, _output(cfg, ops, qa, ka, va))["mse"]


# -- Fig. 9: reuse against skipping at equal savings ----------------------------------------

def fig9_point(args):
    cfg_json, F, P, workload = args
    cfg = Config.from_json(cfg_json).with_(full_bits=F, partial_bits=P)
    ops = _quantized(cfg, workload)
    q, k, v = (ops[n][0] for n in "qkv")
    exact = _output(cfg, ops, q, k, v)
    res = run_attention(q, k, cfg, v=v, scales=tuple(ops[n][1] for n in "qkv"))
    saving = res.oracle_reduction
    skip = _output(cfg, ops, mask_skip(q, cfg), mask_skip(k, cfg), mask_skip(v, cfg))
    (_, sq), (_, sk), (_, sv) = ops["q"], ops["k"], ops["v"]
    keep = max(1, round((1 - saving) * cfg.tokens))
    topk = topk_output(int_gemm(q, k), v, sq * sk / math.sqrt(cfg.head_dim), keep) * sv
    return {"F": F, "P": P, "saving": saving, "reuse": res.float_mse,
            "mask_skip": quality(exact, skip)["mse"], "topk": quality(exact, topk)["mse"]}


# -- Fig. 19 and 21: cycle model ----------------------------------------------------------

def fig19_point(args):
    cfg_json, variant, workload = args
    cfg = Config.from_json(cfg_json)
    ops = _quantized(cfg, workload)
    r = kaleido_cycles(ops["q"][0], ops["k"][0], cfg, variant)
    return variant, r.as_dict()


def fig21_point(args):
    cfg_json, size, workload = args
    cfg = Config.from_json(cfg_json).with_(rows=size, cols=size)
    arrays = TOTAL_PES // (size * size)
    ops = _quantized(cfg, workload)
    q, k = ops["q"][0], ops["k"][0]
    qt, kt = kaleido_tables(q, k, cfg, "full")
    slots, _ = kaleido_tile_slots(qt, kt, cfg, True)
    base = baseline_tile_slots(cfg.tokens, cfg.tokens, cfg)
    return size, {"arrays": arrays, "kaleido": split_cycles(slots, arrays, cfg),
                  "baseline": split_cycles(base, arrays, cfg)}


# -- Fig. 23: thresholds -------------------------------------------------------------------

def fig23_point(args):
    cfg_json, F, P, workload = args
    cfg = Config.from_json(cfg_json).with_(full_bits=F, partial_bits=P)
    ops = _quantized(cfg, workload)
    q, k, v = (ops[n][0] for n in "qkv")
    res = run_attention(q, k, cfg, v=v, scales=tuple(ops[n][1] for n in "qkv"))
    hw = kaleido_cycles(q, k, cfg, "full")
    base = baseline_cycles(cfg.tokens, cfg.tokens, cfg)
    return {"F": F, "P": P, "oracle_reduction": res.oracle_reduction,
            "hardware_reduction": 1 - hw.executed_macs / res.dense_macs,
            "psnr_db": res.float_psnr_db, "speedup": base.cycles / hw.cycles}


# -- Fig. 20: a vDiT block, reuse in attention only or in every layer ------------------------

#: Thresholds of the block study: the paper's default, one notch safer, and full reuse alone
#: (P = F: no partial reuse), which the study shows is where the linear layers' error comes from.
BLOCK_THRESHOLDS = [(5, 3), (6, 4), (5, 5), (6, 6), (7, 7)]


def fig20_point(args):
    """A vDiT block (golden.block) at one (F, P) and PE: speedup and PSNR per scope."""
    from golden.block import block_figures

    cfg_json, F, P, accumulators, workload = args
    cfg = Config.from_json(cfg_json).with_(full_bits=F, partial_bits=P, accumulators=accumulators)
    w = make_workload(cfg, workload)
    # Two heads' worth of activations with the workload's motion: its V and K side by side.
    x = np.concatenate([w["v"], w["k"]], axis=1).astype(np.float64)
    rows = block_figures(x, cfg, seed=cfg.seed)
    return {"F": F, "P": P, "accumulators": accumulators, "channels": x.shape[1],
            **{scope: {k: v for k, v in r.items() if k != "cycles"} | {"layers": r["cycles"]}
               for scope, r in rows.items()}}


def pv_point(args):
    """``P V~`` on the Kaleido array (V's full reuse folded per column tile) against the baseline."""
    from sim.bench import bench_pv

    cfg_json, workload = args
    cfg = Config.from_json(cfg_json)
    return bench_pv([(workload, cfg.grid, cfg.head_dim)], cfg)[0]


# -- Real video: workloads against each other, and the denoising step ------------------------

def _speedup(q, k, cfg):
    return baseline_cycles(cfg.tokens, cfg.tokens, cfg).cycles / kaleido_cycles(q, k, cfg, "full").cycles


def clips_point(args):
    cfg_json, workload, F, P = args
    cfg = Config.from_json(cfg_json).with_(full_bits=F, partial_bits=P)
    ops = _quantized(cfg, workload)
    q, k = ops["q"][0], ops["k"][0]
    return {"workload": workload, "F": F, "P": P,
            "oracle_reduction": run_attention(q, k, cfg).oracle_reduction,
            "speedup": _speedup(q, k, cfg)}


def noise_point(args):
    cfg_json, clip, sigma = args
    from golden.video import video_workload

    cfg = Config.from_json(cfg_json)
    w = video_workload(cfg, clip, noise=sigma)
    q, k = quantize(w["q"])[0], quantize(w["k"])[0]
    res = run_attention(q, k, cfg)
    return {"sigma": sigma, "oracle_reduction": res.oracle_reduction,
            "oracle_bound": 1 / (1 - res.oracle_reduction), "speedup": _speedup(q, k, cfg)}


# -- Speed against the oracle bound, and throughput per PE area ------------------------------

SPEED_DIMS = [16, 32, 64, 128]

#: The dispatchers the speed figure compares, ``(issue_window, cluster_rule)``.
SPEED_DISPATCHERS = FIGURE_DISPATCHERS


def _dispatcher(p: dict) -> tuple[int, str]:
    """A speed point's dispatcher, ``(issue_window, cluster_rule)``."""
    return p.get("issue_window", 0), p.get("cluster_rule", "pivots")


def _dispatcher_label(window: int, rule: str) -> str:
    """How the figure and table name a dispatcher beside the PE ('' for the paper's)."""
    return (f", window {window}" if window else "") + (f", {rule} rule" if rule != "pivots" else "")


def _pe_key(accumulators: int, issue_window: int) -> str:
    """The key of a PE in ``pe_areas``: its accumulators, and its window if any."""
    return f"{accumulators}" + (f"/w{issue_window}" if issue_window else "")


def speed_point(args):
    """Speedup over the baseline array (cycle model, variant full, the driver's
    schedule) and the oracle bound at one design point, for one PE and dispatcher."""
    cfg_json, accumulators, workload, (window, rule) = args
    cfg = Config.from_json(cfg_json).with_(accumulators=accumulators, issue_window=window, cluster_rule=rule)
    ops = _quantized(cfg, workload)
    q, k = ops["q"][0], ops["k"][0]
    golden = run_attention(q, k, cfg)
    base = baseline_cycles(cfg.tokens, cfg.tokens, cfg)
    kal = kaleido_cycles(q, k, cfg, "full")
    return {"D": cfg.head_dim, "F": cfg.full_bits, "P": cfg.partial_bits, "accumulators": accumulators,
            "issue_window": window, "cluster_rule": rule, "speedup": base.cycles / kal.cycles, "pair_speedup": base.cycles / kal.pair_cycles,
            "schedule": kal.schedule, "oracle_bound": golden.dense_macs / golden.oracle_macs,
            "executed_over_oracle": kal.executed_macs / golden.oracle_macs if kal.schedule == "pairs" else None}


def pe_areas(cfg: Config, liberty, windows=tuple(sorted({w for w, _ in SPEED_DISPATCHERS}))) -> dict:
    """Synthesized area of the baseline PE and of both Kaleido PEs at ``cfg``, plain
    and behind each channel window of ``windows`` (keys from :func:`_pe_key`)."""
    from synth.area import block_area

    key = "area_um2" if liberty else "transistors"
    out = {"baseline": block_area("baseline-pe", cfg, liberty)[key], "unit": "um^2" if liberty else "transistors"}
    for n in ACCUMULATORS:
        for w in windows:
            at = cfg.with_(accumulators=n, issue_window=w)
            out[_pe_key(n, w)] = block_area("window-pe" if w else "pe", at, liberty)[key]
    return out


# -- Fig. 18b: energy, and throughput per area and per watt -----------------------------------

def fig18_point(args):
    cfg_json, F, P, workload = args
    from synth.area import block_area
    from synth.flow import default_liberty
    from .energy import run_energy

    cfg = Config.from_json(cfg_json).with_(full_bits=F, partial_bits=P)
    lib = default_liberty()
    ops = _quantized(cfg, workload)
    q, k = ops["q"][0], ops["k"][0]
    out = {"F": F, "P": P}
    runs = {"baseline": (cfg, "baseline", "pe", baseline_cycles(cfg.tokens, cfg.tokens, cfg))}
    for acc in ACCUMULATORS:
        at = cfg.with_(accumulators=acc)
        for variant in ("pe", "full"):
            runs[_fig18_key(variant, acc)] = (at, "kaleido", variant, kaleido_cycles(q, k, at, variant))
    for name, (at, design, variant, c) in runs.items():
        r = run_energy(at, q, k, design, variant, c.cycles, report=c if design == "kaleido" else None)
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
    from synth.flow import default_liberty
    from synth.power import energy_per_action
    return name, energy_per_action(name, Config.from_json(cfg_json), default_liberty())["energy_pj"]


def timing_point(args):
    name, cfg_json = args
    from synth.flow import default_liberty
    from synth.timing import block_timing
    return name, block_timing(name, Config.from_json(cfg_json), default_liberty())


def _sweep(fn, points, label, jobs):
    from tqdm import tqdm

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(tqdm(pool.map(fn, points), total=len(points), desc=label, leave=False))


def _plots(out: Path, data: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Fig. 7
    fig, ax = plt.subplots(figsize=(6, 3.6))
    width = 0.25
    for i, axis in enumerate(AXES):
        vals = [data["fig7"][g][axis] for g in GROUPS]
        ax.bar(np.arange(3) + (i - 1) * width, vals, width, label=f"reuse along {axis}")
    ax.set_xticks(range(3), [f"{g}-channels" for g in GROUPS])
    ax.set_yscale("log")
    ax.set_ylabel("output MSE")
    ax.set_title("Fig. 7 analog: one channel group reused along each direction")
    ax.legend(fontsize=8)
    _save(fig, out / "fig7_directions.png")

    # Fig. 9
    fig, ax = plt.subplots(figsize=(6, 3.6))
    pts = data["fig9"]
    x = [100 * p["saving"] for p in pts]
    for key, label in (("reuse", "channel-wise reuse"), ("mask_skip", "mask-skip (same masks)"),
                       ("topk", "top-k sparse attention")):
        ax.plot(x, [p[key] for p in pts], "o-", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("MACs saved (%)")
    ax.set_ylabel("output MSE")
    ax.set_title("Fig. 9 analog: reuse against skipping at equal savings")
    ax.legend(fontsize=8)
    _save(fig, out / "fig9_reuse_vs_skip.png")

    # Fig. 19
    fig, ax1 = plt.subplots(figsize=(6, 3.6))
    names = list(VARIANTS)
    cyc = [data["fig19"]["model"][v]["cycles"] for v in names]
    util = [100 * data["fig19"]["model"][v]["utilization"] for v in names]
    ax1.bar(names, [cyc[0] / c for c in cyc], color="tab:blue", label="speedup over pe")
    ax1.set_ylabel("speedup over pe")
    ax2 = ax1.twinx()
    ax2.plot(names, util, "o-", color="tab:red", label="utilization")
    ax2.set_ylabel("PE lane utilization (%)")
    ax2.set_ylim(0, 100)            # from zero: a 3-point change should look like one
    ax1.set_ylim(0, max(1.0, *(cyc[0] / c for c in cyc)) * 1.15)
    _legend(ax1, ax2, "lower right")
    ax1.set_title("Fig. 19 analog: dispatcher ablation (cycle model)")
    _save(fig, out / "fig19_ablation.png")

    # Fig. 21
    fig, ax = plt.subplots(figsize=(6, 3.6))
    sizes = sorted(data["fig21"], key=int)
    ref = data["fig21"]["4"]["kaleido"] if "4" in data["fig21"] else data["fig21"][sizes[0]]["kaleido"]
    ax.plot([f"{s}x{s}" for s in sizes], [ref / data["fig21"][s]["kaleido"] for s in sizes], "o-",
            label="Kaleido (full)")
    ax.plot([f"{s}x{s}" for s in sizes], [ref / data["fig21"][s]["baseline"] for s in sizes], "s--",
            label="baseline")
    ax.set_xlabel(f"PEs per array ({TOTAL_PES} PEs in all)")
    ax.set_ylabel("speedup, normalized to Kaleido 4x4")
    ax.set_title("Fig. 21 analog: per-array size (cycle model)")
    ax.legend(fontsize=8)
    _save(fig, out / "fig21_array_size.png")

    # Fig. 23
    fig, ax1 = plt.subplots(figsize=(6, 3.6))
    pts = data["fig23"]
    labels = [f"({p['F']},{p['P']})" for p in pts]
    ax1.plot(labels, [100 * p["oracle_reduction"] for p in pts], "o-", label="oracle reduction")
    ax1.plot(labels, [100 * p["hardware_reduction"] for p in pts], "s-", label="hardware reduction")
    ax1.set_ylabel("MACs saved (%)")
    ax1.set_xlabel("(F, P) prefix bits")
    ax2 = ax1.twinx()
    ax2.plot(labels, [p["psnr_db"] for p in pts], "^--", color="tab:red", label="PSNR (right axis)")
    ax2.set_ylabel("output PSNR, float softmax (dB)")
    _legend(ax1, ax2, "upper right")
    ax1.set_title("Fig. 23 analog: thresholds")
    _save(fig, out / "fig23_thresholds.png")

    # Real video: reuse and speed against the denoising step
    fig, ax1 = plt.subplots(figsize=(6, 3.6))
    pts = data["noise"]["points"]
    sig = [p["sigma"] for p in pts]
    ax1.plot(sig, [100 * p["oracle_reduction"] for p in pts], "o-", label="oracle reduction")
    ax1.set_ylabel("MACs the oracle saves (%)")
    ax1.set_ylim(0, 100)
    ax1.set_xlabel("noise sigma: (1 - sigma) latent + sigma noise")
    ax2 = ax1.twinx()
    ax2.plot(sig, [p["oracle_bound"] for p in pts], "s:", color="tab:gray", label="oracle bound (right)")
    ax2.plot(sig, [p["speedup"] for p in pts], "^--", color="tab:red",
             label="Kaleido speedup over baseline (right)")
    ax2.set_ylabel("speedup")
    ax2.set_ylim(0, max(p["oracle_bound"] for p in pts) * 1.1)
    _legend(ax1, ax2, "upper right")
    ax1.set_title(f"Reuse against the denoising step ({data['noise']['clip']}, cycle model)")
    _save(fig, out / "noise_sweep.png")


def _fig18_ratios(p: dict, variant: str) -> dict:
    """Kaleido ``variant`` against the baseline at one threshold point of Fig. 18b."""
    k, b = p[variant], p["baseline"]
    return {"energy": k["energy_pj"] / b["energy_pj"], "speedup_cycles": b["cycles"] / k["cycles"],
            "speedup_time": b["time_us"] / k["time_us"],
            "per_area": (b["time_us"] * b["array_um2"]) / (k["time_us"] * k["array_um2"]),
            "per_watt": b["energy_pj"] / k["energy_pj"]}


def _plot_speed(out: Path, sp: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    area = sp["pe_area"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, key, xs, label in ((axes[0], "over_d", "D", "head dimension D"),
                               (axes[1], "over_fp", "FP", "thresholds (F,P)")):
        pts = sp[key]
        ticks = sorted({p["D"] if xs == "D" else (p["F"], p["P"]) for p in pts})
        x = np.arange(len(ticks))

        def series(n, field, d=(0, "pivots")):
            by = {(p["D"] if xs == "D" else (p["F"], p["P"])): p[field] for p in pts
                  if p["accumulators"] == n and _dispatcher(p) == d}
            return [by[t] for t in ticks]
        ax.plot(x, series(3, "oracle_bound"), "k--", label="oracle bound (3 acc.)")
        for n, color in ((3, "tab:blue"), (4, "tab:orange")):
            for i, d in enumerate(sorted({_dispatcher(p) for p in pts})):
                ax.plot(x, series(n, "speedup", d), ("o-", "s:", "^-.", "v--")[i % 4], color=color,
                        label=f"Kaleido, {n} accumulators" + _dispatcher_label(*d))
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xticks(x, [str(t) if xs == "D" else f"({t[0]},{t[1]})" for t in ticks])
        ax.set_xlabel(label)
        ax.set_ylabel("speedup over the baseline array")
        ax.set_ylim(0, None)
        ax.legend(fontsize=7)
    ax = axes[2]
    pts = [p for p in sp["over_d"]]
    ticks = sorted({p["D"] for p in pts})
    x = np.arange(len(ticks))
    for n, color in ((3, "tab:blue"), (4, "tab:orange")):
        for i, d in enumerate(sorted({_dispatcher(p) for p in pts})):
            by = {p["D"]: p["speedup"] for p in pts if p["accumulators"] == n and _dispatcher(p) == d}
            pe = _pe_key(n, d[0])
            ax.plot(x, [by[t] * area["baseline"] / area[pe] for t in ticks], ("o-", "s:", "^-.", "v--")[i % 4],
                    color=color, label=f"{n} acc.{_dispatcher_label(*d)} (PE {area[pe] / area['baseline']:.2f}x "
                                       "the area)")
    ax.axhline(1.0, color="gray", lw=0.8, label="baseline array")
    ax.set_xticks(x, [str(t) for t in ticks])
    ax.set_xlabel("head dimension D")
    ax.set_ylabel("throughput per PE area, vs baseline")
    ax.set_ylim(0, 1.2)
    ax.legend(fontsize=7)
    fig.suptitle("Speed against the oracle bound (cycle model, variant full), and at equal PE area")
    _save(fig, out / "speed_vs_bound.png")


def _speed_markdown(d: dict) -> list[str]:
    sp = d["speed"]
    area = sp["pe_area"]
    lines = [
        "## Speed against the oracle bound, and at equal PE area (cycle model, synthesis)",
        "",
        "![speed](speed_vs_bound.png)",
        "",
        "Variant full; the engine runs passes A-D, or the dense schedule where those would be "
        "slower (`schedule`). Share = speedup / oracle bound. Throughput per PE area = speedup x "
        f"baseline PE area / Kaleido PE area (PE areas at the cycle-model point, {area['unit']}: baseline "
        f"{area['baseline']:,.0f}; " + "; ".join(
            f"{k.replace('/w', ' acc., window ')}{'' if '/' in k else ' acc.'} {v:,.0f}"
            for k, v in area.items() if k not in ("baseline", "unit")) + "). A channel window "
        "(`--issue-window`) lets each column (passes B, D) or row (C) take its own steps from W "
        "channels a slot, on W-byte ports; the weight rule (`--cluster-rule weight`) has the "
        "scheduler sort pairs by their partners' work, so a tile's columns and rows finish together.",
        "",
        "| point | PE | speedup | oracle bound | share | executed / oracle | schedule | per PE area |",
        "|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for key in ("over_d", "over_fp"):
        for p in sp[key]:
            where = f"D={p['D']}" if key == "over_d" else f"(F,P)=({p['F']},{p['P']})"
            ex = f"{p['executed_over_oracle']:.3f}" if p["executed_over_oracle"] is not None else "-"
            w = p.get("issue_window", 0)
            per_area = p["speedup"] * area["baseline"] / area[_pe_key(p["accumulators"], w)]
            pe = f"{p['accumulators']} acc." + _dispatcher_label(*_dispatcher(p))
            lines.append(f"| {where} | {pe} | {p['speedup']:.3f} | {p['oracle_bound']:.2f} | "
                         f"{p['speedup'] / p['oracle_bound']:.2f} | {ex} | {p['schedule']} | {per_area:.2f} |")
    best = max(p["speedup"] * area["baseline"] / area[_pe_key(p["accumulators"], p.get("issue_window", 0))]
               for k in ("over_d", "over_fp") for p in sp[k])
    share = {d: max(p["speedup"] / p["oracle_bound"] for p in sp["over_d"] if _dispatcher(p) == d)
             for d in sorted({_dispatcher(p) for p in sp["over_d"]})}
    lines += [
        "",
        (f"Ours: at equal PE area Kaleido {'wins' if best > 1 else 'loses'} at every point here "
         f"(best throughput per PE area {best:.2f}x the baseline's): its speedup stays below the "
         f"{area['3'] / area['baseline']:.2f}x (3 acc.) or {area['4'] / area['baseline']:.2f}x (4 acc.) "
         "area its PE costs. It is never slower than the baseline array (the dense schedule "
         "covers the rest), and the exact PE executes exactly the oracle's MACs." if best <= 1 else
         f"Ours: best throughput per PE area {best:.2f}x the baseline's."),
        "",
        "Best share of the oracle bound over D: " + ", ".join(
            f"{v:.2f} with " + ("the matcher" if not d[0] else f"a window of {d[0]}")
            + (f" and the {d[1]} rule" if d[1] != "pivots" else "") for d, v in share.items())
        + ". The window and the weight rule buy cycles, but the window's PE costs more area than the "
          "cycles it saves.",
        "",
    ]
    return lines


def _fig18_label(key: str) -> str:
    variant, _, acc = key.partition("/")
    return f"{variant}, {acc or ACCUMULATORS[0]} acc"


def _plot_fig18(out: Path, pts: list) -> None:
    import matplotlib.pyplot as plt

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
    _save(fig, out / "fig18_energy.png")


def _plot_fig20(out: Path, pts: list) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for scope, color in (("attention", "tab:blue"), ("all", "tab:red")):
        for n, marker in ((3, "o"), (4, "s")):
            sel = [p for p in pts if p["accumulators"] == n]
            ax.scatter([min(p[scope]["psnr_db"], 99) for p in sel], [p[scope]["speedup"] for p in sel],
                       color=color, marker=marker,
                       label=f"reuse in {'attention only' if scope == 'attention' else 'all layers'}, "
                             f"{n} accumulators")
            for p in sel:
                ax.annotate(f"({p['F']},{p['P']})", (min(p[scope]["psnr_db"], 99), p[scope]["speedup"]),
                            fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_xlabel("PSNR of the block output against no reuse (dB; 99 = exact)")
    ax.set_ylabel("speedup over the baseline array")
    ax.set_title("A vDiT block (seeded random weights): speed against quality", fontsize=9)
    ax.legend(fontsize=7)
    _save(fig, out / "fig20_block.png")


def _pv_markdown(d: dict) -> list[str]:
    lines = [
        "## P V~ with V's reuse (cycle model, equal to the RTL's `kaleido sim attention --v`)",
        "",
        "A fully reused key folds into its reference (`(P0 + P1) V0`, the shared multiply) only where every "
        "channel of a column tile reuses it fully, because the array's columns step through the keys "
        "together (`golden/pv_tiles.py`); the engine runs each column tile over its own keys, or the dense "
        "product where that is faster.",
        "",
        "| workload | speedup over the baseline | oracle bound | share of the bound | executed / oracle |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in d["pv"]:
        lines.append(f"| {p['workload']} | {p['speedup']:.3f}x ({p['schedule']}) | {p['oracle_bound']:.3f}x | "
                     f"{100 * p['share_of_bound']:.0f} % | {p['executed_over_oracle']:.2f} |")
    return lines + ["", "Real video's static regions repeat in every channel, so many keys fold; the "
                    "proxy's random embedding decorrelates channels, so few do.", ""]


def _fig20_markdown(d: dict) -> list[str]:
    pts = d["fig20"]
    lines = [
        "## Fig. 20: a vDiT block, reuse in attention only or in every layer (golden and cycle models)",
        "",
        "![fig20](fig20_block.png)",
        "",
        f"The block (`golden/block.py`): QKV projection, two heads of attention (3-D RoPE, float "
        f"softmax over `S~`, `V~`), output projection with a residual, and a 2-layer MLP of 4C with a "
        f"residual; C = {pts[0]['channels']}, no normalization layers. **The weights are seeded random, "
        "not a trained model's**, and the input is the workload's V and K side by side. Every product "
        "runs on per-tensor int8 operands; PSNR is the block output's against the same block without "
        "reuse, so quantization is not counted. Cycles: the heads' three stages (`S~` with the driver's "
        "choice, the softmax unit, `P V~` with V's full reuse folded per column tile where that is faster, "
        "`golden.head_cycles.pv_cycles`) and the four linear layers (`golden/linear_cycles.py`, "
        "equal to the RTL's `kaleido sim linear`), variant full, against the baseline array.",
        "",
        "| (F,P) | PE | attention only: speedup | PSNR | all layers: speedup | PSNR | cosine |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for p in pts:
        a, b = p["attention"], p["all"]
        lines.append(f"| ({p['F']},{p['P']}) | {p['accumulators']} acc. | {a['speedup']:.3f}x | "
                     f"{a['psnr_db']:.1f} dB | {b['speedup']:.3f}x | {b['psnr_db']:.1f} dB | {b['cosine']:.4f} |")
    default = {p["accumulators"]: p for p in pts if (p["F"], p["P"]) == (5, 3)}
    best = max(pts, key=lambda p: p["all"]["speedup"] if p["all"]["psnr_db"] >= 30 else 0)
    lines += [
        "",
        "Paper (HunyuanVideo): applying Kaleido to the linear layers as well gives more speedup "
        "while the PSNR stays nearly unchanged.",
        "",
        f"Ours: more speedup, yes (at (5,3), {default[3]['all']['speedup']:.2f}x / "
        f"{default[4]['all']['speedup']:.2f}x with 3 / 4 accumulators against "
        f"{default[3]['attention']['speedup']:.2f}x / {default[4]['attention']['speedup']:.2f}x for attention "
        f"only), but **not at unchanged quality**: the block output's PSNR falls from "
        f"{default[3]['attention']['psnr_db']:.1f} dB to {default[3]['all']['psnr_db']:.1f} dB. The windows' "
        "partial reuse (`16 hi(ref) + lo(own)`) errs by up to 15 int8 steps whenever a window straddles "
        "a nibble boundary, and the linear layers feed that error straight into the residual stream; "
        f"with P = F (full reuse only) the loss is smaller. Best here above 30 dB: ({best['F']},{best['P']}) "
        f"with {best['accumulators']} accumulators, {best['all']['speedup']:.2f}x at "
        f"{best['all']['psnr_db']:.1f} dB. Random weights and one block are not a video model over "
        "its denoising steps, so this does not refute the paper's end-to-end figure; it says the "
        "per-block error is not small.",
        "",
    ]
    return lines


def _save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _legend(ax1, ax2, loc):
    # One legend for both axes of a twin plot, so no line goes unnamed.
    h1, l1 = ax1.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax1.legend(h1 + h2, l1 + l2, loc=loc, fontsize=8)


def default_sizes(seed: int) -> dict:
    """The design points of the report's studies."""
    return {
        "golden": Config.for_model("wan2.1", 128, grid=(8, 16, 16), seed=seed),
        "cycle_model": Config.for_model("wan2.1", 64, grid=(4, 8, 8), seed=seed),
        "rtl": Config.for_model("wan2.1", 32, grid=(2, 8, 8), seed=seed),
        "area": Config(seed=seed),
    }


def build_report(out: Path, seed: int = 1, jobs: int = 2, rtl: bool = True,
                 simulator: str | None = None, sizes: dict | None = None,
                 workload: str = DEFAULT_CLIP, clips: tuple = tuple(CLIPS), energy: bool = True) -> dict:
    """Run every study and write the report; ``sizes`` overrides :func:`default_sizes`.

    ``workload`` feeds every figure (``proxy``, a clip, or a video file); the
    workload table sets the proxy beside each of ``clips``, and the noise sweep
    runs on ``workload``, or on the default clip when that is the proxy. With
    ``energy`` (and OpenSTA and a liberty file here) it adds the fmax of every
    block and the Fig. 18b analog: energy, throughput per area and per watt.
    """
    from synth.area import area_table, table_markdown
    from synth.flow import default_liberty

    sizes = {**default_sizes(seed), **(sizes or {})}
    big, mid, small = sizes["golden"], sizes["cycle_model"], sizes["rtl"]
    sim = pick_simulator(simulator) if rtl else None     # no simulator: say so before any work
    data = {"seed": seed, "workload": workload,
            "configs": {k: json.loads(c.to_json()) for k, c in sizes.items()}}
    t0 = time.perf_counter()
    w = workload
    _quantized(big, w)              # a workload that cannot be read fails here, before any output
    out.mkdir(parents=True, exist_ok=True)

    pts = _sweep(fig7_point, [(big.to_json(), g, a, w) for g in GROUPS for a in AXES], "fig 7", jobs)
    data["fig7"] = {g: {} for g in GROUPS}
    for g, a, mse in pts:
        data["fig7"][g][a] = mse
    data["fig9"] = _sweep(fig9_point, [(big.to_json(), F, P, w) for F, P in SKIP_SWEEP], "fig 9", jobs)
    data["fig19"] = {"model": dict(_sweep(fig19_point, [(mid.to_json(), v, w) for v in VARIANTS],
                                          "fig 19", jobs))}
    data["fig21"] = {str(s): r for s, r in _sweep(fig21_point, [(mid.to_json(), s, w) for s in ARRAY_SIZES],
                                                  "fig 21", jobs)}
    data["fig23"] = _sweep(fig23_point, [(mid.to_json(), F, P, w) for F, P in THRESHOLDS], "fig 23", jobs)
    data["fig20"] = _sweep(fig20_point, [(mid.to_json(), F, P, n, w) for F, P in BLOCK_THRESHOLDS
                                         for n in ACCUMULATORS], "fig 20 block", jobs)
    data["pv"] = _sweep(pv_point, [(mid.to_json(), name) for name in ("proxy", *clips)], "P V~", jobs)
    data["workloads"] = _sweep(clips_point, [(mid.to_json(), name, F, P) for name in ("proxy", *clips)
                                             for F, P in THRESHOLDS], "workloads", jobs)
    noise_clip = DEFAULT_CLIP if w == "proxy" else w
    data["noise"] = {"clip": noise_clip,
                     "points": _sweep(noise_point, [(mid.to_json(), noise_clip, s) for s in NOISE_SWEEP],
                                      "noise", jobs)}

    if rtl:
        ops = _quantized(small, w)
        q, k = ops["q"][0], ops["k"][0]
        rtl_runs = {}
        for variant in VARIANTS:
            work = out / f".work-{variant}"
            try:
                r = simulate(small, q, k, "kaleido", sim, work, label=f"fig 19 RTL {variant}",
                             variant=variant)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            model = kaleido_cycles(q, k, small, variant)
            rtl_runs[variant] = {"cycles": r["cycles"], "model_cycles": model.cycles,
                                 "utilization": r["utilization"],
                                 "scores_match": bool(np.array_equal(
                                     r["scores"], expected_scores(q, k, small, "kaleido")))}
        data["fig19"]["rtl"] = {"simulator": sim, "runs": rtl_runs}

    liberty = default_liberty()
    over_d = [(mid.with_(partition=Config.for_model("wan2.1", D).partition, max_channels=None,
                         acc_bits=None, pe_acc_bits=None).to_json(), n, w, W)
              for D in SPEED_DIMS for n in ACCUMULATORS for W in SPEED_DISPATCHERS]
    over_fp = [(mid.with_(full_bits=F, partial_bits=P).to_json(), n, w, W)
               for F, P in THRESHOLDS for n in ACCUMULATORS for W in SPEED_DISPATCHERS]
    data["speed"] = {"over_d": _sweep(speed_point, over_d, "speed over D", jobs),
                     "over_fp": _sweep(speed_point, over_fp, "speed over F,P", jobs),
                     "pe_area": pe_areas(mid, liberty)}
    data["area"] = area_table(sizes["area"], liberty, jobs)
    if energy and liberty and shutil.which("sta"):
        data["timing"] = dict(_sweep(timing_point, [(n, sizes["area"].to_json()) for n in blocks.BLOCKS],
                                     "timing", jobs))
        from synth.power import ACTIONS
        data["power"] = dict(_sweep(power_point, [(n, sizes["area"].to_json()) for n in blocks.BLOCKS
                                                  if n in ACTIONS], "energy per action", jobs))
        points = [(mid.to_json(), F, P, w) for F, P in THRESHOLDS]
        # The first point synthesizes and measures the blocks; the rest read them from the cache.
        data["fig18"] = [fig18_point(points[0])] + _sweep(fig18_point, points[1:], "fig 18 energy", jobs)
    data["seconds"] = time.perf_counter() - t0
    _plots(out, data)
    _plot_speed(out, data["speed"])
    _plot_fig20(out, data["fig20"])
    if "fig18" in data:
        _plot_fig18(out, data["fig18"])
    (out / "report.json").write_text(json.dumps(data, indent=2, default=float))
    (out / "report.md").write_text(_markdown(data, table_markdown(data["area"])))
    return data


def _markdown(d: dict, area_md: str) -> str:
    f7, f9, f19, f21, f23 = d["fig7"], d["fig9"], d["fig19"], d["fig21"], d["fig23"]
    own = {"t": "t", "y": "y", "x": "x"}
    worst = {g: max(AXES, key=lambda a: f7[g][a]) for g in GROUPS}
    at_default = next(p for p in f9 if (p["F"], p["P"]) == (5, 3))
    m = f19["model"]
    s = d["area"]["split"]
    lines = [
        "# Kaleido: figures from this project's RTL and models",
        "",
        f"Seed {d['seed']}. Workload: " + _workload_words(d["workload"]) + " "
        + "; ".join(f"{k} studies: grid {'x'.join(map(str, c['grid']))}, partition "
                    f"{tuple(c['partition'])}, {c['rows']}x{c['cols']} PEs"
                    for k, c in d["configs"].items())
        + f". Generated in {d['seconds']:.0f} s.",
        "",
        "How each number was obtained: **golden** = the numpy golden model; **cycle model** = "
        "`golden/cycle_model.py`, which the test suite checks *equal* (not close) to the RTL's cycle "
        "counter under Amaranth's simulator, Icarus and Verilator on every case it runs, and which "
        "this report checks again on its RTL runs below; **RTL** = cocotb simulation of the emitted "
        "Verilog; **synthesis** = Yosys with the liberty file named in the area table.",
        "",
        "## Fig. 7: reuse direction per channel group (golden)",
        "",
        "![fig7](fig7_directions.png)",
        "",
        "| channel group | reuse along t | along y | along x | worst |",
        "|---|---:|---:|---:|---|",
    ]
    for g in GROUPS:
        lines.append(f"| {g} | {f7[g]['t']:.3g} | {f7[g]['y']:.3g} | {f7[g]['x']:.3g} | {worst[g]} |")
    lines += [
        "",
        f"Ours: the worst direction is the group's own for "
        f"{sum(worst[g] == own[g] for g in GROUPS)} of 3 groups. "
        "Paper: for every group, reuse along its own direction hurts most.",
        "",
        "## Fig. 9: reuse against skipping at equal savings (golden)",
        "",
        "![fig9](fig9_reuse_vs_skip.png)",
        "",
        "| (F,P) | MACs saved | reuse MSE | mask-skip MSE | top-k MSE |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in f9:
        lines.append(f"| ({p['F']},{p['P']}) | {100 * p['saving']:.1f} % | {p['reuse']:.3g} | "
                     f"{p['mask_skip']:.3g} | {p['topk']:.3g} |")
    lines += [
        "",
        f"Ours at (5,3): mask-skip MSE is {at_default['mask_skip'] / at_default['reuse']:.1f}x and "
        f"top-k {at_default['topk'] / at_default['reuse']:.1f}x the reuse MSE. "
        "Paper: about 10x lower MSE for reuse, at 85 % savings on HunyuanVideo.",
        "",
        "## Fig. 19: dispatcher ablation",
        "",
        "![fig19](fig19_ablation.png)",
        "",
        "| variant | cycles (model) | speedup over pe | utilization |",
        "|---|---:|---:|---:|",
    ]
    for v in VARIANTS:
        lines.append(f"| {v} | {m[v]['cycles']:,} | {m['pe']['cycles'] / m[v]['cycles']:.3f} | "
                     f"{100 * m[v]['utilization']:.1f} % |")
    if "rtl" in f19:
        r = f19["rtl"]
        lines += ["", f"RTL ({r['simulator']}, the rtl design point above):", "",
                  "| variant | RTL cycles | model cycles | equal | utilization | scores = S~ |",
                  "|---|---:|---:|---|---:|---|"]
        for v, run in r["runs"].items():
            lines.append(f"| {v} | {run['cycles']:,} | {run['model_cycles']:,} | "
                         f"{run['cycles'] == run['model_cycles']} | {100 * run['utilization']:.1f} % | "
                         f"{run['scores_match']} |")
    lines += [
        "",
        f"Ours: utilization {100 * m['pe']['utilization']:.1f} % (pe) to "
        f"{100 * m['full']['utilization']:.1f} % (full), speedup "
        f"{m['pe']['cycles'] / m['full']['cycles']:.2f}x. Paper: 69.4 % to 85.2 %, 1.2x.",
        "",
        "## Fig. 21: PEs per array, 256 PEs in all (cycle model)",
        "",
        "![fig21](fig21_array_size.png)",
        "",
        "| PEs per array | arrays | Kaleido cycles | baseline cycles | Kaleido speedup vs 4x4 |",
        "|---|---:|---:|---:|---:|",
    ]
    ref = f21["4"]["kaleido"] if "4" in f21 else f21[min(f21, key=int)]["kaleido"]
    for size in sorted(f21, key=int):
        r = f21[size]
        lines.append(f"| {size}x{size} | {r['arrays']} | {r['kaleido']:,} | {r['baseline']:,} | "
                     f"{ref / r['kaleido']:.3f} |")
    lines += [
        "",
        "Ours: see the last column. Paper: speedup degrades slightly as arrays grow; 2x2 gains "
        "little over 4x4.",
        "",
        "## Fig. 23: thresholds (golden and cycle model, variant full)",
        "",
        "![fig23](fig23_thresholds.png)",
        "",
        "| (F,P) | oracle reduction | hardware reduction | PSNR (float softmax) | speedup vs baseline |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in f23:
        lines.append(f"| ({p['F']},{p['P']}) | {100 * p['oracle_reduction']:.1f} % | "
                     f"{100 * p['hardware_reduction']:.1f} % | {p['psnr_db']:.2f} dB | {p['speedup']:.3f} |")
    lines += [
        "",
        "Paper: fewer preserved bits save more but degrade quality; (5,3) is the default.",
        "",
        "## Real video against the proxy (golden and cycle model, variant full)",
        "",
        "Oracle reduction of `Q K^T` / speedup over the baseline array; the cycle-model design "
        "point above. Clips are real motion through a synthetic model "
        "(`kaleido workload video`), not a vDiT's activations.",
        "",
        "| workload | " + " | ".join(f"({F},{P})" for F, P in THRESHOLDS) + " |",
        "|---|" + "---:|" * len(THRESHOLDS),
    ]
    by = {}
    for p in d["workloads"]:
        by.setdefault(p["workload"], {})[(p["F"], p["P"])] = p
    for name, row in by.items():
        lines.append(f"| {name} | " + " | ".join(
            f"{100 * row[t]['oracle_reduction']:.1f} % / {row[t]['speedup']:.2f}x" for t in THRESHOLDS) + " |")
    nz = d["noise"]
    lines += [
        "",
        f"## Reuse against the denoising step ({nz['clip']}, F=5 P=3)",
        "",
        "![noise](noise_sweep.png)",
        "",
        "The latent is mixed with seeded noise as a flow-matching step does: "
        "`(1 - sigma) x + sigma eps`; sigma = 1 is the first denoising step, 0 the last.",
        "",
        "| sigma | oracle reduction | oracle bound | Kaleido speedup | share of the bound |",
        "|---:|---:|---:|---:|---:|",
    ]
    for p in nz["points"]:
        lines.append(f"| {p['sigma']:.1f} | {100 * p['oracle_reduction']:.1f} % | {p['oracle_bound']:.2f}x | "
                     f"{p['speedup']:.3f}x | {100 * p['speedup'] / p['oracle_bound']:.0f} % |")
    lines += [
        "",
    ]
    lines += _speed_markdown(d)
    lines += _pv_markdown(d)
    lines += _fig20_markdown(d)
    if "fig18" in d:
        lines += _fig18_markdown(d)
    lines += [
        "## Table 2: area (synthesis)",
        "",
        f"Liberty: `{d['area']['liberty'] or 'none (transistor-count estimate)'}`; the area "
        "design point above.",
        "",
        area_md,
        "",
        f"Ours: PE overhead {100 * s['pe_overhead']:.0f} %, dispatcher "
        f"{100 * s['dispatcher_over_arrays']:.0f} % of the arrays it feeds. Paper: PE augmentation "
        "about 30 % (6.6 % of the chip over baseline PEs of about 19.3 mm^2); dispatcher 1.3 of "
        "25.1 mm^2 of PE arrays, about 5 %.",
        "",
    ]
    return "\n".join(lines)


def _fig18_markdown(d: dict) -> list[str]:
    t = d["timing"]
    lines = [
        "## Clock: every block at one chip clock (timing-driven mapping, OpenSTA)",
        "",
        "The area design point; each block mapped for the chip clock (abc -D with a driving cell and an "
        "output load), timed at it; OSU018 cells, no wire load, ideal clock, reset paths excluded.",
        "",
        "| block | area | clock | slack | critical path | fmax | energy per cycle (gate level) | from | to |",
        "|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    areas, power = d.get("area", {}).get("blocks", {}), d.get("power", {})
    for name, r in t.items():
        area = areas.get(name, {}).get("area_um2")
        energy = ", ".join(f"{a} {e:.1f} pJ" for a, e in power.get(name, {}).items())
        lines.append(f"| {name} | {'' if area is None else f'{area:,.0f} um^2'} | {r['clock_mhz']:g} MHz | "
                     f"{r['slack_ns']:+.2f} ns | {r['critical_path_ns']:.2f} ns | {r['fmax_mhz']:.1f} MHz | "
                     f"{energy} | `{r['startpoint']}` | `{r['endpoint']}` |")
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
            f"{at[key]['clock_mhz']:.0f} MHz (set by its {at[key]['slowest_block'] or 'blocks, which meet the chip clock'}) "
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


def _workload_words(workload: str) -> str:
    if workload == "proxy":
        return ("the **proxy** workload (a photograph panned and zoomed, patch-embedded, with "
                "3-D RoPE; not a vDiT's activations).")
    return (f"the video **{workload}** through `kaleido workload video` (real motion through a "
            "VAE-like latent and a synthetic, seeded model with 3-D RoPE; not a vDiT's activations).")


def cmd_report(args) -> int:
    from .common import UserError, check_output_dir

    check_output_dir(args.out)
    if args.jobs < 1:
        raise UserError(f"--jobs {args.jobs} must be 1 or more")
    if args.seed < 0:
        raise UserError(f"--seed {args.seed} must be 0 or more")
    out = Path(args.out)
    data = build_report(out, seed=args.seed, jobs=args.jobs, rtl=not args.no_rtl,
                        simulator=args.simulator, workload=args.workload)
    print(f"report: {out}/report.md ({data['seconds']:.0f} s), figures fig7, fig9, fig19, fig21, "
          f"fig23, the noise sweep, speed against the bound{' and fig18' if 'fig18' in data else ''} "
          f"as PNG, data in report.json")
    return 0


def register(sub) -> None:
    p = sub.add_parser("report", help="the paper's figures from our RTL and models, as Markdown + PNG")
    p.add_argument("--out", default="out/report", metavar="DIR", help="output folder (default out/report)")
    p.add_argument("--workload", default=DEFAULT_CLIP, metavar="proxy|CLIP|PATH",
                   help=f"what every figure runs on: proxy, a bundled clip or a video file "
                        f"(default {DEFAULT_CLIP})")
    p.add_argument("--seed", type=int, default=1, help="seed of the workload's model (default 1)")
    p.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                   help="worker processes (default: up to 4, one per core)")
    p.add_argument("--no-rtl", action="store_true", help="skip the RTL runs of Fig. 19")
    p.add_argument("--simulator", choices=["verilator", "icarus"],
                   help="default: verilator when it can run here, else icarus")
    p.set_defaults(func=cmd_report)
