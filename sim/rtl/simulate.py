"""Attention on the simulated RTL, as a library: pick a simulator, cluster with the
scheduler RTL, run the engine under cocotb, and return what the bench measured.

``kaleido sim attention``, ``kaleido demo`` and ``kaleido report`` all call
:func:`simulate`; none of them holds a copy of it.
"""

from __future__ import annotations

import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from golden.cycle_model import group_floors, scheduler_wait, utilization, variant_parts
from golden.scheduler import operand_stream
from golden.tiling import pair_tables
from golden.variants import VARIANTS
from hw import blocks
from sim.errors import UserError
from sim.rtl import runner

__all__ = ["pick_simulator", "run_scheduler", "simulate", "WAVE_SUFFIXES", "follow_progress", "first_failure",
           "bench_failed"]

WAVE_SUFFIXES = (".fst", ".vcd")
#: What one engine run computes: ``Q K^T`` with reuse, or a product of final operands.
PRODUCTS = ("qk", "gemm")


def pick_simulator(requested: str | None) -> str:
    """``requested`` if it can run here; else Verilator, else Icarus; else a UserError saying why."""
    if requested:
        why = runner.missing(requested)
        if why:
            raise UserError(why)
        return requested
    for sim in ("verilator", "icarus"):
        if not runner.missing(sim):
            return sim
    raise UserError("no simulator can run here: " + "; ".join(runner.missing(s) for s in runner.SIMULATORS))


def _progress(work: Path, done: threading.Event, label: str, unit: str) -> None:
    # The bench writes "seen total" to work/progress as it goes; follow it with a bar.
    from tqdm import tqdm

    bar = None
    while not done.wait(0.5):
        try:
            seen, total = (int(v) for v in (work / "progress").read_text().split())
        except (OSError, ValueError):
            continue
        if bar is None:
            bar = tqdm(total=total, desc=label, leave=False, dynamic_ncols=True,
                       bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} " + unit
                                  + " [{elapsed}]")
        bar.n = seen
        bar.refresh()
    if bar is not None:
        bar.close()


@contextmanager
def follow_progress(work: Path, label: str, unit: str = "scores"):
    """Show a progress bar of what a bench writes to ``work/progress`` while the body runs."""
    done = threading.Event()
    watcher = threading.Thread(target=_progress, args=(work, done, label, unit), daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()


def first_failure(log: Path) -> str:
    """The first line of a bench's log that says what failed."""
    for line in log.read_text(errors="replace").splitlines():
        if "AssertionError" in line or "Error:" in line:
            return line.strip()[:300]
    return "see the log"


def bench_failed(what: str, simulator: str, result) -> UserError:
    """One line for a bench that failed: what, why, and where its log is, or, since
    the scratch folder goes when the command ends, how to keep it."""
    where = (f"log: {result.log}" if os.environ.get("KALEIDO_KEEP_WORK")
             else "rerun with KALEIDO_KEEP_WORK=1 to keep its log")
    return UserError(f"{what} failed under {simulator}: {first_failure(result.log)} ({where})")


def run_scheduler(cfg, q, k, simulator: str, work: Path, build_dir: Path | None = None,
                  waves: bool = False) -> dict:
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
                                 work / "scheduler" / f"build_{simulator}", waves)
    result = runner.test(top, simulator, build_dir, "tb.scheduler_tb", work / "scheduler", cfg,
                         env={"KALEIDO_WORK": str(work)}, waves=waves)
    if not result.ok:
        raise bench_failed("scheduler RTL", simulator, result)
    return json.loads((work / "sched_out.json").read_text())


