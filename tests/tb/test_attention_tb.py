"""The emitted attention engine under cocotb, on both simulators: scores bit for
bit against the golden model, cycles and lane work equal to the cycle model,
on random and adversarial tensors. One build per simulator and design serves
every case (the cases share rows, columns and accumulator width)."""

import json

import numpy as np
import pytest

from golden import Config, approx_scores, run_attention
from golden.cycle_model import baseline_cycles, kaleido_cycles, kaleido_tables, variant_parts
from golden.variants import VARIANTS
from hw import blocks
from sim.rtl import runner
from sim.rtl.simulate import run_scheduler
from tests.adversarial import operands
from tests.sweep import cover, sweep
from tests.sweep import ident as _ident

WORDS = 256
CASES = [
    # (partition, grid, F, P, kind)
    ((3, 2, 3), (2, 3, 4), 5, 3, "correlated"),
    ((2, 2, 2), (2, 2, 4), 5, 3, "equal"),           # everything reused
    ((2, 3, 2), (3, 2, 3), 5, 3, "alternating"),     # nothing reused
    ((1, 2, 3), (1, 3, 5), 6, 2, "correlated"),      # T = 1, odd extents
    ((0, 3, 2), (2, 3, 2), 4, 4, "correlated"),      # an empty channel group
    ((5, 0, 0), (1, 1, 7), 3, 1, "random"),          # D = 5
    ((2, 2, 3), (3, 3, 1), 8, 8, "correlated"),      # exact
    ((4, 2, 2), (2, 4, 4), 5, 3, "partial"),         # nibble work: the matcher pairs steps
]


def _case_config(partition, grid, F=5, P=3, accumulators=3):
    return Config(partition=partition, grid=grid, rows=3, cols=2, max_channels=8,
                  full_bits=F, partial_bits=P, accumulators=accumulators)


RUNS = [("baseline", "pe")] + [("kaleido", v) for v in VARIANTS]


def _keep(runs_by_simulator):
    """make test's points: on each simulator each run once, on cases from first to last."""
    return [(sim, run, case) for sim, runs in runs_by_simulator.items() for case, run in cover(CASES, runs)]


# make test: on Icarus the baseline, Kaleido's plain PE and its whole dispatcher, on
# Verilator the baseline and the whole dispatcher, each on one case; make test-all:
# every variant with every case on both. The Amaranth engine tests cover every
# variant on many more shapes.
@sweep("simulator, run, case", runner.SIMULATORS, RUNS, CASES, ids=_ident,
       keep=_keep({"icarus": [RUNS[0], RUNS[1], RUNS[-1]], "verilator": [RUNS[0], RUNS[-1]]}))
def test_engine_on_simulator(tmp_path, simulator, run, case, rng):
    design, variant = run
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    build_cfg = _case_config((8, 0, 0), (1, 1, 1))
    top = blocks.engine_top(design)
    with_scheduler, with_matcher = variant_parts(variant)
    build = runner.build(top, blocks.engine_verilog(build_cfg, design, WORDS, WORDS, with_matcher), simulator)
    sched_build = None
    if with_scheduler:
        sched_build = runner.build(blocks.top_name("scheduler"), blocks.verilog("scheduler", build_cfg), simulator)
    n = CASES.index(case)
    partition, grid, F, P, kind = case
    cfg = _case_config(partition, grid, F, P).with_(variant=variant)
    q, k = operands(kind, cfg, rng)
    # Kaleido runs passes A-D (forced, so that they are checked even where the dense
    # schedule would win), and then, where it differs, the driver's choice.
    schedules = ["pairs"] if design == "kaleido" else ["dense"]
    if design == "kaleido" and kaleido_cycles(q, k, cfg).schedule == "dense":
        schedules.append("auto")
    for schedule in schedules:
        work = tmp_path / f"case{n}-{schedule}"
        work.mkdir()
        np.save(work / "q.npy", q)
        np.save(work / "k.npy", k)
        if with_scheduler:
            run_scheduler(cfg, q, k, simulator, work, sched_build)
        result = runner.test(top, simulator, build, "tb.attention_tb", work, cfg,
                             env={"KALEIDO_WORK": str(work), "KALEIDO_DESIGN": design,
                                  "KALEIDO_SCHEDULE": schedule})
        label = f"{variant} {schedule} case {n} {partition} {grid} F{F}P{P} {kind}"
        assert result.ok, label + "\n" + runner.failure_text(result)
        # The bench checked itself; check what it wrote, independently.
        rtl = json.loads((work / "rtl.json").read_text())
        scores = np.load(work / "scores.npy")
        base = baseline_cycles(cfg.tokens, cfg.tokens, cfg)
        if design == "kaleido":
            np.testing.assert_array_equal(scores, approx_scores(q, k, cfg), err_msg=label)
            model = kaleido_cycles(q, k, cfg, kaleido_tables(q, k, cfg), schedule)
            if schedule == "auto":       # never slower than the baseline array
                assert rtl["schedule"] == "dense" and rtl["cycles"] == base.engine_cycles, label
        else:
            np.testing.assert_array_equal(scores, q.astype(np.int64) @ k.astype(np.int64).T, err_msg=label)
            model = base
        assert (rtl["cycles"], rtl["lane_work"]) == (model.engine_cycles, model.lane_work), label


