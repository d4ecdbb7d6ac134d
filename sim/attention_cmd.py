"""``kaleido sim attention``: Q K^T on the simulated RTL, with its figures.

The emitted engine runs under cocotb (Icarus or Verilator); the bench checks
every score against the golden model and the cycles against the cycle model,
and this command writes ``scores.npy`` and ``stats.json``. A progress bar
follows the drained scores while the simulator runs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np

from golden import run_attention
from golden.cycle_model import variant_parts
from golden.scheduler import operand_stream
from golden.tiling import pair_tables
from hw import blocks

from . import runner
from .common import UserError, atomic_output, print_json

VARIANTS = ("pe", "pe-sh", "pe-m", "full")


def add_args(p) -> None:
    p.add_argument("--design", choices=["kaleido", "baseline"], default="kaleido")
    p.add_argument("--variant", choices=VARIANTS, default="full",
                   help="dispatcher ablation (DESIGN.md §5.5): pe, pe-sh (+scheduler), "
                        "pe-m (+matcher), full")
    p.add_argument("--simulator", choices=list(runner.SIMULATORS),
                   help="default: verilator when it can run here, else icarus")
    p.add_argument("--rows", type=int, default=4)
    p.add_argument("--cols", type=int, default=4)
    p.add_argument("--waves", action="store_true", help="keep a waveform file in DIR")
    p.add_argument("--json", action="store_true", help="print stats.json to stdout")
    p.add_argument("--out", required=True, metavar="DIR")


def pick_simulator(requested: str | None) -> str:
    if requested:
        why = runner.missing(requested)
        if why:
            raise UserError(why)
        return requested
    for sim in ("verilator", "icarus"):
        if not runner.missing(sim):
            return sim
    raise UserError("no simulator can run here: " + "; ".join(runner.missing(s) for s in runner.SIMULATORS))


def _progress(work: Path, done: threading.Event, label: str) -> None:
    from tqdm import tqdm

    bar = None
    while not done.wait(0.5):
        try:
            seen, total = (int(v) for v in (work / "progress").read_text().split())
        except (OSError, ValueError):
            continue
        if bar is None:
            bar = tqdm(total=total, desc=label, leave=False, dynamic_ncols=True,
                       bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} scores [{elapsed}]")
        bar.n = seen
        bar.refresh()
    if bar is not None:
        bar.close()


def run_scheduler(cfg, q, k, simulator: str, work: Path, build_dir: Path | None = None) -> dict:
    """Cluster Q's and K's pairs on the scheduler RTL; return its ``sched_out.json``.

    ``build_dir`` reuses an existing scheduler build (tests run many cases on one).
    """
    streams = {}
    for name, x in (("q", q), ("k", k)):
        strings, last = operand_stream(pair_tables(x, cfg), cfg)
        streams[name] = {"strings": strings, "last": last}
    (work / "sched_in.json").write_text(json.dumps(streams))
    top = blocks.top_name("scheduler")
    if build_dir is None:
        build_dir = runner.build(top, blocks.verilog("scheduler", cfg), simulator,
                                 work / "scheduler" / f"build_{simulator}")
    result = runner.test(top, simulator, build_dir, "tb.scheduler_tb", work / "scheduler", cfg,
                         env={"KALEIDO_WORK": str(work)})
    if not result.ok:
        raise UserError(f"scheduler RTL failed under {simulator}: "
                        + _first_failure(result.log) + f" (log: {result.log})")
    return json.loads((work / "sched_out.json").read_text())


def simulate(cfg, q, k, design: str, simulator: str, work: Path, waves: bool = False,
             label: str = "simulating", variant: str = "pe") -> dict:
    """Run one attention product on the RTL; return the bench's ``rtl.json`` plus scores.

    With a scheduler (pe-sh, full) its RTL runs first and the engine takes the
    pairs in the order of its clusters; ``cycles`` then adds the scheduler's
    lead (its first batch, which the array cannot overlap), as measured.
    """
    work = Path(work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "q.npy", q)
    np.save(work / "k.npy", k)
    with_scheduler, with_matcher = variant_parts(variant)
    lead = 0
    if design == "kaleido" and with_scheduler:
        sched = run_scheduler(cfg, q, k, simulator, work)
        lead = max(sched["q"]["lead"], sched["k"]["lead"])
    if design == "kaleido":
        qt, kt = pair_tables(q, cfg), pair_tables(k, cfg)
        words = [sum(-(-t.pairs // n) * t.width for t in tables)
                 for tables, n in ((qt, cfg.rows), (kt, cfg.cols))]
    else:
        words = [-(-q.shape[0] // cfg.rows) * q.shape[1], -(-k.shape[0] // cfg.cols) * k.shape[1]]
    text = blocks.engine_verilog(cfg, design, max(1, words[0]), max(1, words[1]),
                                 matcher=design == "kaleido" and with_matcher)
    done = threading.Event()
    watcher = threading.Thread(target=_progress, args=(work, done, label), daemon=True)
    watcher.start()
    try:
        result = runner.run(design, cfg, simulator, "tb.attention_tb", work,
                            env={"KALEIDO_WORK": str(work), "KALEIDO_DESIGN": design,
                                 "KALEIDO_VARIANT": variant if design == "kaleido" else "pe"},
                            waves=waves, verilog_text=text, top=blocks.engine_top(design))
    finally:
        done.set()
        watcher.join()
    if not result.ok:
        raise UserError(f"RTL simulation failed under {simulator}: "
                        + _first_failure(result.log) + f" (log: {result.log})")
    rtl = json.loads((work / "rtl.json").read_text())
    rtl["engine_cycles"], rtl["lead_cycles"] = rtl["cycles"], lead
    rtl["cycles"] += lead
    rtl["scores"] = np.load(work / "scores.npy")
    rtl["sim_time_ns"], rtl["test_seconds"], rtl["wall_seconds"] = (
        result.sim_time_ns, result.test_s, result.wall_s)
    return rtl


def _first_failure(log: Path) -> str:
    for line in log.read_text(errors="replace").splitlines():
        if "AssertionError" in line or "Error:" in line:
            return line.strip()[:300]
    return "see the log"


def cmd_sim_attention(args) -> int:
    from .cli import load_attention_inputs

    if args.design == "baseline" and args.variant not in ("pe", "full"):
        raise UserError("the baseline has no dispatcher: --variant applies to --design kaleido")
    if args.design == "baseline":
        args.variant = "pe"
    simulator = pick_simulator(args.simulator)
    cfg, ops = load_attention_inputs(args, ("q", "k"))
    q, k = ops["q"].data, ops["k"].data
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".work-", dir=out))
    try:
        rtl = simulate(cfg, q, k, args.design, simulator, work, args.waves,
                       label=f"{args.design} {args.variant} on {simulator}", variant=args.variant)
        if args.waves:
            for f in list(work.glob("*.fst")) + list(work.glob("*.vcd")) + list(work.glob("build_*/*.fst")):
                shutil.copy(f, out / f.name)
        golden = run_attention(q, k, cfg)
        expected = golden.scores if args.design == "kaleido" else q.astype(np.int64) @ k.astype(np.int64).T
        model = rtl["model"]
        cycles_per_s = rtl["cycles"] / rtl["test_seconds"] if rtl["test_seconds"] else None
        stats = {
            "design": args.design, "variant": args.variant, "simulator": simulator,
            "cycles": rtl["cycles"], "model_cycles": model["cycles"],
            "engine_cycles": rtl["engine_cycles"], "scheduler_lead_cycles": rtl["lead_cycles"],
            "cycles_match": rtl["cycles"] == model["cycles"],
            "executed_macs": rtl["lane_work"] / 2, "model_executed_macs": model["executed_macs"],
            "utilization": rtl["lane_work"] / (rtl["cycles"] * cfg.rows * cfg.cols * 2),
            "dense_macs": golden.dense_macs, "oracle_macs": golden.oracle_macs,
            "hardware_reduction": 1 - (rtl["lane_work"] / 2) / golden.dense_macs,
            "oracle_reduction": golden.oracle_reduction,
            "scores_match": bool(np.array_equal(rtl["scores"], expected)),
            "rows": cfg.rows, "cols": cfg.cols, "grid": list(cfg.grid),
            "partition": list(cfg.partition), "full_bits": cfg.full_bits,
            "partial_bits": cfg.partial_bits, "tile_groups": model["tiles"],
            "sim_cycles_per_second": cycles_per_s,
        }
        with atomic_output(str(out / "scores.npy"), ".npy") as tmp:
            with open(tmp, "wb") as f:
                np.save(f, rtl["scores"])
        with atomic_output(str(out / "stats.json"), ".json") as tmp:
            Path(tmp).write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n")
    finally:
        if not os.environ.get("KALEIDO_KEEP_WORK"):
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print_json(stats)
    else:
        print(f"{args.design} {args.variant} on {simulator}: scores {'match' if stats['scores_match'] else 'DIFFER'}, "
              f"{stats['cycles']} cycles (model {stats['model_cycles']}), "
              f"utilization {100 * stats['utilization']:.1f} %, -> {out}/")
    return 0 if stats["scores_match"] and stats["cycles_match"] else 1


def register(sub) -> None:
    from .cli import add_operand_args

    p = sub.add_parser("sim", help="run the emitted RTL under cocotb")
    what = p.add_subparsers(dest="what", required=True, parser_class=type(p))
    a = what.add_parser("attention", help="Q K^T on the simulated engine")
    add_operand_args(a, with_v=False)
    add_args(a)
    a.set_defaults(func=cmd_sim_attention)
