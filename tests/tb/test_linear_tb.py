"""Linear layers on the emitted engine under cocotb, on both simulators: ``X~ W``
bit for bit against the loop reference of docs/concepts.md, "Reuse states", cycles and lane work
equal to :mod:`golden.linear_cycles`, on random and adversarial activations
(every window reused, none, nibble-heavy; odd extents, trailing windows of one
token, an empty group, one token, windows of 1 to 4), for both PEs with and
without the matcher. One build per simulator and run serves every case."""

import json

import numpy as np
import pytest

from golden import Config
from golden.linear_cycles import baseline_linear_cycles, kaleido_linear_cycles
from golden.windows import linear_config
from hw import blocks
from sim.rtl import runner
from tests import reference
from tests.adversarial import operands
from tests.sweep import ident, sweep

WORDS = 256
CASES = [
    # (partition, grid, F, P, window, heads, outputs, kind)
    ((2, 1, 1), (2, 3, 4), 5, 3, 4, 2, 5, "correlated"),
    ((1, 2, 1), (4, 2, 3), 5, 3, 2, 2, 3, "equal"),          # every window a full reuse
    ((2, 2, 2), (3, 3, 2), 5, 3, 3, 1, 4, "alternating"),    # none
    ((0, 3, 2), (2, 5, 3), 5, 3, 4, 1, 2, "partial"),        # an empty group, odd extents
    ((3, 0, 0), (5, 1, 1), 4, 2, 4, 2, 3, "correlated"),     # a trailing window of one token
    ((2, 1, 1), (1, 1, 1), 5, 3, 4, 1, 3, "random"),         # one token: references alone
    ((2, 2, 2), (2, 2, 4), 5, 3, 1, 1, 3, "random"),         # window 1
    ((4, 2, 2), (4, 4, 1), 6, 3, 4, 2, 6, "partial"),        # nibble steps the matcher pairs
]

#: (simulator, design, variant, accumulators, issue window): Icarus runs every
#: configuration; Verilator, whose builds take a minute each, both PEs, the
#: matcher, the channel window and the baseline.
RUNS = [("icarus", "kaleido", "full", 3, 0), ("icarus", "kaleido", "pe", 4, 0), ("icarus", "baseline", "pe", 3, 0),
        ("icarus", "kaleido", "pe", 3, 0), ("icarus", "kaleido", "full", 4, 0), ("icarus", "kaleido", "full", 3, 4),
        ("verilator", "kaleido", "full", 3, 0), ("verilator", "kaleido", "pe", 4, 0),
        ("verilator", "kaleido", "full", 4, 3), ("verilator", "baseline", "pe", 3, 0)]


def _case(partition, grid, F, P, window, accumulators, issue_window=0):
    return Config(partition=partition, grid=grid, rows=3, cols=2, max_channels=32, full_bits=F,
                  partial_bits=P, window=window, accumulators=accumulators, issue_window=issue_window)


def _activations(kind, cfg, heads, rng):
    q, k = operands(kind, cfg, rng)
    return np.concatenate([q, k][:heads], axis=1)


# make test: every case once on Icarus, Kaleido (with its matcher) and the baseline taking
# turns; the engine's Verilator builds are covered by the attention bench. make test-all:
# every configuration with every case.
@sweep("run, case", RUNS, CASES, ids=ident,
       keep=[((RUNS[0], RUNS[2])[i % 2], case) for i, case in enumerate(CASES)])
def test_linear_on_simulator(tmp_path, run, case, rng):
    simulator, design, variant, accumulators, issue_window = run
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    build_cfg = _case((8, 8, 8), (1, 1, 1), 5, 3, 4, accumulators, issue_window)
    top = blocks.engine_top(design)
    build = runner.build(top, blocks.engine_verilog(build_cfg, design, WORDS, WORDS, variant == "full"), simulator)
    n, (partition, grid, F, P, window, heads, outputs, kind) = CASES.index(case), case
    cfg = _case(partition, grid, F, P, window, accumulators, issue_window).with_(variant=variant)
    x = _activations(kind, cfg, heads, rng)
    w = rng.integers(-128, 128, (x.shape[1], outputs), dtype=np.int8)
    schedules = ["pairs"] if design == "kaleido" else ["dense"]
    if design == "kaleido" and kaleido_linear_cycles(x, outputs, cfg).schedule == "dense":
        schedules.append("auto")
    _, xt = reference.window(x.astype(int).tolist(), grid, partition, F, P, window)
    want = (np.array(xt, np.int64) if design == "kaleido" else x.astype(np.int64)) @ w.astype(np.int64)
    for schedule in schedules:
        work = tmp_path / f"case{n}-{schedule}"
        work.mkdir()
        np.save(work / "x.npy", x)
        np.save(work / "w.npy", w)
        result = runner.test(top, simulator, build, "tb.linear_tb", work, linear_config(cfg, heads),
                             env={"KALEIDO_WORK": str(work), "KALEIDO_DESIGN": design,
                                  "KALEIDO_SCHEDULE": schedule,
                                  "KALEIDO_HEAD_CONFIG": cfg.to_json()})
        label = (f"{design} {variant} acc{accumulators} W{issue_window} {schedule} case {n} {partition} {grid} "
                 f"w{window} {kind}")
        assert result.ok, label + "\n" + runner.failure_text(result)
        # The bench checked itself; check what it wrote, independently.
        rtl = json.loads((work / "rtl.json").read_text())
        np.testing.assert_array_equal(np.load(work / "out.npy"), want, err_msg=label)
        base = baseline_linear_cycles(x.shape[0], outputs, cfg, heads)
        model = (kaleido_linear_cycles(x, outputs, cfg, schedule) if design == "kaleido"
                 else base)
        assert (rtl["cycles"], rtl["lane_work"]) == (model.engine_cycles, model.lane_work), label
        assert rtl["cycles"] <= base.cycles or schedule == "pairs", label
        if design == "kaleido" and schedule == "pairs" and accumulators == 4:
            assert rtl["lane_work"] == 2 * rtl["oracle_macs"], label
