"""The emitted matcher Verilog under cocotb, on both simulators, at every
lookahead depth up to the default."""

import pytest

from golden import Config
from sim import runner


@pytest.mark.parametrize("simulator", runner.SIMULATORS)
def test_matcher_verilog(tmp_path, simulator, seed):
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    for lookahead in range(1, Config().lookahead + 1):
        cfg = Config(partition=(12, 3, 3), cols=3, lookahead=lookahead)
        result = runner.run("matcher", cfg, simulator, "tb.matcher_tb", tmp_path / f"L{lookahead}",
                            seed=seed)
        assert result.ok, f"lookahead {lookahead}, seed={seed}\n" + runner.failure_text(result)
