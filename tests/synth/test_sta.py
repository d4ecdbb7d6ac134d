"""OpenSTA on Yosys netlists: the critical path, and power that follows activity."""

import re
import shutil

import pytest

from golden import Config
from hw import blocks
from hw.pe import col_layout, row_layout
from synth.flow import default_liberty, gate_netlist
from synth.sta import flop_outputs, power, tie_constants, timing

pytestmark = pytest.mark.skipif(shutil.which("sta") is None or default_liberty() is None,
                                reason="needs OpenSTA (sta) and the OSU018 liberty (make setup)")
CFG = Config(partition=(2, 1, 1))


@pytest.fixture(scope="module")
def pe():
    lib = default_liberty()
    return gate_netlist(blocks.verilog("pe", CFG), "kaleido_pe", lib), lib


def test_timing_names_a_path_and_a_clock(pe):
    netlist, lib = pe
    t = timing(netlist, "kaleido_pe", lib, period_ns=20.0)
    assert 0 < t["critical_path_ns"] < 20 and t["fmax_mhz"] == pytest.approx(1000 / t["critical_path_ns"])
    assert t["slack_ns"] == pytest.approx(20.0 - t["critical_path_ns"])
    # The same path at another period: the same delay, a different slack.
    again = timing(netlist, "kaleido_pe", lib, period_ns=10.0)
    assert again["critical_path_ns"] == pytest.approx(t["critical_path_ns"], abs=1e-3)
    # The endpoint is a register, named by the bit it holds.
    assert re.match(r"\w+_\d+_ \(_\d+_\)$", t["endpoint"]), t["endpoint"]


def test_every_register_is_found(pe):
    netlist, _ = pe
    flops = flop_outputs(netlist)
    # row_out, col_out, the drain chain and R0..R2 are the PE's registers, each an output bit.
    acc = CFG.pe_acc_bits
    assert len(flops) == row_layout.size + col_layout.size + acc + 1 + 3 * acc
    assert {"r0_0_", "drain_out__valid", "row_out_27_"} <= set(flops)


def test_tied_nets_feed_constants(pe):
    netlist, _ = pe
    tied = tie_constants(netlist, {"col_in_3_", "r0_0_"})
    assert not re.search(r"\.\w+\(col_in_3_\)", tied)
    assert re.search(r"\.Q\(r0_0_\)", tied) and not re.search(r"\.(?!Q)\w+\(r0_0_\)", tied)


def test_power_grows_with_activity(pe):
    netlist, lib = pe
    still = power(netlist, "kaleido_pe", lib, 10.0)
    nets = {"col_in_0_", "col_in_1_", "col_in_2_", "col_in_3_"}
    slow = power(netlist, "kaleido_pe", lib, 10.0, tied=nets, tied_activity=(0.1, 0.5))
    fast = power(netlist, "kaleido_pe", lib, 10.0, tied=nets, tied_activity=(0.5, 0.5))
    assert still["total_w"] > 0 and still["leakage_w"] > 0          # the clock alone costs
    assert still["total_w"] < slow["total_w"] < fast["total_w"]


GATE = """module gate(clk, a, s, y);
input clk; input a; input s; output y; wire w;
AND2X1 g0 (.A(a), .B(s), .Y(w));
INVX1 g1 (.A(w), .Y(y));
endmodule
"""


def test_held_high_nets_enable_the_logic_they_feed():
    """A source held at 1 reads as 1: an enable held high lets a toggling operand
    through, where a still source (read as 0) keeps the gate quiet."""
    lib = default_liberty()
    tied = tie_constants(GATE, {"a"}, {"s"}, lib)
    assert ".B(kaleido_held_high)" in tied and ".A(1'b0)" in tied and tied.count("kaleido_tie_high") == 1
    off = power(GATE, "gate", lib, 10.0, tied={"a"}, tied_activity=(0.5, 0.5))
    on = power(GATE, "gate", lib, 10.0, tied={"a"}, tied_activity=(0.5, 0.5), held_high={"s"})
    assert off["switching_w"] == 0 < on["switching_w"]
