"""The emitted PE Verilog under cocotb, on both simulators."""

import pytest

from golden import Config
from sim.rtl import runner
from tests.sweep import sweep

PES = [("pe", "augmented_pe_random", 3, 1), ("pe", "augmented_pe_random", 4, 1),
       ("pe", "augmented_pe_random", 3, 2), ("pe", "augmented_pe_random", 4, 2),
       ("pe", "augmented_pe_random", 3, 3), ("pe", "augmented_pe_random", 4, 3),
       ("pe", "augmented_pe_random", 3, 4), ("pe", "augmented_pe_random", 4, 4),
       ("baseline-pe", "baseline_pe_random", 3, 1), ("baseline-pe", "baseline_pe_random", 3, 2),
       ("baseline-pe", "baseline_pe_random", 3, 3), ("baseline-pe", "baseline_pe_random", 3, 4)]


# make test: both PEs on both simulators, both register counts and every depth among them.
@sweep("simulator, pe", runner.SIMULATORS, PES,
       keep=[("icarus", PES[0]), ("verilator", PES[3]), ("icarus", PES[5]), ("verilator", PES[4]),
             ("icarus", PES[6]), ("verilator", PES[7]), ("icarus", PES[9]), ("verilator", PES[10]),
             ("verilator", PES[11])])
def test_pe_verilog(tmp_path, simulator, pe, seed):
    block, testcase, accumulators, stages = pe
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    # A narrow accumulator so that wrap-around is exercised too.
    cfg = Config(partition=(2, 1, 1), accumulators=accumulators, pe_stages=stages)
    result = runner.run(block, cfg, simulator, "tb.pe_tb", tmp_path, testcase=testcase,
                        env={"KALEIDO_CYCLES": "3000"}, seed=seed)
    assert result.ok, f"seed={seed}\n" + runner.failure_text(result)
