"""The action benches: what toggles is what the action moves, named as the netlist names it."""

import re

import pytest

from golden import Config
from tb.actions import ACTIONS, EXACT_ACTIONS, UNITS, actions, activity, vcd_rates

CFG = Config(partition=(2, 1, 1))


def moving(rates):
    return {n for n, (r, _) in rates.items() if r > 0}


def test_idle_moves_nothing():
    for block in ACTIONS:
        act = activity(block, CFG, "idle", cycles=32)
        assert not moving(act["inputs"])
        if block in UNITS:
            # A unit's pipeline may settle once from reset (the softmax unit's
            # exponent of a held 0), and then holds still.
            assert all(rate <= 1 / 32 for rate, _ in act["flops"].values())
        else:
            assert not moving(act["flops"])


def test_a_busy_softmax_unit_runs_every_phase():
    act = activity("softmax", CFG.with_(grid=(1, 2, 5)), "busy", cycles=64)
    assert act["cycles"] >= 2 * 3 * 3                       # two rows of three passes of 3 beats
    ins = moving(act["inputs"])
    assert ins and all(n.startswith("scores__payload") for n in ins)
    names = moving(act["flops"])
    # Every phase's registers move: the max, the sum, the divider's reciprocal, the exponents.
    assert any(n.startswith("top_") for n in names) and any(n.startswith("total_") for n in names)
    assert any(n.startswith("e3_") for n in names), sorted(names)[:20]
    assert any(n.startswith("recip") for n in names), sorted(names)[:20]


def test_full_mac_moves_operands_not_control():
    act = activity("pe", CFG, "full_mac", cycles=64)
    ins = moving(act["inputs"])
    a0 = {f"row_in_{i}_" for i in range(8)}                  # a0 is the row's first byte
    b = {f"col_in_{i}_" for i in range(8)}
    assert ins == a0 | b
    flops = moving(act["flops"])
    assert a0 <= {n.replace("row_out", "row_in") for n in flops}
    assert any(n.startswith("r0_") for n in flops) and not any(n.startswith("r2_") for n in flops)


def test_drain_shift_moves_only_the_chain():
    act = activity("pe", CFG, "drain_shift", cycles=64)
    assert moving(act["inputs"]) <= {n for n in act["inputs"] if n.startswith("drain_in")}
    assert moving(act["flops"]) <= {n for n in act["flops"] if n.startswith("drain_out")}


def test_names_are_the_netlists():
    act = activity("baseline-pe", CFG, "full_mac", cycles=8)
    names = set(act["inputs"]) | set(act["flops"])
    assert all(re.match(r"^[a-z_0-9]+$", n) for n in names)
    assert {"drain_in__valid", "drain_out__valid", "acc_0_"} <= names


def test_unknown_action():
    with pytest.raises(ValueError, match="has no action"):
        activity("baseline-pe", CFG, "nibble_mac")


def test_exact_pe_actions_reach_its_own_parts():
    exact = CFG.with_(accumulators=4)
    assert actions("pe", exact) == ACTIONS["pe"] + EXACT_ACTIONS
    assert actions("pe", CFG) == ACTIONS["pe"] and actions("baseline-pe", exact) == ACTIONS["baseline-pe"]
    regs = lambda act: {n.split("_")[0] for n in moving(act["flops"]) if re.match(r"r\d_", n)}
    # Pass A with sq = sk = 1: every register collects, R2 and R3 from the taps.
    assert regs(activity("pe", exact, "tapped_mac", cycles=64)) == {"r0", "r1", "r2", "r3"}
    # A ROW step adds one lane into R0 alone.
    assert regs(activity("pe", exact, "row_nibble", cycles=64)) == {"r0"}
    with pytest.raises(ValueError, match="has no action"):
        activity("pe", CFG, "row_nibble")


DISPATCH = Config(partition=(4, 2, 2), rows=2, cols=2, queue_depth=8, clusters=2, cluster_capacity=4)


@pytest.mark.parametrize("block, registers", [("scheduler", ("queue0_", "lfsr_", "pivot0_")),
                                              ("matcher", ("states0_", "states3_")),
                                              ("channel-window", ("states0_", "states3_"))])
def test_a_busy_dispatcher_moves_its_registers(block, registers):
    busy = activity(block, DISPATCH, "busy", cycles=128)
    idle = activity(block, DISPATCH, "idle", cycles=32)
    assert not moving(idle["inputs"]) and not moving(idle["flops"])
    flops = moving(busy["flops"])
    for name in registers:                       # internal registers, read from the VCD
        assert any(n.startswith(name) for n in flops), (name, sorted(flops)[:20])
    assert moving(busy["inputs"]) and set(busy["inputs"]).isdisjoint(busy["flops"])


def test_window_pe_full_mac_moves_its_inner_registers_and_the_wide_ports():
    cfg = Config(partition=(4, 2, 2), issue_window=4)
    busy = activity("window-pe", cfg, "full_mac", cycles=64)
    idle = activity("window-pe", cfg, "idle", cycles=32)
    assert not moving(idle["flops"])
    flops = moving(busy["flops"])
    assert any(n.startswith("r0_") for n in flops), sorted(flops)[:20]
    # The broadcast bytes past the step's two (row_in bits 16-31: a[2], a[3]) move too:
    # other channels of the window pass by.
    assert {f"row_in_{i}_" for i in range(16, 32)} & moving(busy["inputs"])


def test_vcd_rates_count_toggles_and_time_at_one(tmp_path):
    vcd = tmp_path / "t.vcd"
    vcd.write_text("""$timescale 1 ns $end
$scope module bench $end
$scope module top $end
$var wire 1 ! en $end
$var wire 2 " v [1:0] $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
0!
b00 "
#10
1!
b01 "
#20
b11 "
#30
0!
b10 "
#40
""")
    r = vcd_rates(vcd, cycles=4)
    assert r["en"] == (0.5, 0.5)                              # up at 10, down at 30
    assert r["v_0_"] == (0.5, 0.5) and r["v_1_"] == (0.25, 0.5)   # 00, 01, 11, 10