# make test: two cases on Icarus; make test-all: every case on both.
@sweep("simulator, case", runner.SIMULATORS, CASES, ids=_ident, keep=[("icarus", CASES[0]), ("icarus", CASES[-1])])
def test_exact_pe_engine_on_simulator(tmp_path, simulator, case, rng):
    """The exact PE (4 accumulators) in the full variant: S~ bit for bit, cycles on
    the model, and lane work equal to the oracle count."""
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    n, (partition, grid, F, P, kind) = CASES.index(case), case
    cfg = _case_config(partition, grid, F, P, accumulators=4)
    q, k = operands(kind, cfg, rng)
    label = f"exact PE case {n} {partition} {grid} F{F}P{P} {kind}"
    rtl = _run_full(tmp_path / f"case{n}", simulator, cfg, q, k, "pairs", label)
    model = kaleido_cycles(q, k, cfg, kaleido_tables(q, k, cfg), "pairs")
    assert (rtl["cycles"], rtl["lane_work"]) == (model.engine_cycles, model.lane_work), label
    assert rtl["lane_work"] == 2 * run_attention(q, k, cfg).oracle_macs, label


DEGENERATE = [
    # (grid, kind): valid inputs where nothing changes, or everything sits at one end
    ((1, 1, 1), "zero-k"),       # one token, K all zero: the decoders' inputs never move
    ((1, 4, 4), "zero-k"),
    ((1, 2, 2), "max"),
    ((1, 2, 2), "min"),
]


def _run_full(work, simulator, cfg, q, k, schedule, label, plusargs=None) -> dict:
    """Kaleido with its whole dispatcher on one case, built once per simulator and PE
    (``cfg.accumulators``): the bench's own checks (scores, cycles, lane work), then
    the scores against golden here; returns what the bench wrote (``rtl.json``)."""
    build_cfg = _case_config((8, 0, 0), (1, 1, 1), accumulators=cfg.accumulators)
    top = blocks.engine_top("kaleido")
    build = runner.build(top, blocks.engine_verilog(build_cfg, "kaleido", WORDS, WORDS, True), simulator)
    sched_build = runner.build(blocks.top_name("scheduler"), blocks.verilog("scheduler", build_cfg), simulator)
    work.mkdir()
    np.save(work / "q.npy", q)
    np.save(work / "k.npy", k)
    run_scheduler(cfg, q, k, simulator, work, sched_build)
    result = runner.test(top, simulator, build, "tb.attention_tb", work, cfg, plusargs=plusargs,
                         env={"KALEIDO_WORK": str(work), "KALEIDO_DESIGN": "kaleido",
                              "KALEIDO_SCHEDULE": schedule})
    assert result.ok, label + "\n" + runner.failure_text(result)
    np.testing.assert_array_equal(np.load(work / "scores.npy"), approx_scores(q, k, cfg), err_msg=label)
    return json.loads((work / "rtl.json").read_text())


def _engine_case(tmp_path, simulator, grid, kind, rng, plusargs=None, label=""):
    """One degenerate case, scheduled as the driver would."""
    cfg = _case_config((4, 2, 2), grid)
    q, k = operands(kind, cfg, rng)
    _run_full(tmp_path / f"{kind}-{'x'.join(map(str, grid))}{label}", simulator, cfg, q, k, "auto",
              f"{kind} on grid {grid} under {simulator}{label}", plusargs)


# make test: every case on Icarus (4-state: an X shows), the first on Verilator too.
@sweep("simulator, case", runner.SIMULATORS, DEGENERATE,
       ids=lambda p: p if isinstance(p, str) else f"{p[1]}-{'x'.join(map(str, p[0]))}",
       keep=[("icarus", c) for c in DEGENERATE] + [("verilator", DEGENERATE[0])])
def test_engine_on_degenerate_inputs(tmp_path, simulator, case, rng):
    """All-zero K, one token, every operand at +127 or -128: exact on both simulators.
    (Under Icarus, all-zero K on one token once read ``lane_work`` as X.)"""
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    grid, kind = case
    _engine_case(tmp_path, simulator, grid, kind, rng)


def test_engine_does_not_depend_on_initial_values(tmp_path, rng, seed):
    """Verilator starting every variable without a value at random (three seeds), on
    one token with K all zero (where an unset value would last the whole run):
    the same exact result, so nothing relies on Verilator's zeros."""
    why = runner.missing("verilator")
    if why:
        pytest.skip(why)
    for n in range(3):
        _engine_case(tmp_path, "verilator", (1, 1, 1), "zero-k", rng,
                     plusargs=runner.random_initial(seed + n), label=f"-seed{seed + n}")
