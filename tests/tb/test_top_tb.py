"""The system top under cocotb on both simulators: a whole head and a linear layer
from memory through the host driver, bit for bit against golden, every engine
run's cycles and lane work equal to the cycle model, with random stalls on every
channel of the bus; and every bad setting answered by its error code."""

import numpy as np
import pytest

from golden import Config
from hw import blocks
from hw.host.host_driver import head_images, top_size
from sim.rtl import runner
from sim.rtl.system import run_head, run_linear
from tests.adversarial import operands
from tests.sweep import sweep

#: Two design points: the full variant (scheduler order, matcher) on a 3 x 2
#: array, and the bare PE with four accumulators on 2 x 3, on nibble-heavy operands.
POINTS = {
    "full": (Config(partition=(3, 2, 3), grid=(2, 2, 4), rows=3, cols=2, max_channels=8, full_bits=5,
                    partial_bits=3), "correlated"),
    "pe": (Config(partition=(4, 2, 2), grid=(2, 2, 4), rows=2, cols=3, max_channels=8, full_bits=5,
                  partial_bits=3, accumulators=4, variant="pe"), "partial"),
}
RUNS = [("icarus", "kaleido", "full"), ("verilator", "kaleido", "full"), ("icarus", "baseline", "full"),
        ("verilator", "baseline", "full"), ("icarus", "kaleido", "pe"), ("verilator", "kaleido", "pe")]
#: make test: each design point and design once, Verilator on the default variant, the
#: pairs schedule alone; make test-all: every run, each Kaleido one on both schedules.
KEEP = [RUNS[1], RUNS[2], RUNS[4]]


def _skip(simulator):
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)


def _head(cfg, kind, rng):
    q, k = operands(kind, cfg, rng)
    v, _ = operands(kind, cfg, rng)
    return q, k, v


@sweep("simulator, design, point", RUNS, keep=KEEP)
def test_head_from_memory(request, tmp_path, simulator, design, point, rng, seed):
    _skip(simulator)
    cfg, kind = POINTS[point]
    q, k, v = _head(cfg, kind, rng)
    every = request.node.get_closest_marker("slow") is not None
    schedules = (["pairs", "auto"] if every else ["pairs"]) if design == "kaleido" else ["auto"]
    for schedule in schedules:
        out = run_head(cfg, q, k, v, 0.02, design, simulator, tmp_path / schedule, seed=seed, busy=0.3,
                       schedule=schedule)
        # The bench checked results and cycles; check what the counters say of the bus.
        qk = out["runs"][0]
        size = out["size"]
        assert qk["read_beats"] > 0 and qk["write_beats"] > 0 and qk["run_cycles"] > qk["engine_cycles"]
        assert len(out["runs"]) >= 3
        if design == "kaleido":
            assert out["qk_schedule"] == ("pairs" if schedule == "pairs" else out["qk_schedule"])
        assert size["out_rows"] >= cfg.tokens


@sweep("simulator, design", [("icarus", "kaleido"), ("verilator", "kaleido"), ("icarus", "baseline")],
       keep=[("icarus", "kaleido"), ("icarus", "baseline")])
def test_linear_from_memory(tmp_path, simulator, design, rng, seed):
    _skip(simulator)
    cfg = Config(partition=(2, 1, 1), grid=(2, 3, 4), rows=3, cols=2, max_channels=32, full_bits=5,
                 partial_bits=3, window=4)
    q, k = operands("correlated", cfg, rng)
    x = np.concatenate([q, k], axis=1)
    w = rng.integers(-128, 128, (x.shape[1], 5), dtype=np.int8)
    out = run_linear(cfg, x, w, design, simulator, tmp_path, seed=seed, busy=0.3)
    assert out["runs"][0]["engine_cycles"] > 0


@sweep("simulator", ["icarus", "verilator"])
def test_bad_settings_answered(tmp_path, simulator, rng, seed):
    _skip(simulator)
    cfg, kind = POINTS["full"]
    q, k, v = _head(cfg, kind, rng)
    size = top_size(head_images(q, k, v, cfg, "kaleido", 0.02), cfg, cfg.tokens)
    size["out_rows"] += 8           # room for a row more than the engine drains
    work = tmp_path / "w"
    work.mkdir()
    np.save(work / "q.npy", q)
    np.save(work / "k.npy", k)
    (work / "job.json").write_text('{"design": "kaleido"}')
    result = runner.run("top", cfg, simulator, "tb.top_tb", work, testcase="bad_input",
                        env={"KALEIDO_WORK": str(work)}, verilog_text=blocks.top_verilog(cfg, "kaleido", **size),
                        top=blocks.system_top("kaleido"), seed=seed)
    assert result.ok, runner.failure_text(result)
