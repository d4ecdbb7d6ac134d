"""``kaleido report``: every figure's sweep, its plot and its section, in order."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from golden import Config
from golden.config import GROUPS
from golden.cycle_model import VARIANTS
from golden.pe import ACCUMULATORS
from golden.reuse_stats import AXES
from golden.video import CLIPS
from hw import blocks

from .. import THRESHOLDS
from ...simulate import pick_simulator
from ...workload import DEFAULT_CLIP
from . import chip, fig7, fig9, fig18, fig19, fig20, fig21, fig23, pv, speed, workloads
from .common import quantized, sweep, workload_words

__all__ = ["default_sizes", "build_report", "publish", "cmd_report", "register"]


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
                 workload: str = DEFAULT_CLIP, clips: tuple = tuple(CLIPS), energy: bool = True,
                 chip_level: bool = True) -> dict:
    """Run every study and write the report; ``sizes`` overrides :func:`default_sizes`.

    ``workload`` feeds every figure (``proxy``, a clip, or a video file); the
    workload table sets the proxy beside each of ``clips``, and the noise sweep
    runs on ``workload``, or on the default clip when that is the proxy. With
    ``energy`` (and OpenSTA and a liberty file here) it adds the fmax of every
    block and the Fig. 18b analog: energy, throughput per area and per watt; with
    ``chip_level`` too, the whole models on the paper's chip (:mod:`.chip`).
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
    quantized(big, w)               # a workload that cannot be read fails here, before any output
    out.mkdir(parents=True, exist_ok=True)

    pts = sweep(fig7.point, [(big.to_json(), g, a, w) for g in GROUPS for a in AXES], "fig 7", jobs)
    data["fig7"] = {g: {} for g in GROUPS}
    for g, a, mse in pts:
        data["fig7"][g][a] = mse
    data["fig9"] = sweep(fig9.point, [(big.to_json(), F, P, w) for F, P in fig9.SKIP_SWEEP], "fig 9", jobs)
    data["fig19"] = {"model": dict(sweep(fig19.point, [(mid.to_json(), v, w) for v in VARIANTS],
                                          "fig 19", jobs))}
    data["fig21"] = {str(s): r for s, r in sweep(fig21.point, [(mid.to_json(), s, w) for s in fig21.ARRAY_SIZES],
                                                  "fig 21", jobs)}
    data["fig23"] = sweep(fig23.point, [(mid.to_json(), F, P, w) for F, P in THRESHOLDS], "fig 23", jobs)
    data["fig20"] = sweep(fig20.point, [(mid.to_json(), F, P, n, w) for F, P in fig20.BLOCK_THRESHOLDS
                                         for n in ACCUMULATORS], "fig 20 block", jobs)
    data["pv"] = sweep(pv.point, [(mid.to_json(), name) for name in ("proxy", *clips)], "P V~", jobs)
    data["workloads"] = sweep(workloads.clips_point, [(mid.to_json(), name, F, P) for name in ("proxy", *clips)
                                             for F, P in THRESHOLDS], "workloads", jobs)
    noise_clip = DEFAULT_CLIP if w == "proxy" else w
    data["noise"] = {"clip": noise_clip,
                     "points": sweep(workloads.noise_point, [(mid.to_json(), noise_clip, s) for s in workloads.NOISE_SWEEP],
                                      "noise", jobs)}

    if rtl:
        data["fig19"]["rtl"] = fig19.rtl_runs(small, w, sim, out)

    liberty = default_liberty()
    over_d = [(mid.with_(partition=Config.for_model("wan2.1", D).partition, max_channels=None,
                         acc_bits=None, pe_acc_bits=None).to_json(), n, w, W)
              for D in speed.SPEED_DIMS for n in ACCUMULATORS for W in speed.SPEED_DISPATCHERS]
    over_fp = [(mid.with_(full_bits=F, partial_bits=P).to_json(), n, w, W)
               for F, P in THRESHOLDS for n in ACCUMULATORS for W in speed.SPEED_DISPATCHERS]
    data["speed"] = {"over_d": sweep(speed.point, over_d, "speed over D", jobs),
                     "over_fp": sweep(speed.point, over_fp, "speed over F,P", jobs),
                     "pe_area": speed.pe_areas(mid, liberty)}
    data["area"] = area_table(sizes["area"], liberty, jobs)
    if energy and liberty and shutil.which("sta"):
        data["timing"] = dict(sweep(fig18.timing_point, [(n, sizes["area"].to_json()) for n in blocks.BLOCKS],
                                     "timing", jobs))
        from synth.power import ACTIONS
        data["power"] = dict(sweep(fig18.power_point, [(n, sizes["area"].to_json()) for n in blocks.BLOCKS
                                                  if n in ACTIONS], "energy per action", jobs))
        points = [(mid.to_json(), F, P, w) for F, P in THRESHOLDS]
        # The first point synthesizes and measures the blocks; the rest read them from the cache.
        data["fig18"] = [fig18.point(points[0])] + sweep(fig18.point, points[1:], "fig 18 energy", jobs)
        if chip_level:
            data["chip"] = chip.run(liberty, workers=jobs)
    data["seconds"] = time.perf_counter() - t0
    for figure in (fig7, fig9, fig19, fig21, fig23):
        figure.plot(out, data)
    workloads.plot_noise(out, data)
    speed.plot(out, data["speed"])
    fig20.plot(out, data["fig20"])
    if "fig18" in data:
        fig18.plot(out, data["fig18"])
    if "chip" in data:
        chip.plot(out, data)
    (out / "report.json").write_text(json.dumps(data, indent=2, default=float))
    (out / "report.md").write_text(_markdown(data, table_markdown(data["area"])))
    return data


