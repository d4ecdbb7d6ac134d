"""OpenSTA on Yosys netlists: the critical path, its slack, and the registers."""

import re
import shutil

import pytest

from golden import Config
from hw import blocks
from hw.core.pe import col_layout, row_layout
from synth.flow import default_liberty, gate_netlist
from synth.sta import BLOCK_IO_SHARE, _other_slacks, flop_outputs, timing

pytestmark = pytest.mark.skipif(shutil.which("sta") is None or default_liberty() is None,
                                reason="needs OpenSTA (sta) and the default liberty (make setup)")
# The one-stage PE: its registers are named below, and it multiplies what arrives.
CFG = Config(partition=(2, 1, 1), pe_stages=1)


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
    netlist, lib = pe
    flops = flop_outputs(netlist, lib)
    # row_out, col_out, the drain chain and R0..R2 are the PE's registers, each an output bit.
    acc = CFG.pe_acc_bits
    assert len(flops) == row_layout.size + col_layout.size + acc + 1 + 3 * acc
    assert {"r0_0_", "drain_out__valid", "row_out_27_"} <= set(flops)


def test_a_netlist_mapped_for_a_clock_is_faster(pe):
    """Mapped for a clock (abc -D with a driving cell and a load) the PE sizes and
    buffers its paths: a shorter critical path than the area-oriented mapping."""
    _, lib = pe
    text = blocks.verilog("pe", CFG)
    area = timing(gate_netlist(text, "kaleido_pe", lib), "kaleido_pe", lib, period_ns=5.0)
    fast = timing(gate_netlist(text, "kaleido_pe", lib, clock_mhz=200.0), "kaleido_pe", lib, period_ns=5.0)
    assert fast["critical_path_ns"] < area["critical_path_ns"]


def test_a_boundary_lengthens_the_paths_through_the_ports(pe):
    """A block timed alone gives a share of the period to its wiring: a path from an
    input (the one-stage PE multiplies what arrives) then needs more of the period."""
    netlist, lib = pe
    bare = timing(netlist, "kaleido_pe", lib, period_ns=10.0)
    wired = timing(netlist, "kaleido_pe", lib, period_ns=10.0, io_share=0.2)
    assert bare["io_ns"] == 0 and wired["io_ns"] == pytest.approx(2.0)
    assert wired["critical_path_ns"] > bare["critical_path_ns"] + 1.0


def test_hold_and_the_clock_gates_checks_are_reported(pe):
    netlist, lib = pe
    # With inputs arriving where every block's timing has them (a tenth of the
    # period after the edge), every path outlasts its hold time. (At the edge
    # itself an operand's register, on a gated clock with its gate's slower
    # edge, would need more: its hold time grows with its clock's transition.)
    t = timing(netlist, "kaleido_pe", lib, period_ns=5.0, io_share=BLOCK_IO_SHARE)
    assert 0 < t["hold_slack_ns"] < 1.0
    # The PE's accumulators are gated: the gates' own checks are there, and met.
    assert t["gating_setup_slack_ns"] > 0 and t["gating_hold_slack_ns"] > 0


def _path(group: str, kind: str, slack: float) -> str:
    verdict = "MET" if slack >= 0 else "VIOLATED"
    return (f"Startpoint: a\nEndpoint: b\nPath Group: {group}\nPath Type: {kind}\n"
            f"   {slack:.4f}   slack ({verdict})\n")


def test_the_worst_of_each_check_is_taken():
    """Hold, gating setup and gating hold each take their worst path; a violated one
    comes back negative, and a block without clock gates has no gating figures."""
    text = (_path("clk", "min", 0.2) + _path("clk", "min", -0.05) + _path("**clock_gating_default**", "min", 0.1)
            + _path("clk", "max", -3.0) + _path("**clock_gating_default**", "max", 2.5))
    assert _other_slacks(text) == {"hold_slack_ns": -0.05, "gating_setup_slack_ns": 2.5,
                                   "gating_hold_slack_ns": 0.1}
    assert _other_slacks(_path("clk", "min", 0.3)) == {"hold_slack_ns": 0.3, "gating_setup_slack_ns": None,
                                                       "gating_hold_slack_ns": None}
