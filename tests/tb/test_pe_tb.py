"""The emitted PE Verilog under cocotb, on both simulators."""

import pytest

from golden import Config
from sim import runner


@pytest.mark.parametrize("simulator", runner.SIMULATORS)
@pytest.mark.parametrize("block, testcase", [("pe", "augmented_pe_random"),
                                             ("baseline-pe", "baseline_pe_random")])
def test_pe_verilog(tmp_path, simulator, block, testcase, seed):
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    # A narrow accumulator so that wrap-around is exercised too.
    cfg = Config(partition=(2, 1, 1))
    result = runner.run(block, cfg, simulator, "tb.pe_tb", tmp_path, testcase=testcase,
                        env={"KALEIDO_CYCLES": "3000"}, seed=seed)
    assert result.ok, f"seed={seed}\n" + runner.failure_text(result)
