"""The clock gates the mapping puts in (synth/clock_gate.v): they are in the netlist,
they stop the clocks of registers that hold, and the energy method sees it."""

import shutil

import pytest

from golden import Config
from hw import blocks
from synth import flow
from synth.actions import stimulus
from synth.flow import default_liberty
from synth.gatesim import cell_models, parse, simulate
from synth.kits import kit
from synth.power import energy_per_action
from synth.timing import block_netlist

pytestmark = pytest.mark.skipif(
    shutil.which("sta") is None or shutil.which("iverilog") is None or default_liberty() is None,
    reason="needs OpenSTA (sta, for the clock), Icarus and the default liberty and its cell models (make setup)")

# The one-stage PEs, whose gated registers are counted below.
CFG = Config(partition=(2, 1, 1), pe_stages=1)


def _gated_clocks(net, cells):
    # A clock gate is the kit's latch (the enable) and its AND of that with the
    # clock (buffered, maybe): the AND's output is a gated clock.
    latch, and_ = cells.gate_latch[0], cells.gate_and[0]
    enables = {net.root(pins["Q"]) for kind, _, pins in net.cells if kind == latch}
    return {net.root(n) for kind, _, pins in net.cells if kind == and_
            and enables & {net.root(n) for p, n in pins.items() if p not in cells.outputs}
            for p, n in pins.items() if p in cells.outputs}


@pytest.mark.parametrize("block, gates", [("pe", 7), ("baseline-pe", 2)])
def test_registers_that_hold_have_their_clocks_gated(block, gates):
    """The Kaleido PE (one stage) gates R0, R1 with R2, its drain link, and what
    it forwards: the operands of a step, of a second step, the flags and the
    control; the baseline its accumulator and its drain link. In an idle cycle
    no gated clock moves."""
    lib = default_liberty()
    cells = kit(lib)
    text = block_netlist(block, CFG, lib)
    net = parse(text, blocks.top_name(block))
    assert sum(kind == cells.gate_latch[0] for kind, _, _ in net.cells) == gates
    gated = _gated_clocks(net, cells)
    assert len(gated) == gates
    run = stimulus(block, CFG, "idle", 16)
    act = simulate(text, blocks.top_name(block), run["inputs"], cell_models(lib))
    moved = {net.root(n) for event in act.events for n in event}
    assert net.root("clk") in moved and not (gated & moved)


def test_the_gates_save_what_the_energy_method_counts(tmp_path, monkeypatch):
    """The same PE mapped without clock gates (none is worth its latch) costs more
    in an idle cycle, where only the clock moves."""
    lib = default_liberty()
    monkeypatch.setattr("synth.power.CACHE", tmp_path)
    gated = energy_per_action("pe", CFG, lib, cycles=32)["energy_pj"]
    monkeypatch.setattr(flow, "CLOCK_GATE_MIN_FLOPS", 10 ** 6)
    plain = energy_per_action("pe", CFG, lib, cycles=32)["energy_pj"]
    assert gated["idle"] < 0.7 * plain["idle"]
    assert gated["full_mac"] < plain["full_mac"]
