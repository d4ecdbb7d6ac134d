"""The emitted softmax unit under cocotb, on both simulators: a row shorter
than its lanes, a row that ends mid-beat, and one lane."""

import pytest

from golden import Config
from sim.rtl import runner
from tests.sweep import sweep

SHAPES = [((1, 2, 5), 4), ((1, 1, 3), 4), ((1, 2, 2), 1)]     # (grid, lanes)


# make test: every shape on Icarus, the first (a row that ends mid-beat) on Verilator
# (each shape is its own build, a minute of Verilator's compile); make test-all: all.
@sweep("simulator, shape", runner.SIMULATORS, SHAPES,
       keep=[("icarus", s) for s in SHAPES] + [("verilator", SHAPES[0])])
def test_softmax_verilog(tmp_path, simulator, shape, seed):
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    grid, lanes = shape
    cfg = Config(partition=(4, 2, 2), grid=grid, vector_lanes=lanes)
    result = runner.run("softmax", cfg, simulator, "tb.softmax_tb", tmp_path, seed=seed)
    assert result.ok, f"grid {grid} lanes {lanes}, seed={seed}\n" + runner.failure_text(result)
