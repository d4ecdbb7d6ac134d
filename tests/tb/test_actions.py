"""The action benches: what toggles is what the action moves, named as the netlist names it."""

import re

import pytest

from golden import Config
from tb.actions import ACTIONS, activity

CFG = Config(partition=(2, 1, 1))


def moving(rates):
    return {n for n, (r, _) in rates.items() if r > 0}


def test_idle_moves_nothing():
    for block in ACTIONS:
        act = activity(block, CFG, "idle", cycles=32)
        assert not moving(act["inputs"]) and not moving(act["flops"])


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
