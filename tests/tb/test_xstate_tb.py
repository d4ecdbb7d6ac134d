"""Every block under Icarus (4-state) with its inputs held at all zeros and at
all ones: no output is ever X or Z. And the check can fail: a PE whose registers
lose their initial values, and are never reset, is caught."""

import json
import re

import pytest

from golden import Config
from hw import blocks
from sim.rtl import runner

CFG = Config(partition=(4, 2, 2), grid=(1, 2, 5))


def _run(tmp_path, block, pattern, text=None, reset=True):
    why = runner.missing("icarus")
    if why:
        pytest.skip(why)
    top = blocks.top_name(block)
    text = text if text is not None else blocks.verilog(block, CFG)
    ports = runner.verilog_ports(text, top)
    assert any(d == "output" for d, _, _ in ports), f"no outputs parsed for {top}"
    return runner.run(block, CFG, "icarus", "tb.xstate_tb", tmp_path, verilog_text=text,
                      env={"KALEIDO_PORTS": json.dumps(ports), "KALEIDO_PATTERN": pattern,
                           "KALEIDO_RESET": str(int(reset))})


@pytest.mark.parametrize("pattern", ["zeros", "ones"])
@pytest.mark.parametrize("block", blocks.UNITS)
def test_outputs_resolve_under_icarus(tmp_path, block, pattern):
    result = _run(tmp_path, block, pattern)
    assert result.ok, runner.failure_text(result)


def test_a_register_without_a_value_is_caught(tmp_path):
    # Drop every register's initial value and never reset: the accumulators,
    # which only ever add to themselves, stay X, and the bench must say so.
    text = re.sub(r"^(\s*reg\b[^=;]*?)\s*=\s*[^;]+;", r"\1 ;", blocks.verilog("pe", CFG), flags=re.M)
    result = _run(tmp_path, "pe", "zeros", text, reset=False)
    assert not result.ok
    assert "X or Z" in runner.failure_text(result, 200)
