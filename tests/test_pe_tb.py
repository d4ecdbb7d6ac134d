"""The emitted PE Verilog under cocotb, on both simulators."""

import os

import pytest

from golden import Config
from sim import runner


@pytest.mark.parametrize("simulator", runner.SIMULATORS)
@pytest.mark.parametrize("block, testcase", [("pe", "augmented_pe_random"),
                                             ("baseline-pe", "baseline_pe_random")])
def test_pe_verilog(tmp_path, simulator, block, testcase):
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    seed = int(os.environ.get("KALEIDO_SEED", "7"))
    print(f"seed={seed}")
    # A narrow accumulator so that wrap-around is exercised too.
    cfg = Config(partition=(2, 1, 1))
    result = runner.run(block, cfg, simulator, "tb.pe_tb", tmp_path, testcase=testcase,
                        env={"KALEIDO_SEED": str(seed), "KALEIDO_CYCLES": "3000"})
    assert result.ok, f"seed={seed}\n" + runner.failure_text(result)
