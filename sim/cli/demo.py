"""``kaleido demo``: the main job on the defaults, end to end, with a summary.

1. a workload (a real clip by default, or the proxy) through the golden model
   (op counts, output quality);
2. the Verilog of the PEs and arrays;
3. ``Q K^T`` of that workload on the simulated RTL, Kaleido and baseline in
   the same run, checked against the golden model and the cycle model;
4. the area of both PEs (the default library, or the labelled estimate without it).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np

from golden import Config, expected_scores, run_attention
from golden.config import Part
from golden.presets import PRESETS, preset
from golden.workload import quantize
from hw import blocks

from ..workload import DEFAULT_CLIP, make_workload
from .options import knobs_of
from .workload_cmd import structure_meta, write_workload


def demo_config() -> Config:
    """The demo's design point: preset ``demo``."""
    return preset("demo")


def demo_workload(cfg: Config, out: str, workload: str = DEFAULT_CLIP) -> dict:
    """Save the workload as ``kaleido workload`` does (float ``q.npy``, ``k.npy``,
    ``v.npy`` and ``workload.json``) and return it quantized. The files stay float
    so that ``kaleido golden attention`` on them quantizes exactly as here and
    reproduces the demo's figures."""
    arrays = make_workload(cfg, workload)
    write_workload(out, arrays, {"source": workload, "grid": list(cfg.grid),
                                 "partition": list(cfg.partition), "seed": cfg.seed, **structure_meta(cfg)})
    return {name: quantize(x) for name, x in arrays.items()}


def cmd_demo(args) -> int:
    from sim.cli.outputs import check_output_dir
    from sim.rtl.simulate import pick_simulator, simulate
    from synth.area import block_area
    from synth.flow import SynthError, default_liberty
    from synth.kits import kit

    check_output_dir(args.out)
    simulator = pick_simulator(args.simulator)
    out = Path(args.out)
    cfg = demo_config().with_(**{name: getattr(args, name) for name in knobs_of(Part.WORKLOAD)
                                 if getattr(args, name, None) is not None})
    T, H, W = cfg.grid
    what = ("the proxy workload (a photograph panned and zoomed)" if args.workload == "proxy"
            else f"video {args.workload} (real motion through a synthetic model)")
    print(f"kaleido demo: {what}, not a vDiT's activations; "
          f"grid {T}x{H}x{W}, {PRESETS['demo'].model} partition {cfg.partition} "
          f"(D={cfg.head_dim}), F={cfg.full_bits} P={cfg.partial_bits}, "
          f"{cfg.rows}x{cfg.cols} PEs, token-common strength {cfg.common_strength:g} ({cfg.common_band} band)")
    ops = demo_workload(cfg, str(out), args.workload)
    (q, sq), (k, sk), (v, sv) = ops["q"], ops["k"], ops["v"]
    res = run_attention(q, k, cfg, v=v, scales=(sq, sk, sv))
    np.save(out / "golden_scores.npy", res.scores)
    print(f"  golden    dense {res.dense_macs} MACs, oracle {res.oracle_macs:g} "
          f"({100 * res.oracle_reduction:.1f} % fewer); output PSNR {res.float_psnr_db:.2f} dB, "
          f"cosine {res.float_cosine:.5f} (float softmax); {res.psnr_db:.2f} dB with 7-bit P codes")

    vdir = out / "verilog"
    vdir.mkdir(parents=True, exist_ok=True)
    names = blocks.UNITS
    for name in names:
        (vdir / f"{blocks.top_name(name)}.v").write_text(blocks.verilog(name, cfg))
    print(f"  verilog   {', '.join(names)} -> {vdir}/")

    summary = {}
    for design, variant in (("kaleido", "full"), ("baseline", "pe")):
        start = time.perf_counter()
        work = out / f".work-{design}"
        try:
            rtl = simulate(cfg.with_(variant=variant), q, k, design, simulator, work,
                           label=f"{design} on {simulator}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        match = bool(np.array_equal(rtl["scores"], expected_scores(q, k, cfg, design)))
        util = rtl["utilization"]
        summary[design] = dict(cycles=rtl["cycles"], model_cycles=rtl["model"]["cycles"],
                               executed_macs=rtl["executed_macs"], utilization=util,
                               scores_match=match, seconds=time.perf_counter() - start)
        print(f"  rtl       {design + (' (' + variant + ')' if design == 'kaleido' else ''):15s} "
              f"on {simulator}: scores {'match' if match else 'DIFFER'}, "
              f"{rtl['cycles']} cycles (model {rtl['model']['cycles']}), "
              f"{rtl['executed_macs']:g} MACs executed, utilization {100 * util:.1f} %")
    kal, base = summary["kaleido"], summary["baseline"]
    hw_red = 1 - kal["executed_macs"] / res.dense_macs
    print(f"  figures   hardware reduction {100 * hw_red:.1f} % vs oracle "
          f"{100 * res.oracle_reduction:.1f} % (ratio {hw_red / res.oracle_reduction:.2f}; paper 0.71); "
          f"cycles kaleido/baseline {kal['cycles'] / base['cycles']:.3f}")

    liberty = default_liberty()
    areas = {}
    for name in ("pe", "baseline-pe"):
        try:
            # Mapped for the chip clock and cached (or shipped) as `kaleido synth` maps it.
            areas[name] = block_area(name, cfg, liberty)
        except SynthError as exc:
            print(f"  area      skipped: {exc}")
            break
    if len(areas) == 2:
        if liberty:
            a, b = areas["pe"]["area_um2"], areas["baseline-pe"]["area_um2"]
            print(f"  area      pe {a:.0f} um2, baseline-pe {b:.0f} um2 ({kit(liberty).name}): ratio {a / b:.2f} "
                  f"(paper implies ~1.30)")
        else:
            a, b = areas["pe"]["transistors"], areas["baseline-pe"]["transistors"]
            print(f"  area      no liberty file: transistor estimate pe {a}, baseline-pe {b}, ratio {a / b:.2f}")
    (out / "demo.json").write_text(json.dumps({
        "golden": {k: res[k] for k in ("dense_macs", "oracle_macs", "oracle_reduction", "psnr_db",
                                        "cosine", "float_psnr_db", "float_cosine")},
        "rtl": summary, "simulator": simulator,
        "area": {k: {f: v[f] for f in ("area_um2", "cells", "transistors") if f in v} for k, v in areas.items()},
        "library": kit(liberty).name if liberty else None,
    }, indent=2, default=float))
    print(f"  files     {out}/q.npy k.npy v.npy (float; the CLI quantizes them), "
          f"golden_scores.npy, demo.json")
    return 0 if kal["scores_match"] and base["scores_match"] else 1