def _markdown(d: dict, area_md: str) -> str:
    lines = [
        "# Kaleido: figures from this project's RTL and models",
        "",
        f"Seed {d['seed']}. Workload: " + workload_words(d["workload"]) + " "
        + "; ".join(f"{k} studies: grid {'x'.join(map(str, c['grid']))}, partition "
                    f"{tuple(c['partition'])}, {c['array']['rows']}x{c['array']['cols']} PEs"
                    for k, c in d["configs"].items())
        + f". Generated in {d['seconds']:.0f} s.",
        "",
        "How each number was obtained: **golden** = the numpy golden model; **cycle model** = "
        "`golden/cycle_model.py`, which the test suite checks *equal* (not close) to the RTL's cycle "
        "counter under Amaranth's simulator, Icarus and Verilator on every case it runs, and which "
        "this report checks again on its RTL runs below; **RTL** = cocotb simulation of the emitted "
        "Verilog; **synthesis** = Yosys with the liberty file named in the area table.",
        "",
    ]
    for figure in (fig7, fig9, fig19, fig21, fig23, workloads):
        lines += figure.markdown(d)
    lines += workloads.noise_markdown(d)
    lines += speed.markdown(d)
    lines += pv.markdown(d)
    lines += fig20.markdown(d)
    if "fig18" in d:
        lines += fig18.markdown(d)
    if "chip" in d:
        lines += chip.markdown(d)
    return "\n".join(lines + _table2_markdown(d, area_md))


def _table2_markdown(d: dict, area_md: str) -> list[str]:
    s = d["area"]["split"]
    # The file's name, not the machine's path to it: the report is committed.
    liberty = Path(d["area"]["liberty"]).name if d["area"]["liberty"] else "none (transistor-count estimate)"
    return [
        "## Table 2: area (synthesis)",
        "",
        f"Liberty: `{liberty}`; the area "
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


#: What a published report says before the figures: where it comes from, and where the
#: hand-run sign-off of a full-size head is.
PUBLISHED_HEAD = """\
<!-- Written by `make report` (kaleido report --publish docs): edit the figure modules
     under sim/experiments/report/, not this file. -->

The figures below are regenerated by `make report`, with the data in `report.json`
beside the run's output. What one full-size head costs in cycles, time, energy and
area at one chip clock, measured with the head bench, is in [signoff.md](signoff.md).

"""


def publish(out: Path, docs: Path) -> Path:
    """Put the report written to ``out`` into the project's ``docs``: ``results.md``,
    with its figures under ``figures/``. Returns the Markdown's path."""
    figures = docs / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    for png in sorted(out.glob("*.png")):
        shutil.copyfile(png, figures / png.name)
    text = (out / "report.md").read_text()
    text = re.sub(r"\]\(([\w.-]+\.png)\)", r"](figures/\1)", text)
    title, _, body = text.partition("\n\n")
    target = docs / "results.md"
    target.write_text(f"{title}\n\n{PUBLISHED_HEAD}{body}")
    return target


def cmd_report(args) -> int:
    from ...cli.common import UserError, check_output_dir

    check_output_dir(args.out)
    if args.publish:
        check_output_dir(args.publish, "--publish")
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
    if args.publish:
        print(f"report: published as {publish(out, Path(args.publish))}, figures in {args.publish}/figures")
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
    p.add_argument("--publish", metavar="DIR", help="also write DIR/results.md and DIR/figures/ from the "
                   "report (make report: the project's docs)")
    p.add_argument("--simulator", choices=["verilator", "icarus"],
                   help="default: verilator when it can run here, else icarus")
    p.set_defaults(func=cmd_report)
