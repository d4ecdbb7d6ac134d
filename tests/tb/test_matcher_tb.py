"""The emitted matcher Verilog under cocotb, on both simulators, at every
lookahead depth up to the default."""

import pytest

from golden import Config
from sim.rtl import runner
from tests.sweep import sweep


# make test: the shallowest and the default window on Icarus, the default on Verilator.
@sweep("simulator, lookahead", runner.SIMULATORS, range(1, Config().lookahead + 1),
       keep=[("icarus", 1), ("icarus", Config().lookahead), ("verilator", Config().lookahead)])
def test_matcher_verilog(tmp_path, simulator, lookahead, seed):
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    cfg = Config(partition=(12, 3, 3), cols=3, lookahead=lookahead)
    result = runner.run("matcher", cfg, simulator, "tb.matcher_tb", tmp_path, seed=seed)
    assert result.ok, f"lookahead {lookahead}, seed={seed}\n" + runner.failure_text(result)
