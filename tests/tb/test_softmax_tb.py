"""The emitted softmax unit under cocotb, on both simulators: a row shorter
than its lanes, a row that ends mid-beat, and one lane."""

import pytest

from golden import Config
from sim import runner


@pytest.mark.parametrize("simulator", runner.SIMULATORS)
def test_softmax_verilog(tmp_path, simulator, seed):
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    for grid, lanes in (((1, 1, 3), 4), ((1, 2, 5), 4), ((1, 2, 2), 1)):
        cfg = Config(partition=(4, 2, 2), grid=grid, vector_lanes=lanes)
        work = tmp_path / f"{'x'.join(map(str, grid))}-{lanes}"
        result = runner.run("softmax", cfg, simulator, "tb.softmax_tb", work, seed=seed)
        assert result.ok, f"grid {grid} lanes {lanes}, seed={seed}\n" + runner.failure_text(result)