def simulate(cfg, q, k, design: str, simulator: str, work: Path, waves: bool = False,
             label: str = "simulating", schedule: str = "auto",
             product: str = "qk", depth: int | None = None, fold: np.ndarray | None = None) -> dict:
    """Run one attention product on the RTL; return the bench's ``rtl.json`` plus scores.

    ``product="gemm"`` runs ``q @ k.T`` on final operands instead (``P V~``): the
    engine's dense schedule, no reuse, no dispatcher. ``depth`` sizes the buffers
    for that many channels (default: the operands'), so that runs of one
    engine over shorter products share its build. ``fold`` (Kaleido, gemm):
    codes added to ``q`` where the row enters the array, a folded key of
    ``P V~`` where nonzero (:func:`hw.host.engine_image.gemm_image`).

    Kaleido runs with ``cfg``'s dispatcher. With a scheduler (variants pe-sh,
    full) its RTL runs first and the engine takes the
    pairs in the order of its clusters; ``cycles`` then adds the engine's wait
    for them (:func:`golden.cycle_model.scheduler_wait`, from the RTL's cycles).
    ``utilization`` is computed from the RTL's own counters. With ``waves``
    every simulation leaves its waveform under ``work``.
    """
    if product not in PRODUCTS:
        raise ValueError(f"unknown product {product!r}; choose one of {', '.join(PRODUCTS)}")
    work = Path(work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "q.npy", q)
    np.save(work / "k.npy", k)
    (work / "fold.npy").unlink(missing_ok=True)
    if fold is not None:
        if product != "gemm" or design != "kaleido":
            raise ValueError("only a product of final operands on the Kaleido engine folds keys")
        np.save(work / "fold.npy", fold)
    with_scheduler, with_matcher = cfg.dispatch.parts
    if product == "gemm":
        with_scheduler = with_matcher = False
    lead = 0
    if design == "kaleido" and with_scheduler:
        sched = run_scheduler(cfg, q, k, simulator, work, waves=waves)
        # The engine's wait for the RTL's clusters, counted as the cycle model counts it.
        lead = scheduler_wait([sched["q"]["groups"], sched["k"]["groups"]], group_floors(q, k, cfg))
    # Buffers deep enough for the dense image (and, for Kaleido, the pairs' image).
    depth = max(q.shape[1], depth or 0)
    words = [-(-q.shape[0] // cfg.rows) * depth, -(-k.shape[0] // cfg.cols) * depth]
    if design == "kaleido" and product == "qk":
        qt, kt = pair_tables(q, cfg), pair_tables(k, cfg)
        words = [max(w, sum(-(-t.pairs // n) * t.width for t in tables))
                 for w, tables, n in zip(words, (qt, kt), (cfg.rows, cfg.cols))]
    text = blocks.engine_verilog(cfg, design, max(1, words[0]), max(1, words[1]),
                                 matcher=design == "kaleido" and with_matcher)
    with follow_progress(work, label):
        result = runner.run(design, cfg, simulator, "tb.attention_tb", work,
                            env={"KALEIDO_WORK": str(work), "KALEIDO_DESIGN": design,
                                 "KALEIDO_SCHEDULE": schedule, "KALEIDO_PRODUCT": product},
                            waves=waves, verilog_text=text, top=blocks.engine_top(design))
    if not result.ok:
        raise bench_failed("RTL simulation", simulator, result)
    rtl = json.loads((work / "rtl.json").read_text())
    ran_as = rtl["model"].get("ran_as", "dense")
    if ran_as not in VARIANTS or not variant_parts(ran_as)[0]:
        lead = 0            # the dense schedule, or pairs in natural order: no wait for clusters
    rtl["engine_cycles"], rtl["lead_cycles"] = rtl["cycles"], lead
    rtl["cycles"] += lead
    rtl["utilization"] = utilization(rtl["lane_work"], rtl["cycles"], cfg.rows * cfg.cols)
    rtl["executed_macs"] = rtl["lane_work"] / 2
    rtl["scores"] = np.load(work / "scores.npy")
    rtl["sim_time_ns"], rtl["test_seconds"], rtl["wall_seconds"] = (
        result.sim_time_ns, result.test_s, result.wall_s)
    return rtl
